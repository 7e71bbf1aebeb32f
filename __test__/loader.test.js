'use strict';
// loader.js and js/fallback.js: the fallback has the native binding's surface
// and answers every conformance vector as the binding does; the loader picks
// the local build, honours CONDENSE_NATIVE_FORCE_FALLBACK, and warns once,
// naming the platform and what it tried, when it falls back.
// Runs under `node --test` and `bun test`.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const fallback = require('../js/fallback.js');
const { loadVectors } = require('./helpers/vectors');
const { localNative } = require('./helpers/local-native.js');

const ROOT = path.join(__dirname, '..');
const LOADER = path.join(ROOT, 'loader.js');
const WARNING = 'CONDENSE_NATIVE_FALLBACK';

// The native binding as the loader finds it, or null where no build is here.
const native = localNative();
const noNative = native ? false : 'no native build loads here (run npm run build)';

const vectors = loadVectors();

// Runs `code` in a fresh process of this runtime (node or bun); returns its stdout JSON
// and the fallback warnings it printed.
function child(code, { cwd = ROOT, env = {} } = {}) {
  const clean = { ...process.env };
  delete clean.CONDENSE_NATIVE_FORCE_FALLBACK;
  const r = spawnSync(process.execPath, ['-e', code], { cwd, env: { ...clean, ...env }, encoding: 'utf8' });
  assert.equal(r.status, 0, `child failed: ${r.stderr}`);
  return {
    out: JSON.parse(r.stdout.trim().split('\n').pop()),
    warnings: r.stderr.split('\n').filter((l) => l.includes(`[${WARNING}]`)),
  };
}

function comparable(result) {
  return {
    ...result,
    messages: result.messages === null ? null : JSON.stringify(JSON.parse(result.messages.toString('utf8'))),
  };
}

function attempt(fn) {
  try {
    return { value: fn() };
  } catch (error) {
    return { error };
  }
}

function json(value) {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

// Native exports the fallback leaves out on purpose: the array APIs check
// for them and run the pure-JS oracles directly when they are absent. A new
// native export must either get a fallback or be listed here. Session loading
// and the replay have no fallback: js/sessionfile.js and js/replay.js throw
// ERR_CONDENSE_UNSUPPORTED without them. checkGateSettings serves the replay's
// gate (gateSettings throws ERR_CONDENSE_UNSUPPORTED without it), and
// checkPiSettings the CLI's check of pi's settings before a replay (skipped
// without it: the replay itself would name them); NativeGate is pi's gate,
// which the extension turns on only with the native binding.
const NATIVE_ONLY = [
  'checkGateSettings',
  'checkPiSettings',
  'NativeEngine',
  'NativeGate',
  'loadSessionAsync',
  'loadSessionBytes',
  'loadSessionFile',
  'NativeReplayProgress',
  'replayAsync',
  'replayBytes',
  'replayFile',
  'tuneAsync',
  'tuneFiles',
];

test('the fallback exports what the native binding exports', { skip: noNative }, () => {
  const nativeNames = Object.keys(native).filter((k) => !['backend', 'target', 'libc', 'loadErrors', 'fallbackReason'].includes(k));
  const expected = nativeNames.filter((k) => !NATIVE_ONLY.includes(k));
  assert.deepEqual(Object.keys(fallback).sort(), expected.sort());
  for (const name of expected) assert.equal(typeof fallback[name], typeof native[name], name);
  const methods = (C) => Object.getOwnPropertyNames(C.prototype).filter((m) => m !== 'constructor').sort();
  assert.deepEqual(methods(fallback.NativePruner), methods(native.NativePruner));
});

test('the fallback meets every conformance vector', () => {
  let exact = 0;
  for (const c of vectors) {
    if (c.group === 'boundary') {
      assert.equal(fallback.computeThinkingBoundary(c.assistantTimestamps, c.keepLastTurns, c.prev ?? null), c.expected.value, c.name);
      continue;
    }
    const bytes = Buffer.from(JSON.stringify(c.messages) ?? 'null');
    const r = attempt(() => fallback.pruneBytes(bytes, json(c.state), json(c.config), c.thinkingBoundaryTimestamp ?? null));
    if (c.expected.throws !== undefined || r.error) {
      assert.ok(r.error, `${c.name}: expected a typed error`);
      assert.match(r.error.code, /^ERR_CONDENSE_/, c.name);
      assert.ok(c.expected.throws !== undefined || c.group === 'hostile', `${c.name}: ${r.error.message}`);
      continue;
    }
    const got = comparable(r.value);
    assert.equal(got.pruned, c.expected.pruned, c.name);
    assert.equal(got.beforeChars, c.expected.beforeChars, c.name);
    assert.equal(got.afterChars, c.expected.afterChars, c.name);
    assert.equal(got.messages, c.expected.pruned ? JSON.stringify(c.expected.messages) : null, c.name);
    exact++;
  }
  assert.ok(exact > 300);
});

test('the fallback and the native binding agree on every vector, byte input included', { skip: noNative }, () => {
  for (const c of vectors) {
    if (c.group === 'boundary') {
      const args = [c.assistantTimestamps, c.keepLastTurns, c.prev ?? null];
      assert.equal(fallback.computeThinkingBoundary(...args), native.computeThinkingBoundary(...args), c.name);
      continue;
    }
    const inputs = [Buffer.from(JSON.stringify(c.messages) ?? 'null'), Buffer.from(c.rawMessages)];
    for (const bytes of inputs) {
      const args = [bytes, json(c.state), json(c.config), c.thinkingBoundaryTimestamp ?? null];
      const a = attempt(() => native.pruneBytes(...args));
      const b = attempt(() => fallback.pruneBytes(...args));
      if (a.error || b.error) {
        // A typed error from one side is acceptable only on hostile input.
        if (!(a.error && b.error)) assert.equal(c.group, 'hostile', `${c.name}: ${(a.error || b.error).message}`);
        for (const e of [a.error, b.error]) if (e) assert.match(e.code, /^ERR_CONDENSE_/, c.name);
        continue;
      }
      assert.deepEqual(comparable(b.value), comparable(a.value), c.name);
      const pn = new native.NativePruner();
      const pf = new fallback.NativePruner();
      for (const p of [pn, pf]) {
        p.setState(json(c.state));
        p.setConfig(json(c.config));
      }
      assert.deepEqual(comparable(pf.prune(bytes, args[3])), comparable(pn.prune(bytes, args[3])), `${c.name} (NativePruner)`);
    }
  }
});

test('the fallback reports bad input with the native codes', () => {
  const codes = {
    invalidJson: attempt(() => fallback.pruneBytes(Buffer.from('[1,'), null, null, null)).error.code,
    badUtf8: attempt(() => fallback.pruneBytes(Buffer.from([0x5b, 0xff, 0x5d]), null, null, null)).error.code,
    notArray: attempt(() => fallback.pruneBytes(Buffer.from('{}'), null, null, null)).error.code,
    badState: attempt(() => fallback.pruneBytes(Buffer.from('[]'), '[]', null, null)).error.code,
    badConfig: attempt(() => fallback.pruneBytes(Buffer.from('[]'), null, '1', null)).error.code,
    nanBoundary: attempt(() => fallback.pruneBytes(Buffer.from('[]'), null, null, NaN)).error.code,
  };
  assert.deepEqual(codes, {
    invalidJson: 'ERR_CONDENSE_INVALID_JSON',
    badUtf8: 'ERR_CONDENSE_INVALID_JSON',
    notArray: 'ERR_CONDENSE_NOT_ARRAY',
    badState: 'ERR_CONDENSE_INVALID_STATE',
    badConfig: 'ERR_CONDENSE_INVALID_CONFIG',
    nanBoundary: 'ERR_CONDENSE_INVALID_ARGUMENT',
  });
  const noop = fallback.pruneBytes(Buffer.from('[]'), 'null', 'null', null);
  assert.deepEqual(noop, {
    pruned: false,
    beforeChars: 0,
    afterChars: 0,
    messages: null,
    frontier: { thinkingStripBoundaryTimestamp: null, nextThinkingStripBoundaryTimestamp: null },
    stats: { stubbed: 0, purgedArgs: 0, chainDropped: 0, chainInserted: 0, finalThinkingStripped: 0, thinkingStripped: 0 },
  });
  assert.equal(fallback.sizeOf(Buffer.from('[1.0, "\\u00e9", {"a" : null}]')), JSON.stringify([1, '\u00e9', { a: null }]).length);
  assert.equal(fallback.computeThinkingBoundary([1, 2, 3], 5, null), null);
});

test('the loader loads the local build and says so', { skip: noNative }, () => {
  const { out, warnings } = child(`const l = require(${JSON.stringify(LOADER)}); console.log(JSON.stringify({ backend: l.backend, target: l.target, errors: l.loadErrors }))`);
  assert.deepEqual(warnings, []);
  assert.equal(out.backend, 'native');
  assert.equal(typeof out.target, 'string');
  assert.deepEqual(out.errors, []);
});

test('CONDENSE_NATIVE_FORCE_FALLBACK selects the fallback, with one warning', () => {
  const code = `
    const a = require(${JSON.stringify(LOADER)});
    delete require.cache[require.resolve(${JSON.stringify(LOADER)})];
    const b = require(${JSON.stringify(LOADER)});
    console.log(JSON.stringify({ backend: a.backend, again: b.backend, target: a.target, keys: Object.keys(a) }));`;
  const { out, warnings } = child(code, { env: { CONDENSE_NATIVE_FORCE_FALLBACK: '1' } });
  assert.equal(out.backend, 'js');
  assert.equal(out.again, 'js');
  assert.equal(out.target, null);
  for (const name of Object.keys(fallback)) assert.ok(out.keys.includes(name), name);
  assert.equal(warnings.length, 1, 'the warning is emitted once per process');
  assert.match(warnings[0], /CONDENSE_NATIVE_FORCE_FALLBACK is set/);
  assert.ok(warnings[0].includes(`${process.platform}-${process.arch}`), warnings[0]);
  // "0" and "false" mean off.
  for (const off of ['0', 'false']) {
    const r = child(`console.log(JSON.stringify(require(${JSON.stringify(LOADER)}).backend))`, { env: { CONDENSE_NATIVE_FORCE_FALLBACK: off } });
    assert.equal(r.out, native ? 'native' : 'js');
  }
});

test('with no binary anywhere the loader falls back and names what it tried', () => {
  // The loader and the JS implementation alone, in a directory with no
  // binary next to them and no platform package to resolve.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-native-loader-'));
  try {
    fs.copyFileSync(LOADER, path.join(dir, 'loader.js'));
    fs.cpSync(path.join(ROOT, 'js'), path.join(dir, 'js'), { recursive: true });
    const { out, warnings } = child(
      `const l = require('./loader.js'); const r = l.pruneBytes(Buffer.from('[]'), null, null, null);
       console.log(JSON.stringify({ backend: l.backend, errors: l.loadErrors, pruned: r.pruned }))`,
      { cwd: dir },
    );
    assert.equal(out.backend, 'js');
    assert.equal(out.pruned, false);
    assert.equal(warnings.length, 1);
    const supported = ['linux', 'darwin', 'win32'].includes(process.platform) && ['x64', 'arm64'].includes(process.arch);
    if (supported) {
      assert.ok(out.errors.length >= 1);
      assert.ok(out.errors.every((e) => / \(not installed\)$/.test(e)), out.errors.join('; '));
      assert.ok(warnings[0].includes('condense-native-'), warnings[0]);
      assert.ok(warnings[0].includes(`${process.platform}-${process.arch}`), warnings[0]);
    } else {
      assert.ok(warnings[0].includes('no native binary is published'), warnings[0]);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a file that is not a usable binary is reported and skipped', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-native-loader-'));
  try {
    fs.copyFileSync(LOADER, path.join(dir, 'loader.js'));
    fs.cpSync(path.join(ROOT, 'js'), path.join(dir, 'js'), { recursive: true });
    // A local "build" for every target this platform could use: garbage bytes.
    const { out: targets } = child(`console.log(JSON.stringify(require('./loader.js').loadErrors))`, { cwd: dir });
    const names = targets.map((e) => e.replace(/^condense-native-(\S+) .*$/, '$1'));
    for (const t of names) fs.writeFileSync(path.join(dir, `condense-native.${t}.node`), 'not a shared object');
    const { out, warnings } = child(`const l = require('./loader.js'); console.log(JSON.stringify({ backend: l.backend, errors: l.loadErrors }))`, { cwd: dir });
    assert.equal(out.backend, 'js');
    assert.equal(warnings.length, 1);
    for (const t of names) {
      assert.ok(out.errors.some((e) => e.startsWith(`./condense-native.${t}.node (`) && !e.endsWith('(not installed)')), out.errors.join('; '));
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// A host process often loads other native addons. An addon whose thread-local
// storage must be static (ELF flag STATIC_TLS, which mimalloc's default
// initial-exec TLS model sets) fits only in glibc's small static-TLS surplus
// left after start-up: on Linux x64 one such addon of this size loads and the
// next fails with "cannot allocate memory in static TLS block". The build
// uses mimalloc's local-dynamic TLS, so any number of copies load side by
// side (each copy stands in for another addon taking static TLS).
// The local build to copy; none when the binding came from an installed package.
const localBuild = native && path.join(ROOT, `condense-native.${native.target}.node`);
const noLocalBuild = noNative || (!fs.existsSync(localBuild) && 'the binding is not a local build');
test('the binary loads beside other addons that use thread-local storage (three copies in one process)', { skip: noLocalBuild }, () => {
  const built = localBuild;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-native-tls-'));
  try {
    const files = [built];
    for (const k of [1, 2]) {
      const copy = path.join(dir, `copy${k}.node`);
      fs.copyFileSync(built, copy);
      files.push(copy);
    }
    // An escape the reference spells differently, so the answer is computed.
    const text = '[{"a":"\\u00e9"}]';
    const expected = JSON.stringify(JSON.parse(text)).length;
    const { out } = child(`
      const results = [];
      for (const f of ${JSON.stringify(files)}) {
        const m = { exports: {} };
        try {
          process.dlopen(m, f);
          results.push(m.exports.sizeOf(Buffer.from(${JSON.stringify(text)})));
        } catch (e) {
          results.push(e.message);
        }
      }
      console.log(JSON.stringify(results));`);
    assert.deepEqual(out, [expected, expected, expected]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
