#!/usr/bin/env node
'use strict';
// `npm run test:node`: every __test__/*.test.js under `node --test`, named
// one by one. Node 20 reads a folder argument as "run the tests in it", but
// Node 22 and 24 read it as a module to load ("Cannot find module
// .../__test__") and want files or globs, which Node 20 does not expand and
// Windows' shell does not either. Naming the files works on all three.
// Arguments are passed on to node (e.g. --test-name-pattern); test files
// among them replace the whole __test__ folder. The run ends with one line
// per group of skipped tests: how many, why, and how to run them
// (scripts/skipped.js).
//
// Files run two at a time at least: node's default, one fewer than the
// cores, is one file at a time on a 2-core machine, and most files wait on
// child processes (pi, npm pack, bun) for much of their time. Each file is
// its own process, so no test shares a heap or an RSS reading with another.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { summaryLines } = require('./skipped.js');

const ROOT = path.join(__dirname, '..');
const dir = path.join(ROOT, '__test__');
const args = process.argv.slice(2);
const named = args.filter((a) => /\.test\.[cm]?js$/.test(a));
const files = named.length
  ? []
  : fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.test.js'))
      .sort()
      .map((f) => path.join('__test__', f));
const concurrency = Math.max(2, os.availableParallelism() - 1);
// The usual report on stdout (spec on a terminal, TAP otherwise, as Node 20
// chooses), and beside it the skips, for the lines that close the run. A
// reporter of the caller's own replaces both.
const own = args.some((a) => a.startsWith('--test-reporter'));
const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'condense-node-skips-')), 'skips.jsonl');
const reporters = own
  ? []
  : [
      `--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`,
      '--test-reporter-destination=stdout',
      `--test-reporter=${path.join(__dirname, 'skip-reporter.js')}`,
      `--test-reporter-destination=${log}`,
    ];
const r = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, ...reporters, ...args, ...files], { cwd: ROOT, stdio: 'inherit' });
if (!own) {
  const records = fs.existsSync(log)
    ? fs
        .readFileSync(log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
  process.stdout.write(`\n${summaryLines(`Node ${process.versions.node}`, records.length, records.filter((x) => x.skipped)).join('\n')}\n`);
}
fs.rmSync(path.dirname(log), { recursive: true, force: true });
process.exit(r.status === null ? 1 : r.status);
