#!/usr/bin/env node
'use strict';
// `npm run test:bun`: every __test__/*.test.js under `bun test` (a 120 s
// timeout per test, as the suite's slowest need), then one line per group
// of skipped tests: how many, why, and how to run them (scripts/skipped.js).
// Bun's own report does not say why a test was skipped, so a preload
// (scripts/skip-log.js) notes each test as it is registered and run.
// Arguments are passed on to `bun test`; test files among them replace the
// whole __test__ folder.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { summaryLines } = require('./skipped.js');

const ROOT = path.join(__dirname, '..');
const local = path.join(ROOT, 'node_modules', '.bin', process.platform === 'win32' ? 'bun.exe' : 'bun');
const bun = fs.existsSync(local) ? local : 'bun';
const args = process.argv.slice(2);
const named = args.filter((a) => /\.test\.[cm]?js$/.test(a));
const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'condense-bun-skips-')), 'skips.jsonl');
fs.writeFileSync(log, '');
const r = spawnSync(bun, ['test', '--preload', path.join(__dirname, 'skip-log.js'), '--timeout', '120000', ...args, ...(named.length ? [] : ['__test__/'])], {
  cwd: ROOT,
  stdio: 'inherit',
  env: { ...process.env, CONDENSE_TEST_SKIPS: log },
});
const records = fs
  .readFileSync(log, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l));
fs.rmSync(path.dirname(log), { recursive: true, force: true });
const version = spawnSync(bun, ['--version'], { encoding: 'utf8' }).stdout.trim();
process.stdout.write(`\n${summaryLines(`Bun ${version}`, records.length, records.filter((x) => x.skipped)).join('\n')}\n`);
process.exit(r.status === null ? 1 : r.status);
