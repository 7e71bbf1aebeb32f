'use strict';
// The packaging test (__test__/packaging.test.js: pack the main package and
// the platform package as a release would, install the tarballs offline, load
// from CommonJS and ESM, prune the sample like js/pure.js, fall back as
// promised) for the glibc binaries of `npm run build:all`: linux-arm64-gnu
// with its consumers on the arm64 Node under qemu, linux-x64-gnu (the
// glibc-2.17 build, not the local one) on this machine's Node. npm runs here
// and installs as for the target's os, cpu and libc. The musl binaries have no
// Node to run on here (see scripts/xbuild/runtimes.js); cross/runtime.test.js
// loads them in Bun.
// Part of `npm run test:cross`; runs under `node --test`.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const { binaryPath } = require('../scripts/xbuild/targets.js');
const { runtimeFor } = require('../scripts/xbuild/runtimes.js');

const ROOT = path.join(__dirname, '..');
const PLATFORMS = ['linux-x64-gnu', 'linux-arm64-gnu'];
const selected = process.env.XBUILD_PLATFORMS ? process.env.XBUILD_PLATFORMS.split(',').filter(Boolean) : PLATFORMS;
// The tests of packaging.test.js that need Bun on the target itself.
const BUN_TESTS = 2;

function runPackagingTest(env) {
  const childEnv = { ...process.env, ...env };
  delete childEnv.NODE_TEST_CONTEXT;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--test', '--test-reporter=tap', path.join('__test__', 'packaging.test.js')], { cwd: ROOT, env: childEnv });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (status) => resolve({ status, out }));
  });
}

for (const platform of PLATFORMS.filter((p) => selected.includes(p))) {
  test(`${platform}: the packed tarballs install and load (CommonJS, ESM) with its binary`, { timeout: 10 * 60_000 }, async (t) => {
    assert.ok(fs.existsSync(binaryPath(platform)), `${path.relative(ROOT, binaryPath(platform))} is missing: run npm run build:all`);
    const runtime = runtimeFor(platform);
    assert.ok(!runtime.missing, `${platform}: no runtime (${runtime.missing}); node scripts/xbuild/runtimes.js install`);
    assert.equal(runtime.kind, 'node');
    // The runner's argv without the script: the packaging test appends its own.
    const { file, args } = runtime.command([]);
    const started = Date.now();
    const r = await runPackagingTest({ CONDENSE_NATIVE_TEST_TARGET: platform, CONDENSE_NATIVE_TEST_RUNNER: JSON.stringify([file, ...args]) });
    const count = (name) => Number((new RegExp(`^# ${name} (\\d+)$`, 'm').exec(r.out) || [])[1] ?? NaN);
    const counts = { pass: count('pass'), fail: count('fail'), skipped: count('skipped') };
    t.diagnostic(`${counts.pass} passed, ${counts.fail} failed, ${counts.skipped} skipped (${Date.now() - started} ms)`);
    for (const line of r.out.split('\n').filter((l) => /# SKIP/.test(l))) t.diagnostic(line.trim());
    assert.equal(r.status, 0, r.out.split('\n').filter((l) => /not ok|Error|expected|actual/.test(l)).slice(0, 40).join('\n'));
    assert.equal(counts.fail, 0);
    // Only Bun's tests may skip (types resolve with tsc when it is installed).
    assert.ok(counts.skipped <= BUN_TESTS + 1, `${counts.skipped} skipped`);
    assert.ok(counts.pass >= 10, `only ${counts.pass} passed`);
    assert.match(r.out, /^ok \d+ - CommonJS require loads the native binary/m);
    assert.match(r.out, /^ok \d+ - ESM import loads the native binary/m);
  });
}
