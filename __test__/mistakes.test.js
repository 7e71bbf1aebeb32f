'use strict';
// scripts/mistakes.js, the matrix of ordinary mistakes kept in
// docs/RELIABILITY.md (about ten seconds here): each row is the command as
// a user types it, its exit status and the first line it printed, and a
// case that fails its expectation, changes an input file or passes over
// the mistake in silence makes the script exit 1. Runs under `node --test`
// and `bun test` (the script itself runs on Node).

const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const { backend } = require('..');
const { CASES } = require('../scripts/mistakes.js');

const ROOT = path.join(__dirname, '..');
const NODE = process.versions.bun ? 'node' : process.execPath;
const skip = backend !== 'native' && 'the replay needs the native binding';

test('the matrix has at least 50 cases, each with a command, an expected status and what the output says', () => {
  assert.ok(CASES.length >= 50, `${CASES.length} cases`);
  for (const c of CASES) {
    assert.ok(c.mistake && (c.args || c.pi) && Number.isInteger(c.code) && c.out instanceof RegExp, JSON.stringify(c));
  }
  assert.equal(CASES.filter((c) => /issue 47/.test(c.mistake)).length >= 15, true);
});

test('scripts/mistakes.js: every case as expected, no input file changed or lost, a row each', { skip, timeout: 240_000 }, () => {
  const r = spawnSync(NODE, [path.join(ROOT, 'scripts', 'mistakes.js')], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const rows = r.stdout.split('\n').filter((l) => /^\| \d+ \|/.test(l));
  assert.deepEqual(rows.map((l) => Number(l.split('|')[1])), CASES.map((c) => c.id));
  assert.equal(rows[0], '| 1 | --contexts names the folder of the session replayed (issue 47) | `condense-native replay --contexts clash clash/none.jsonl` | 2 | condense-native: error: --contexts clash holds clash/none.jsonl, a session file of this run: name a new directory, outside the sessions |  |');
  assert.match(r.stdout, new RegExp(`\\n${CASES.length} cases, ${CASES.length} as expected, 0 not; no input file changed or lost\\.\\n$`));
  // --only runs the cases named.
  const some = spawnSync(NODE, [path.join(ROOT, 'scripts', 'mistakes.js'), '--only', '2,15'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(some.status, 0, some.stdout);
  assert.deepEqual(some.stdout.split('\n').filter((l) => /^\| \d+ \|/.test(l)).map((l) => Number(l.split('|')[1])), [2, 15]);
});
