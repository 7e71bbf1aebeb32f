'use strict';
// Packaging, end to end: the main package and this platform's binary package
// are packed as a release would pack them (scripts/prepare-publish.js adds the
// optionalDependencies), installed offline into fresh projects (npm install,
// and bun add) with no Rust toolchain on PATH, then loaded there by Node (require and import) and by Bun.
// Each prunes sample/session.json and must give js/pure.js's result. The
// loader's fallback is exercised there too: forced, on a platform with no
// published binary, and with the platform package missing.
//
// cross/packaging.test.js runs this file for a binary of another platform:
// CONDENSE_NATIVE_TEST_TARGET names it (its binary is npm/<target>/'s, from
// `npm run build:all`), CONDENSE_NATIVE_TEST_RUNNER (a JSON array) is the
// command that starts Node there (e.g. qemu-aarch64 -L <root> <arm64 node>),
// and npm installs as for that target's os, cpu and libc. Bun then runs only
// for this machine's own target.
//
// Runs under `node --test` and `bun test`; either way it starts both Node and
// Bun as subprocesses. Skips itself where no local build of the addon exists
// (`npm run build` makes one) and on Windows.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { execFile, spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..');
const { packRelease, publishedFiles } = require('./helpers/pack.js');
const MAIN = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const SAMPLE = path.join(ROOT, 'sample', 'session.json');
const TIMEOUT = 60_000;
const WARNING = 'CONDENSE_NATIVE_FALLBACK';
const IS_BUN = typeof Bun !== 'undefined';

// --- Where things are ------------------------------------------------------

function hostTarget() {
  const { platform, arch } = process;
  if (platform === 'linux') {
    const report = process.report && process.report.getReport ? process.report.getReport() : null;
    const glibc = !!(report && report.header && report.header.glibcVersionRuntime);
    return `linux-${arch}-${glibc ? 'gnu' : 'musl'}`;
  }
  if (platform === 'darwin') return `darwin-${arch}`;
  if (platform === 'win32') return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

function findOnPath(name) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return null;
}

function nodeBinary() {
  return IS_BUN ? findOnPath('node') : process.execPath;
}

function bunBinary() {
  if (IS_BUN) return process.execPath;
  try {
    const dir = path.dirname(require.resolve('bun/package.json', { paths: [ROOT] }));
    for (const name of ['bin/bun.exe', 'bin/bun']) {
      if (fs.existsSync(path.join(dir, name))) return path.join(dir, name);
    }
  } catch {
    // no local bun
  }
  return findOnPath('bun');
}

// npm's own CLI script, run with node (no shell shim, no PATH look-up).
function npmCli() {
  const candidates = [process.env.npm_execpath];
  const npm = findOnPath('npm');
  if (npm) candidates.push(fs.realpathSync(npm));
  const node = nodeBinary();
  if (node) {
    const prefix = path.dirname(path.dirname(fs.realpathSync(node)));
    candidates.push(path.join(prefix, 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'));
  }
  return candidates.find((f) => f && /npm-cli\.js$/.test(f) && fs.existsSync(f)) || null;
}

const CROSS_TARGET = process.env.CONDENSE_NATIVE_TEST_TARGET || null;
const TARGET = CROSS_TARGET || hostTarget();
const BINARY = CROSS_TARGET
  ? path.join(ROOT, 'npm', TARGET, `${MAIN.napi.binaryName}.${TARGET}.node`)
  : path.join(ROOT, `${MAIN.napi.binaryName}.${TARGET}.node`);
const NODE = nodeBinary();
const BUN = bunBinary();
const NPM_CLI = npmCli();
// Where the consumers run: this machine, or the cross target's runner.
const GUEST_RUNNER = process.env.CONDENSE_NATIVE_TEST_RUNNER ? JSON.parse(process.env.CONDENSE_NATIVE_TEST_RUNNER) : null;
const [GUEST_OS, GUEST_ARCH] = TARGET.split('-');
const GUEST_LIBC = GUEST_OS === 'linux' ? (TARGET.endsWith('-musl') ? 'musl' : 'glibc') : null;
const RUNTIMES = TARGET === hostTarget() ? ['node', 'bun'] : ['node'];
const noBun = RUNTIMES.includes('bun') ? false : `bun runs only for this machine's own target (${hostTarget()})`;

const skipReason =
  process.platform === 'win32'
    ? 'packaging test not run on Windows'
    : !fs.existsSync(BINARY)
      ? CROSS_TARGET
        ? `no ${path.relative(ROOT, BINARY)} (run npm run build:all)`
        : `no local build ${path.basename(BINARY)} (run npm run build)`
      : !fs.existsSync(path.join(ROOT, 'npm', TARGET, 'package.json'))
        ? `no npm/${TARGET} package for this platform`
        : !NODE || !NPM_CLI || !BUN
          ? `needs node, npm and bun (found node=${NODE}, npm=${NPM_CLI}, bun=${BUN})`
          : false;

// --- A child environment without Rust --------------------------------------

const RUST_TOOLS = ['cargo', 'rustc', 'rustup'];

function strippedPath() {
  return (process.env.PATH || '')
    .split(path.delimiter)
    .filter((dir) => dir && !RUST_TOOLS.some((tool) => fs.existsSync(path.join(dir, tool))))
    .join(path.delimiter);
}

function childEnv(work, extra = {}) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    // npm's lifecycle variables, Rust's, and anything of ours stay behind.
    if (/^(npm_|CARGO|RUSTUP|RUSTC|RUST_|CONDENSE_NATIVE_|NODE_OPTIONS$|NODE_PATH$)/i.test(key)) continue;
    env[key] = value;
  }
  env.PATH = strippedPath();
  env.HOME = path.join(work, 'home');
  env.npm_config_cache = path.join(work, 'npm-cache');
  env.npm_config_offline = 'true';
  env.npm_config_audit = 'false';
  env.npm_config_fund = 'false';
  env.npm_config_update_notifier = 'false';
  // Nothing may come from a registry: an unreachable one makes sure of it.
  env.npm_config_registry = 'http://127.0.0.1:9/';
  env.NPM_CONFIG_REGISTRY = env.npm_config_registry;
  env.BUN_INSTALL_CACHE_DIR = path.join(work, 'bun-cache');
  if (CROSS_TARGET) {
    env.npm_config_os = GUEST_OS;
    env.npm_config_cpu = GUEST_ARCH;
    if (GUEST_LIBC) env.npm_config_libc = GUEST_LIBC;
  }
  return Object.assign(env, extra);
}

function run(file, args, options) {
  return new Promise((resolve, reject) => {
    execFile(file, args, { maxBuffer: 64 * 1024 * 1024, ...options }, (error, stdout, stderr) => {
      if (error) {
        error.message += `\nstdout:\n${stdout}\nstderr:\n${stderr}`;
        reject(error);
      } else {
        resolve({ stdout, stderr });
      }
    });
  });
}

function npm(args, cwd, env) {
  return run(NODE, [NPM_CLI, ...args], { cwd, env });
}

// --- What the consumers print, and what they must print --------------------

function sha256(text) {
  return crypto.createHash('sha256').update(text).digest('hex');
}

const SUMMARIZE = `
'use strict';
// Prunes the sample through the package's public API; prints one JSON line.
const fs = require('node:fs');
const crypto = require('node:crypto');
const sha256 = (t) => crypto.createHash('sha256').update(t).digest('hex');

function summary(r) {
  const json = r.messages === null ? null : JSON.stringify(JSON.parse(r.messages.toString('utf8')));
  return {
    pruned: r.pruned, beforeChars: r.beforeChars, afterChars: r.afterChars,
    messagesIsBuffer: Buffer.isBuffer(r.messages),
    messagesSha256: json === null ? null : sha256(json),
    messagesLength: json === null ? null : json.length,
    frontier: r.frontier, stats: r.stats,
  };
}

// A pi-condense 2.4.3 indexer over the sample's state (SPEC 2.2), enough for
// the drop-in's render path.
function indexerOf(state) {
  const has = (t, k) => t != null && typeof k === 'string' && Object.hasOwn(t, k);
  const entries = [...new Map((state.chains || []).map((e) => [e.startUserTimestamp, e])).values()]
    .sort((a, b) => a.startUserTimestamp - b.startUserTimestamp);
  const perBatch = (ids) => [...new Set((state.summaryBodies || [])
    .filter((b) => b.toolCallIds.some((id) => ids.includes(id))).map((b) => b.text))].join('\\n\\n');
  return {
    isSummarized: (id) => has(state.records, id) || has(state.dedupAliases, id),
    hasLegacyBareRecord: () => false,
    getRecord: (id) => has(state.records, id) ? state.records[id]
      : has(state.dedupAliases, id) && state.dedupAliases[id] ? state.records[state.dedupAliases[id]]
      : state.records[state.refAliases?.[id]],
    getShortRefForToolCallId: (id) => has(state.shortRefs, id) ? state.shortRefs[id] : undefined,
    getChainEntries: () => entries,
    getPerBatchSummaryTextForToolCallIds: perBatch,
    findChainEntryByBlockId: (b) => entries.find((e) => e.blockId === b),
  };
}

function dropInSummaries(dropIns, sample) {
  if (!dropIns) return null;
  const c = sample.config;
  const drop = (r) => ({ pruned: r.pruned, beforeChars: r.beforeChars, afterChars: r.afterChars, messagesSha256: sha256(JSON.stringify(r.messages)) });
  const v24 = dropIns.v24.pruneMessages(sample.messages, indexerOf(sample.state), c.chainCompression, c.errorPurge,
    c.thinkingStrip, c.protection, c.recoveryGraceTurns, sample.thinkingBoundaryTimestamp);
  const orphan = [...sample.messages, { role: 'toolResult', toolCallId: 'orphan', toolName: 'read', content: [], isError: false, timestamp: 1 }];
  const reports = [];
  const v29 = dropIns.v29.pruneMessages(orphan, indexerOf({}), null, null, null, 0, { report: (kind, key, detail) => reports.push([kind, key, detail]) });
  return { v24: drop(v24), v29: drop(v29), v29Reports: reports };
}

module.exports = function report(api, samplePath, how, loadedBinaries, dropIns) {
  const sample = JSON.parse(fs.readFileSync(samplePath, 'utf8'));
  const bytes = Buffer.from(JSON.stringify(sample.messages));
  const copy = Buffer.from(bytes);
  const options = { state: sample.state, config: sample.config, thinkingStripBoundaryTimestamp: sample.thinkingBoundaryTimestamp };
  const stateless = summary(api.prune(bytes, options));
  const pruner = new api.Pruner(sample.config).setState(sample.state);
  const stateful = summary(pruner.prune(bytes, { thinkingStripBoundaryTimestamp: sample.thinkingBoundaryTimestamp }));
  const stamps = sample.messages.filter((m) => m.role === 'assistant').map((m) => m.timestamp);
  const before = JSON.stringify(sample.messages);
  const array = api.pruneMessages(sample.messages, options);
  const session = new api.PruneSession(options);
  const rendered = [session.render(sample.messages), session.render(sample.messages)];
  const arraySummary = (r) => ({
    pruned: r.pruned, beforeChars: r.beforeChars, afterChars: r.afterChars,
    messagesSha256: sha256(JSON.stringify(r.messages)), frontier: r.frontier, stats: r.stats,
  });
  process.stdout.write(JSON.stringify({
    how,
    runtime: typeof Bun !== 'undefined' ? 'bun' : 'node',
    backend: api.backend,
    exports: Object.keys(api).sort(),
    stateless,
    stateful,
    sizeOf: api.sizeOf(bytes),
    boundary: api.computeThinkingBoundary(stamps, 16, null) ?? null,
    boundaryNone: api.computeThinkingBoundary([], 16) === undefined,
    bufferUntouched: bytes.equals(copy),
    array: arraySummary(array),
    session: rendered.map(arraySummary),
    arrayUntouched: JSON.stringify(sample.messages) === before,
    dropIns: dropInSummaries(dropIns, sample),
    loadedBinaries,
  }) + '\\n');
};
`;

const CONSUMER_CJS = `
'use strict';
const api = require('condense-native');
const dropIns = { v24: require('condense-native/pi-condense-2.4'), v29: require('condense-native/pi-condense-2.9') };
const loaded = Object.keys(require.cache).filter((k) => k.endsWith('.node'));
require('./report.cjs')(api, process.argv[2], 'require', loaded, dropIns);
`;

const CONSUMER_ESM = `
import { createRequire } from 'node:module';
import * as named from 'condense-native';
import api from 'condense-native';
import { prune, pruneMessages, PruneSession, Pruner, computeThinkingBoundary, sizeOf, backend } from 'condense-native';
import * as v24 from 'condense-native/pi-condense-2.4';
import * as v29 from 'condense-native/pi-condense-2.9';
const require = createRequire(import.meta.url);
const statics = { prune, pruneMessages, PruneSession, Pruner, computeThinkingBoundary, sizeOf, backend };
for (const [name, value] of Object.entries(statics)) {
  if (api[name] !== value) throw new Error('named and default ESM exports differ: ' + name);
}
for (const name of Object.keys(api)) {
  if (named[name] !== api[name]) throw new Error('ESM lacks the named export ' + name);
}
const loaded = Object.keys(require.cache).filter((k) => k.endsWith('.node'));
const namedApi = Object.fromEntries(Object.entries(named).filter(([k]) => k !== 'default'));
require('./report.cjs')(namedApi, process.argv[2], 'import', loaded, { v24, v29 });
`;

// Loads the package both ways in one process: the fallback warning must
// still appear once.
const CONSUMER_BOTH = `
'use strict';
const viaRequire = require('condense-native');
import('condense-native').then((ns) => {
  if (ns.prune !== viaRequire.prune) throw new Error('require and import gave different modules');
  const dropIns = { v24: require('condense-native/pi-condense-2.4'), v29: require('condense-native/pi-condense-2.9') };
  require('./report.cjs')(viaRequire, process.argv[2], 'both', [], dropIns);
});
`;

// Pretends to be a CPU no binary is published for.
const FAKE_ARCH = `Object.defineProperty(process, 'arch', { value: 'riscv64', configurable: true, enumerable: true });\n`;

function expectedSummary() {
  const pure = require('../js/pure.js');
  const sample = JSON.parse(fs.readFileSync(SAMPLE, 'utf8'));
  const r = pure.pruneMessages(sample.messages, {
    state: sample.state,
    config: sample.config,
    thinkingStripBoundaryTimestamp: sample.thinkingBoundaryTimestamp,
  });
  assert.ok(r.pruned, 'the sample must exercise the pruner');
  const json = JSON.stringify(r.messages);
  const stamps = sample.messages.filter((m) => m.role === 'assistant').map((m) => m.timestamp);
  const summary = {
    pruned: r.pruned,
    beforeChars: r.beforeChars,
    afterChars: r.afterChars,
    messagesIsBuffer: true,
    messagesSha256: sha256(json),
    messagesLength: json.length,
    frontier: r.frontier,
    stats: r.stats,
  };
  const arraySummary = {
    pruned: r.pruned,
    beforeChars: r.beforeChars,
    afterChars: r.afterChars,
    messagesSha256: sha256(json),
    frontier: r.frontier,
    stats: r.stats,
  };
  const pure29 = require('../js/pure/v2.9.js');
  const orphan = [...sample.messages, { role: 'toolResult', toolCallId: 'orphan', toolName: 'read', content: [], isError: false, timestamp: 1 }];
  const reports = [];
  const r29 = pure29.pruneMessages(orphan, { state: {}, config: {} }, { report: (kind, key, detail) => reports.push([kind, key, detail]) });
  const drop = (x) => ({ pruned: x.pruned, beforeChars: x.beforeChars, afterChars: x.afterChars, messagesSha256: sha256(JSON.stringify(x.messages)) });
  return {
    stateless: summary,
    stateful: summary,
    array: arraySummary,
    dropIns: { v24: drop(r), v29: drop(r29), v29Reports: reports },
    session: [arraySummary, arraySummary],
    arrayUntouched: true,
    sizeOf: JSON.stringify(sample.messages).length,
    boundary: pure.computeThinkingBoundary(stamps, 16, undefined) ?? null,
    boundaryNone: true,
    bufferUntouched: true,
  };
}

function checkReport(report, expected) {
  for (const key of Object.keys(expected)) {
    assert.deepEqual(report[key], expected[key], `${report.runtime}/${report.how}: ${key} differs from js/pure.js`);
  }
}

function warningsIn(stderr) {
  return stderr.split('\n').filter((line) => line.includes(`[${WARNING}]`));
}

// Public names that index.d.ts declares.
function declaredExports() {
  const dts = fs.readFileSync(path.join(ROOT, 'index.d.ts'), 'utf8');
  const names = [...dts.matchAll(/^export declare (?:function|class|const|let) (\w+)/gm)].map((m) => m[1]);
  return names.sort();
}


// --- Set-up, once, shared by the tests -------------------------------------

let setupPromise;

function setup() {
  setupPromise ??= doSetup();
  return setupPromise;
}

async function doSetup() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-native-pack-'));
  process.on('exit', () => fs.rmSync(work, { recursive: true, force: true }));
  fs.mkdirSync(path.join(work, 'home'));
  const env = childEnv(work);

  // The main package as published (its `files`, npm/, the
  // optionalDependencies prepare-publish writes) and the target's platform
  // package with its binary.
  const packed = packRelease(work, env, { target: TARGET, binary: BINARY });

  // A consumer project with both packages, and one with the main package only.
  const makeProject = async (name, specs, installer = 'npm') => {
    const dir = path.join(work, name);
    fs.mkdirSync(dir);
    const manifest = { name, version: '1.0.0', private: true };
    if (CROSS_TARGET && specs.includes(packed.platform.file)) {
      // npm refuses to install a package of another cpu when asked for it by
      // name, even with --cpu. So, as on that machine, the main package's
      // optional dependency brings it in, chosen by npm for the target's
      // os/cpu/libc, and taken from the tarball instead of a registry.
      manifest.overrides = { [`${MAIN.name}-${TARGET}`]: `file:${packed.platform.file}` };
      specs = specs.filter((s) => s !== packed.platform.file);
    }
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest) + '\n');
    if (installer === 'bun') await run(BUN, ['add', ...specs], { cwd: dir, env });
    else await npm(['install', '--no-package-lock', ...specs], dir, env);
    fs.writeFileSync(path.join(dir, 'report.cjs'), SUMMARIZE);
    fs.writeFileSync(path.join(dir, 'consumer.cjs'), CONSUMER_CJS);
    fs.writeFileSync(path.join(dir, 'consumer.mjs'), CONSUMER_ESM);
    fs.writeFileSync(path.join(dir, 'both.cjs'), CONSUMER_BOTH);
    fs.writeFileSync(path.join(dir, 'fake-arch.cjs'), FAKE_ARCH);
    return dir;
  };
  const project = await makeProject('consumer', [packed.main.file, packed.platform.file]);
  const bare = await makeProject('consumer-no-binary', [packed.main.file]);
  const bunProject = noBun ? null : await makeProject('consumer-bun-add', [packed.main.file, packed.platform.file], 'bun');

  return { work, env, packed, project, bare, bunProject, expected: expectedSummary() };
}

async function consume(runtime, script, cwd, env, preload) {
  let exe = runtime === 'bun' ? BUN : NODE;
  const args = [];
  if (runtime === 'node' && GUEST_RUNNER) {
    exe = GUEST_RUNNER[0];
    args.push(...GUEST_RUNNER.slice(1));
  }
  if (preload) args.push(runtime === 'bun' ? '--preload' : '--require', `./${preload}`);
  args.push(script, SAMPLE);
  const { stdout, stderr } = await run(exe, args, { cwd, env });
  return { report: JSON.parse(stdout.trim().split('\n').pop()), warnings: warningsIn(stderr), stderr };
}

// --- Tests -----------------------------------------------------------------

const opts = { timeout: TIMEOUT, skip: skipReason };

test('index.js loads the binding through loader.js (binding.js is not published)', { skip: skipReason }, () => {
  const source = fs.readFileSync(path.join(ROOT, 'index.js'), 'utf8');
  assert.match(source, /require\(['"]\.\/loader(\.js)?['"]\)/, 'index.js must require ./loader.js');
  assert.ok(!publishedFiles().includes('binding.js'), 'binding.js must stay out of the published files');
});

test('the main tarball holds the JS API, types, loader and fallback, and no binary', opts, async () => {
  const { packed } = await setup();
  const expected = ['package.json', ...publishedFiles()];
  for (const extra of ['README.md', 'LICENSE']) if (fs.existsSync(path.join(ROOT, extra))) expected.push(extra);
  assert.deepEqual(packed.main.files, expected.sort());
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const platforms = require('../scripts/prepare-publish.js').platformPackages(ROOT);
  assert.equal(platforms.length, 8);
  // What the tarball's package.json says (read back from the install).
  const { project } = await setup();
  const installed = JSON.parse(fs.readFileSync(path.join(project, 'node_modules', 'condense-native', 'package.json'), 'utf8'));
  assert.deepEqual(installed.optionalDependencies, Object.fromEntries(platforms.map((p) => [p.name, pkg.version])));
  assert.deepEqual(Object.keys(installed.exports['.']).sort(), ['import', 'require']);
});

test('the platform tarball holds its binary, with os/cpu/libc set', opts, async () => {
  const { packed, project } = await setup();
  assert.ok(packed.platform.files.includes(path.basename(BINARY)));
  assert.ok(packed.platform.files.every((f) => ['package.json', 'README.md', path.basename(BINARY)].includes(f)));
  const pkg = JSON.parse(fs.readFileSync(path.join(project, 'node_modules', `condense-native-${TARGET}`, 'package.json'), 'utf8'));
  assert.equal(pkg.version, MAIN.version);
  assert.deepEqual(pkg.os, [GUEST_OS]);
  assert.deepEqual(pkg.cpu, [GUEST_ARCH]);
  if (GUEST_LIBC) assert.deepEqual(pkg.libc, [GUEST_LIBC]);
});

test('the consumers run with no Rust toolchain on PATH', opts, async () => {
  const { env } = await setup();
  for (const tool of RUST_TOOLS) {
    const r = spawnSync(tool, ['--version'], { env });
    assert.ok(r.error && r.error.code === 'ENOENT', `${tool} is still reachable`);
  }
});

test('CommonJS require loads the native binary and prunes the sample like js/pure.js', opts, async () => {
  const { project, env, expected } = await setup();
  const { report, warnings } = await consume('node', 'consumer.cjs', project, env);
  assert.deepEqual(warnings, []);
  assert.equal(report.backend, 'native');
  assert.deepEqual(report.loadedBinaries, [
    path.join(fs.realpathSync(project), 'node_modules', `condense-native-${TARGET}`, path.basename(BINARY)),
  ]);
  checkReport(report, expected);
});

test('ESM import loads the native binary and prunes the sample like js/pure.js', opts, async () => {
  const { project, env, expected } = await setup();
  const { report, warnings } = await consume('node', 'consumer.mjs', project, env);
  assert.deepEqual(warnings, []);
  assert.equal(report.backend, 'native');
  assert.equal(report.loadedBinaries.length, 1);
  checkReport(report, expected);
});

test('bun loads the native binary (import and require) and prunes the sample like js/pure.js', { ...opts, skip: opts.skip || noBun }, async () => {
  const { project, env, expected } = await setup();
  for (const script of ['consumer.mjs', 'consumer.cjs']) {
    const { report, warnings } = await consume('bun', script, project, env);
    assert.equal(report.runtime, 'bun');
    assert.deepEqual(warnings, []);
    assert.equal(report.backend, 'native', `bun ${script}`);
    checkReport(report, expected);
  }
});

test('bun add installs the tarballs too, and bun and node load the binary from there', { ...opts, skip: opts.skip || noBun }, async () => {
  const { bunProject, env, expected } = await setup();
  assert.ok(fs.existsSync(path.join(bunProject, 'node_modules', `condense-native-${TARGET}`, path.basename(BINARY))));
  for (const [runtime, script] of [['bun', 'consumer.mjs'], ['node', 'consumer.cjs']]) {
    const { report, warnings } = await consume(runtime, script, bunProject, env);
    assert.deepEqual(warnings, []);
    assert.equal(report.backend, 'native', `${runtime} ${script}`);
    checkReport(report, expected);
  }
});

test('index.d.ts declares exactly the runtime exports', opts, async () => {
  const { project, env } = await setup();
  const cjs = (await consume('node', 'consumer.cjs', project, env)).report;
  const esm = (await consume('node', 'consumer.mjs', project, env)).report;
  assert.deepEqual(cjs.exports, declaredExports());
  assert.deepEqual(esm.exports, declaredExports());
});

test('forced fallback: one warning naming the platform, same results', opts, async () => {
  const { project, env, expected } = await setup();
  const forced = { ...env, CONDENSE_NATIVE_FORCE_FALLBACK: '1' };
  const runs = [['node', 'both.cjs'], ['node', 'consumer.mjs'], ['bun', 'consumer.mjs']].filter(([runtime]) => RUNTIMES.includes(runtime));
  for (const [runtime, script] of runs) {
    const { report, warnings } = await consume(runtime, script, project, forced);
    assert.equal(report.backend, 'js', `${runtime} ${script}`);
    assert.equal(warnings.length, 1, `${runtime} ${script}: one warning expected, got ${warnings.length}`);
    assert.match(warnings[0], /CONDENSE_NATIVE_FORCE_FALLBACK is set/);
    assert.ok(warnings[0].includes(`${GUEST_OS}-${GUEST_ARCH}`), warnings[0]);
    checkReport(report, expected);
  }
});

test('a platform with no published binary falls back with a warning naming it', opts, async () => {
  const { project, env, expected } = await setup();
  for (const runtime of RUNTIMES) {
    const { report, warnings } = await consume(runtime, 'consumer.cjs', project, env, 'fake-arch.cjs');
    assert.equal(report.backend, 'js', runtime);
    assert.equal(warnings.length, 1, runtime);
    assert.ok(warnings[0].includes(`no native binary is published for ${GUEST_OS}-riscv64`), warnings[0]);
    checkReport(report, expected);
  }
});

test('a missing platform package falls back with a warning naming the packages tried', opts, async () => {
  const { bare, env, expected } = await setup();
  assert.ok(!fs.existsSync(path.join(bare, 'node_modules', `condense-native-${TARGET}`)));
  for (const runtime of RUNTIMES) {
    const { report, warnings } = await consume(runtime, 'consumer.cjs', bare, env);
    assert.equal(report.backend, 'js', runtime);
    assert.equal(warnings.length, 1, runtime);
    assert.ok(warnings[0].includes(`condense-native-${TARGET} (not installed)`), warnings[0]);
    assert.ok(warnings[0].includes(`${GUEST_OS}-${GUEST_ARCH}`), warnings[0]);
    checkReport(report, expected);
  }
});

test('the types resolve for require and import consumers (tsc, node16 resolution)', opts, async (t) => {
  let tsc;
  try {
    tsc = require.resolve('typescript/bin/tsc', { paths: [ROOT] });
  } catch {
    t.skip('typescript is not installed');
    return;
  }
  const { project, env } = await setup();
  const dir = path.join(project, 'types');
  fs.mkdirSync(dir, { recursive: true });
  const body = (importLine) => `${importLine}
const bytes: Uint8Array = new Uint8Array();
const r = prune(bytes, { state: { records: {} }, config: { thinkingStrip: { enabled: true, keepLastTurns: 16 } }, thinkingStripBoundaryTimestamp: null });
const n: number = r.beforeChars + r.afterChars + r.stats.stubbed + sizeOf(bytes);
const m: Buffer | null = r.messages;
const next: number | null = r.frontier.nextThinkingStripBoundaryTimestamp;
const p: Pruner = new Pruner({ errorPurge: { enabled: true } }).setState(null).setConfig(undefined);
const b: number | undefined = computeThinkingBoundary([1, 2], 1, null);
const k: 'native' | 'js' = backend;
const a = pruneMessages([{ role: 'user', content: 'hi', timestamp: 1 }], { config: { recoveryGraceTurns: 3 } });
const first: unknown = a.messages[0];
const s = new PruneSession({ config: {}, state: null, thinkingStripBoundaryTimestamp: 5 }).setState({ chains: [] });
const f: number | null = s.flush().thinkingStripBoundaryTimestamp;
const rs: boolean = s.render([]).pruned;
const indexer = {
  isSummarized: (id: string) => id === 'x',
  getRecord: () => undefined,
  getShortRefForToolCallId: () => undefined,
  getChainEntries: () => [],
  getPerBatchSummaryTextForToolCallIds: () => '',
};
const cp: boolean = pruneMessagesCompat([], indexer, { enabled: true, stripFinalAssistantThinking: false }, null, null, null, 3).pruned;
const d24: number = v24.pruneMessages([], indexer, null, null, null, null, 0, null).afterChars + v24.sizeMessages([]);
const indexer29 = { ...indexer, hasLegacyBareRecord: () => false, findChainEntryByBlockId: () => undefined };
const d29: boolean = v29.pruneMessages([], indexer29, null, null, null, 0, { report: (kind: string, key: unknown, detail: string) => void [kind, key, detail] }).pruned;
v29.invalidate(indexer29);
export { n, m, next, p, b, k, first, f, rs, cp, d24, d29 };
`;
  const subpaths = "import * as v24 from 'condense-native/pi-condense-2.4';\nimport * as v29 from 'condense-native/pi-condense-2.9';";
  fs.writeFileSync(path.join(dir, 'use.cts'), body(`import { prune, pruneMessages, pruneMessagesCompat, PruneSession, Pruner, computeThinkingBoundary, sizeOf, backend } from 'condense-native';\n${subpaths}`));
  fs.writeFileSync(path.join(dir, 'use.mts'), body(`import { prune, pruneMessages, pruneMessagesCompat, PruneSession, Pruner, computeThinkingBoundary, sizeOf, backend } from 'condense-native';\n${subpaths}\nimport api from 'condense-native';\nconst same: typeof prune = api.prune;\nexport { same };`));
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { module: 'node16', moduleResolution: 'node16', strict: true, noEmit: true, types: [], skipLibCheck: false, typeRoots: [] },
    files: ['use.cts', 'use.mts', 'buffer.d.ts'],
  }));
  // Buffer, as @types/node would declare it (not installed in the temp project).
  fs.writeFileSync(path.join(dir, 'buffer.d.ts'), 'declare global { interface Buffer extends Uint8Array {} }\nexport {};\n');
  await run(NODE, [tsc, '-p', dir], { cwd: dir, env });
});
