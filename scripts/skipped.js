'use strict';
// The tests a run skipped, said at its end, one line per group: how many,
// why, and how to run them. A fresh clone skips many without an error (the
// differential tests need the project's shared folder at ../shared beside
// the clone, the replay needs the native binary, real pi needs Node >=
// 22.19), and a count buried in 15,000 lines of test output is no answer.
// scripts/test-node.js collects the skips with a test reporter
// (scripts/skip-reporter.js), scripts/test-bun.js with a preload
// (scripts/skip-log.js); both print `summaryLines` last.

const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const SHARED = path.join(ROOT, '..', 'shared');

// Each group: what its reasons look like, what it is, and how to run them.
const GROUPS = [
  {
    test: (text) => text.includes(SHARED) || /\.\.\/shared|shared corpus|reference modules are absent/.test(text),
    why: `they compare against the project's shared folder (reference implementations, conformance vectors, corpus sessions, the real pi-condense releases), not found at ../shared (${SHARED})`,
    how: 'put that folder at ../shared, beside the clone',
  },
  {
    test: /native (binding|binary|addon)|needs the native|pure-JS fallback answers|target\/binding\.d\.ts/,
    why: 'they need the native binary, which did not load',
    how: '`npm run build` (a Rust toolchain builds it)',
  },
  {
    test: /fallback forced|CONDENSE_NATIVE_FORCE_FALLBACK/,
    why: 'CONDENSE_NATIVE_FORCE_FALLBACK is set',
    how: 'unset it',
  },
  {
    test: /npm\/[\w-]+\/condense-native\.[\w-]+\.node is (not built|built only by the release workflow)/,
    why: 'the binaries of the other platforms are not built here',
    how: '`npm run build:all` builds the Linux and macOS ones (zig); the Windows ones come from the release workflow',
  },
  {
    test: /below pi .*engines|below pi's engines|no node on PATH to run pi/,
    why: "they run pi itself, which needs Node >= 22.19 (pi's engines)",
    how: '`PATH=$(node scripts/nodes.js bin 24):$PATH npm run test:node`',
  },
];

/** The group of a skip reason: one of GROUPS, or the reason itself. */
function groupOf(reason) {
  const text = String(reason || 'no reason given');
  const known = GROUPS.find((g) => (typeof g.test === 'function' ? g.test(text) : g.test.test(text)));
  if (known) return { key: known.why, why: known.why, how: known.how };
  const set = /^([A-Z][A-Z0-9_]+) is set/.exec(text);
  return { key: text, why: text, how: set ? `unset ${set[1]}` : null };
}

const group = (n) => n.toLocaleString('en-US');

/**
 * The closing lines of a run under `runtime` that ran `total` tests and
 * skipped `skips` (`[{ reason, file }]`), biggest group first; a line per
 * group, and none but the first when nothing was skipped. A skip the user
 * asked for (--test-name-pattern) is not counted.
 */
function summaryLines(runtime, total, skips) {
  const counted = skips.filter((s) => !/does not match pattern/.test(String(s.reason)));
  const groups = new Map();
  for (const s of counted) {
    const g = groupOf(s.reason);
    const have = groups.get(g.key) ?? { ...g, count: 0, files: new Set() };
    have.count++;
    if (s.file) have.files.add(path.basename(s.file));
    groups.set(g.key, have);
  }
  const lines = [`${runtime}: ${group(total)} tests, ${group(counted.length)} skipped${counted.length ? ':' : ''}`];
  for (const g of [...groups.values()].sort((a, b) => b.count - a.count)) {
    const files = [...g.files].sort();
    const where = files.length > 0 ? ` (${files.slice(0, 12).join(', ')}${files.length > 12 ? `, ${files.length - 12} more files` : ''})` : '';
    lines.push(`  ${group(g.count)} skipped${where}: ${g.why}${g.how ? `; to run them: ${g.how}` : ''}`);
  }
  return lines;
}

module.exports = { summaryLines, groupOf, GROUPS };
