'use strict';
// The addon built with the exports only tests use (Cargo.toml feature
// `test-exports`, src/napi/testing.rs: debugPanic, wireToJson,
// replayWirePayload), which release builds leave out. Built once per test
// process with cargo (debug profile, beside the release build), copied to a
// temporary file and loaded from there; null without cargo.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..', '..');
let loaded;

function testBinding() {
  if (loaded !== undefined) return loaded;
  loaded = null;
  const built = spawnSync('cargo', ['build', '--lib', '--features', 'test-exports', '--message-format', 'short'], { cwd: ROOT, stdio: 'ignore' });
  if (built.status !== 0) return loaded;
  const lib = ['libcondense_native.so', 'libcondense_native.dylib', 'condense_native.dll']
    .map((f) => path.join(ROOT, 'target', 'debug', f))
    .find((f) => fs.existsSync(f));
  if (lib === undefined) return loaded;
  const copy = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'condense-test-exports-')), 'test-exports.node');
  fs.copyFileSync(lib, copy);
  loaded = require(copy);
  return loaded;
}

const NO_CARGO = spawnSync('cargo', ['--version']).status === 0 ? false : 'cargo is absent: the test-only exports cannot be built';

module.exports = { testBinding, NO_CARGO };
