'use strict';
// Each Linux binary of `npm run build:all`, run where this machine can run it
// (scripts/xbuild/runtimes.js: this Node for linux-x64-gnu, the arm64 Node
// under qemu for linux-arm64-gnu, Bun's musl builds for the musl targets):
//   - the project's conformance tests (__test__/conformance*.test.js, the
//     native ones) pass in full there, with as many passing tests as on
//     linux-x64-gnu, and cross/guest/guard.js makes sure they ran on that
//     target's binary, loaded from its platform package;
//   - every case of every vectors*.json (both dialects) gives its expected
//     result there, and the same results as on linux-x64-gnu through prune,
//     pruneMessages and computeThinkingBoundary (cross/guest/vectors-digest.js).
// The package is staged in a temporary directory (its JS, the tests, and a
// node_modules linking each npm/<platform>/ package), so no local build in
// the work tree can stand in for the binary under test.
// Part of `npm run test:cross`; runs under `node --test`.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');

const { PLATFORMS, BUILT_HERE, binaryPath } = require('../scripts/xbuild/targets.js');
const { runtimeFor } = require('../scripts/xbuild/runtimes.js');

const ROOT = path.join(__dirname, '..');
const REFERENCE = 'linux-x64-gnu';
const LINUX = BUILT_HERE.filter((p) => PLATFORMS[p].os === 'linux');
const selected = process.env.XBUILD_PLATFORMS ? process.env.XBUILD_PLATFORMS.split(',').filter(Boolean) : LINUX;
const platforms = LINUX.filter((p) => selected.includes(p));
const CONFORMANCE = fs
  .readdirSync(path.join(ROOT, '__test__'))
  .filter((f) => /^conformance.*\.test\.js$/.test(f) && !/-pure\b/.test(f))
  .sort();
const TIMEOUT = 15 * 60_000;

function makeStage() {
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-native-cross-'));
  for (const entry of ['package.json', 'index.js', 'index.mjs', 'loader.js', 'js', '__test__', 'sample']) {
    fs.cpSync(path.join(ROOT, entry), path.join(stage, entry), { recursive: true });
  }
  fs.mkdirSync(path.join(stage, 'node_modules'));
  for (const p of LINUX) fs.symlinkSync(path.join(ROOT, 'npm', p), path.join(stage, 'node_modules', `condense-native-${p}`));
  return stage;
}
const stage = makeStage();
process.on('exit', () => fs.rmSync(stage, { recursive: true, force: true }));

function runIn(runtime, args, env) {
  const { file, args: argv, env: fullEnv } = runtime.command(args, env);
  // Set by `node --test` for its own children; a test file run with it
  // reports to a parent runner instead of printing its results.
  delete fullEnv.NODE_TEST_CONTEXT;
  return new Promise((resolve) => {
    const child = spawn(file, argv, { cwd: stage, env: fullEnv });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
}

// One conformance file on one runtime; returns its pass/fail/skip counts.
async function conformance(platform, runtime, file) {
  const guard = path.join(__dirname, 'guest', 'guard.js');
  const env = { XBUILD_EXPECT_TARGET: platform, XBUILD_STAGE: stage, CONDENSE_NATIVE_FORCE_FALLBACK: '' };
  const rel = path.join('__test__', file);
  const args = runtime.kind === 'bun' ? ['test', '--timeout', '600000', '--preload', guard, `./${rel}`] : ['--test-reporter=tap', '-r', guard, rel];
  const r = await runIn(runtime, args, env);
  const out = r.stdout + r.stderr;
  const count = (re) => Number((re.exec(out) || [])[1] ?? NaN);
  const counts =
    runtime.kind === 'bun'
      ? { pass: count(/^\s*(\d+) pass$/m), fail: count(/^\s*(\d+) fail$/m), skip: count(/^\s*(\d+) skip$/m) || 0 }
      : { pass: count(/^# pass (\d+)$/m), fail: count(/^# fail (\d+)$/m), skip: count(/^# skipped (\d+)$/m) };
  assert.equal(r.status, 0, `${platform} ${file} exited ${r.status ?? r.signal}:\n${out.split('\n').filter((l) => /not ok|fail|guard|Error/i.test(l)).slice(0, 30).join('\n')}`);
  return counts;
}

async function digest(platform, runtime) {
  const r = await runIn(runtime, [path.join(__dirname, 'guest', 'vectors-digest.js'), stage], { CONDENSE_NATIVE_FORCE_FALLBACK: '' });
  assert.equal(r.status, 0, `${platform}: vectors-digest.js exited ${r.status ?? r.signal}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

let referencePromise;
function reference() {
  referencePromise ??= (async () => {
    const runtime = runtimeFor(REFERENCE);
    assert.ok(!runtime.missing, `${REFERENCE}: ${runtime.missing}`);
    assert.ok(fs.existsSync(binaryPath(REFERENCE)), `${REFERENCE}: npm run build:all first`);
    const counts = {};
    for (const file of CONFORMANCE) {
      const started = Date.now();
      counts[file] = { ...(await conformance(REFERENCE, runtime, file)), ms: Date.now() - started };
    }
    const started = Date.now();
    return { counts, digest: { ...(await digest(REFERENCE, runtime)), ms: Date.now() - started } };
  })();
  return referencePromise;
}

for (const platform of platforms) {
  test(`${platform}: conformance tests pass in full, and every vectors*.json case matches ${REFERENCE}`, { timeout: TIMEOUT }, async (t) => {
    assert.ok(fs.existsSync(binaryPath(platform)), `${path.relative(ROOT, binaryPath(platform))} is missing: run npm run build:all`);
    const runtime = runtimeFor(platform);
    assert.ok(!runtime.missing, `${platform}: no runtime (${runtime.missing}); node scripts/xbuild/runtimes.js install`);
    const ref = await reference();
    t.diagnostic(`${runtime.kind} ${runtime.exe}`);

    for (const file of CONFORMANCE) {
      const started = Date.now();
      const got = platform === REFERENCE ? ref.counts[file] : { ...(await conformance(platform, runtime, file)), ms: Date.now() - started };
      t.diagnostic(`${file}: ${got.pass} passed, ${got.fail} failed, ${got.skip} skipped (${got.ms} ms)`);
      assert.equal(got.fail, 0, file);
      assert.equal(got.skip, 0, file);
      assert.ok(got.pass > 0, `${file}: no test ran`);
      assert.equal(got.pass, ref.counts[file].pass, `${file}: passing tests differ from ${REFERENCE}'s`);
    }

    const started = Date.now();
    const got = platform === REFERENCE ? ref.digest : { ...(await digest(platform, runtime)), ms: Date.now() - started };
    t.diagnostic(`${got.cases} cases from ${got.files.join(', ')} (${got.ms} ms)`);
    assert.equal(got.backend, 'native');
    assert.equal(got.target, platform);
    assert.ok(got.cases > 300, `only ${got.cases} cases`);
    assert.deepEqual(got.nonConforming, [], 'cases whose result is not the expected one');
    assert.deepEqual(got.files, ref.digest.files);
    for (let i = 0; i < ref.digest.results.length; i++) {
      assert.deepEqual(got.results[i], ref.digest.results[i], `${platform} differs from ${REFERENCE} at ${ref.digest.results[i].name}`);
    }
    assert.equal(got.results.length, ref.digest.results.length);
  });
}
