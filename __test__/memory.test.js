'use strict';

// Memory that only the event loop would give back. Results used to reach JS
// as external buffers over Rust allocations; engines run the finalizers of
// those only after the event loop turns, so a host that prunes in a loop
// without yielding (a batch job, a replay, a benchmark) held every result
// it had produced: 600 renders of corpus medium took Node to 1.3 GB. Results
// are now copies the engine owns, freed by a plain gc. Each case runs in a
// fresh child process of the current runtime and checks the RSS after a
// synchronous loop and a gc against the RSS before it.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const ROOT = process.env.CONDENSE_MEMORY_TEST_PACKAGE || path.join(__dirname, '..');
const SAMPLE = path.join(__dirname, '..', 'sample', 'session.json');
const isBun = typeof globalThis.Bun !== 'undefined';
const forced = Boolean(process.env.CONDENSE_NATIVE_FORCE_FALLBACK);

// The child: loads the package, warms the call up, then runs it `n` times
// back to back and prints the RSS growth in MiB after a full gc.
const CHILD = `
const fs = require('node:fs');
const m = require(process.env.PKG);
if (m.backend !== 'native') { console.log(JSON.stringify({ skip: m.backend })); process.exit(0); }
const c = JSON.parse(fs.readFileSync(process.env.SAMPLE, 'utf8'));
const opts = { state: c.state, config: c.config, thinkingStripBoundaryTimestamp: c.thinkingBoundaryTimestamp };
const bytes = Buffer.from(JSON.stringify(c.messages));
const fullGc = () => (typeof Bun !== 'undefined' ? Bun.gc(true) : (global.gc(), global.gc()));
let session = null;
const calls = {
  prune: () => m.prune(bytes, opts),
  pruneMessages: () => m.pruneMessages(c.messages, opts),
  session: () => {
    if (session) session.close();
    session = new m.PruneSession(opts);
    return session.render(c.messages);
  },
};
const call = calls[process.env.API];
const n = Number(process.env.N);
let last = call();
for (let i = 0; i < 50; i++) call();
fullGc();
const before = process.memoryUsage().rss;
for (let i = 0; i < n; i++) last = call();
fullGc();
const after = process.memoryUsage().rss;
console.log(JSON.stringify({ growthMiB: (after - before) / 2 ** 20, pruned: last.pruned, inputBytes: bytes.length }));
`;

function run(api, n) {
  const args = isBun ? ['-e', CHILD] : ['--expose-gc', '-e', CHILD];
  const r = spawnSync(process.execPath, args, {
    env: { ...process.env, PKG: ROOT, SAMPLE, API: api, N: String(n) },
    encoding: 'utf8',
    timeout: 120000,
  });
  assert.equal(r.status, 0, `child failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

// n renders of the sample (a 0.4 MB array) hold n outputs when the results
// wait for the event loop (the old binary: 181 MiB for 400 prune renders);
// the bound is 40 MiB. The session case starts a new PruneSession per render
// and closes the previous one: without close() each dropped session keeps
// its native log (about 1 MiB here) until the engine finalizes it after the
// event loop turns, and the RSS grew by ~300 MiB.
const cases = [
  ['prune', 400],
  ['pruneMessages', 300],
  ['session', 300],
];

for (const [api, n] of cases) {
  test(`${api}: ${n} renders without yielding are freed by a gc`, { skip: forced && 'fallback forced', timeout: 120_000 }, () => {
    const out = run(api, n);
    if (out.skip) return;
    assert.equal(out.pruned, true);
    if (process.env.CONDENSE_MEMORY_TEST_VERBOSE) console.log(api, out);
    const input = out.inputBytes / 2 ** 20;
    assert.ok(out.growthMiB < 40, `RSS grew by ${out.growthMiB.toFixed(1)} MiB over ${n} renders of a ${input.toFixed(2)} MiB input`);
  });
}
