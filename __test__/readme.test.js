'use strict';

// The layout block of docs/LAYOUT.md (the tree under "## The tree", which
// the README points to) matches the tree: every path it names exists, and
// it names every top-level folder and every entry of js/, cli/, pi/ and
// src/, so a file added or moved without the layout fails here.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');

function layoutBlock() {
  const readme = fs.readFileSync(path.join(ROOT, 'docs', 'LAYOUT.md'), 'utf8');
  const at = readme.indexOf('## The tree');
  assert.ok(at >= 0, 'docs/LAYOUT.md has a section "The tree"');
  const open = readme.indexOf('```', at);
  const close = readme.indexOf('```', open + 3);
  return readme.slice(readme.indexOf('\n', open) + 1, close).split('\n');
}

// Each line: a first column of names (comma-separated, before a run of two
// or more spaces), indented under the last top-level folder it follows.
function namedPaths() {
  const named = [];
  let parent = '';
  for (const line of layoutBlock()) {
    if (line.trim() === '' || /^\s{6,}\S/.test(line)) continue; // a description on its own line
    const indented = line.startsWith('  ');
    const column = line.trim().split(/\s{2,}/)[0];
    const names = column.split(/,\s*/).filter(Boolean);
    for (const name of names) {
      const rel = indented ? path.posix.join(parent, name) : name;
      named.push(rel);
      if (!indented && name.endsWith('/')) parent = name;
    }
    if (!indented && !names.some((n) => n.endsWith('/'))) parent = '';
  }
  return named;
}

function exists(rel) {
  if (rel.endsWith('*')) {
    const dir = path.join(ROOT, path.dirname(rel));
    const prefix = path.basename(rel).slice(0, -1);
    return fs.existsSync(dir) && fs.readdirSync(dir).some((f) => f.startsWith(prefix));
  }
  return fs.existsSync(path.join(ROOT, rel));
}

function covered(named, rel) {
  return named.some((n) => {
    const name = n.replace(/\/$/, '');
    if (name === rel || name.startsWith(`${rel}/`)) return true;
    if (name.endsWith('*')) return rel.startsWith(name.slice(0, -1));
    return false;
  });
}

test('every path the layout names exists', () => {
  const named = namedPaths();
  assert.ok(named.length > 30, `the layout names ${named.length} paths`);
  for (const rel of named) assert.ok(exists(rel), `docs/LAYOUT.md names ${rel}, which is not in the tree`);
});

test('the layout names every top-level folder and every entry of js/, cli/, pi/ and src/', () => {
  const named = namedPaths();
  const entries = (dir) =>
    fs
      .readdirSync(path.join(ROOT, dir), { withFileTypes: true })
      .filter((e) => !e.name.startsWith('.'))
      .map((e) => ({ rel: dir ? `${dir}/${e.name}` : e.name, dir: e.isDirectory() }));
  const ignoredTop = new Set(['node_modules', 'target', 'npm-cache', 'fuzz/target']);
  const wanted = [
    ...entries('').filter((e) => e.dir && !ignoredTop.has(e.rel) && isTracked(e.rel)),
    ...entries('js').filter((e) => isTracked(e.rel)),
    ...entries('cli').filter((e) => isTracked(e.rel)),
    ...entries('pi').filter((e) => isTracked(e.rel)),
    ...entries('src').filter((e) => isTracked(e.rel)),
  ];
  for (const e of wanted) assert.ok(covered(named, e.rel), `docs/LAYOUT.md does not name ${e.rel}`);
});

// Tracked by git (a build or a helper may leave untracked folders around).
let tracked;
function isTracked(rel) {
  if (tracked === undefined) {
    const { execFileSync } = require('node:child_process');
    try {
      tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).split('\n');
    } catch {
      tracked = null; // not a git checkout (an installed package): check what is there
    }
  }
  if (tracked === null) return true;
  return tracked.some((f) => f === rel || f.startsWith(`${rel}/`));
}
