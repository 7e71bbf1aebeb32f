#!/usr/bin/env node
'use strict';
// `npm run test:node`: every __test__/*.test.js under `node --test`, named
// one by one. Node 20 reads a folder argument as "run the tests in it", but
// Node 22 and 24 read it as a module to load ("Cannot find module
// .../__test__") and want files or globs, which Node 20 does not expand and
// Windows' shell does not either. Naming the files works on all three.
// Arguments are passed on to node (e.g. --test-name-pattern).
//
// Files run two at a time at least: node's default, one fewer than the
// cores, is one file at a time on a 2-core machine, and most files wait on
// child processes (pi, npm pack, bun) for much of their time. Each file is
// its own process, so no test shares a heap or an RSS reading with another.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const dir = path.join(__dirname, '..', '__test__');
const files = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.test.js'))
  .sort()
  .map((f) => path.join('__test__', f));
const concurrency = Math.max(2, os.availableParallelism() - 1);
const r = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, ...process.argv.slice(2), ...files], { cwd: path.join(__dirname, '..'), stdio: 'inherit' });
process.exit(r.status === null ? 1 : r.status);
