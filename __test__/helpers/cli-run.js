'use strict';
// The CLI run as a user runs it, for the tests and scripts/mistakes.js: a
// spawned `bin/condense-native.js` with its own agent directory
// (PI_CODING_AGENT_DIR, so the machine's pi settings never leak in) and no
// pi-condense found, its exit status, stdout and stderr together; and the
// md5 of every file under a folder, to show that a run changed none.

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'condense-native.js');
const SAMPLE = path.join(ROOT, 'sample', 'session.jsonl');

/** A new temporary folder named `prefix...`. */
function tmpDir(prefix = 'condense-cli-') {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** A `cli(args, {agentDir, cwd, env})` that runs in `agentDir` unless told another. */
function cliRunner(defaultAgent) {
  return function cli(args, { agentDir = defaultAgent, cwd = ROOT, env = {} } = {}) {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, PI_CODING_AGENT_DIR: agentDir, CONDENSE_NATIVE_PI_CONDENSE: '', ...env },
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
}

/** Every file under `dir` with its md5, by path relative to `dir`. */
function md5Tree(dir) {
  const out = {};
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out[path.relative(dir, p)] = crypto.createHash('md5').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

module.exports = { ROOT, BIN, SAMPLE, tmpDir, cliRunner, md5Tree };
