'use strict';
// `npm test` ends with one line per group of skipped tests, for Node
// (scripts/test-node.js) and for Bun (scripts/test-bun.js): how many, why,
// and how to run them (scripts/skipped.js), so a fresh clone without
// ../shared says so at the end instead of in inline TAP lines among
// thousands. Runs a fixture file with known skips through each runner
// script. Runs under `node --test` and `bun test`.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..');
const NODE = process.versions.bun ? 'node' : process.execPath;
const BUN = path.join(ROOT, 'node_modules', '.bin', process.platform === 'win32' ? 'bun.exe' : 'bun');
const SHARED = path.join(ROOT, '..', 'shared');

const FIXTURE = `const { test, describe } = require('node:test');
test('needs the reference', { skip: 'the reference modules are absent (../shared/reference)' }, () => {});
test('needs the corpus', { skip: '../shared/corpus is absent' }, () => {});
test('needs the binary', { skip: 'native binding absent' }, () => {});
test('big', { skip: 'CONDENSE_SKIP_BIG is set' }, () => {});
test('runs', () => {});
test('skips itself', (t) => { t.skip('typescript is not installed'); });
describe('a group', () => { test('inside', () => {}); });
`;

function run(script) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-summary-'));
  const file = path.join(dir, 'fixture.test.js');
  fs.writeFileSync(file, FIXTURE);
  // Not as a child of this test run: node --test reports to its parent
  // through NODE_TEST_CONTEXT instead of its reporters.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_TEST_CONTEXT' && k !== 'CONDENSE_TEST_SKIPS'));
  const r = spawnSync(NODE, [path.join(ROOT, 'scripts', script), file], { cwd: ROOT, encoding: 'utf8', env });
  return { code: r.status, lines: r.stdout.trimEnd().split('\n'), stderr: r.stderr };
}

function closing(runtime) {
  return [
    `${runtime}: 7 tests, 5 skipped:`,
    `  2 skipped (fixture.test.js): they compare against the project's shared folder (reference implementations, conformance vectors, corpus sessions, the real pi-condense releases), not found at ../shared (${SHARED}); to run them: put that folder at ../shared, beside the clone`,
    '  1 skipped (fixture.test.js): they need the native binary, which did not load; to run them: `npm run build` (a Rust toolchain builds it)',
    '  1 skipped (fixture.test.js): CONDENSE_SKIP_BIG is set; to run them: unset CONDENSE_SKIP_BIG',
    '  1 skipped (fixture.test.js): typescript is not installed',
  ];
}

test('the Node run ends with one line per group of skipped tests: how many, why, how to run them', () => {
  const r = run('test-node.js');
  assert.equal(r.code, 0, r.stderr);
  const version = spawnSync(NODE, ['--version'], { encoding: 'utf8' }).stdout.trim().replace(/^v/, '');
  assert.deepEqual(r.lines.slice(-5), closing(`Node ${version}`));
});

test('the Bun run ends with the same lines', { skip: !fs.existsSync(BUN) && 'no node_modules/.bin/bun (npm ci installs it)' }, () => {
  const r = run('test-bun.js');
  assert.equal(r.code, 0, r.stderr);
  const version = spawnSync(BUN, ['--version'], { encoding: 'utf8' }).stdout.trim();
  assert.deepEqual(r.lines.slice(-5), closing(`Bun ${version}`));
});
