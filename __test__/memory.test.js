'use strict';

// Memory: the RSS stays flat over many renders through every API (prune and
// Pruner.prune on Buffers, pruneMessages, PruneSession and the two
// pi-condense drop-ins over growing conversations), in a fresh child
// process per API and mode (helpers/memory-child.js, which says what a
// round is). Two modes:
// - yield: renders one per event-loop turn, as a host makes them, sampled
//   after every few rounds. What lies outside the engine's heap (the RSS
//   less the heap's size: the addon's memory, Buffers, malloc) and what is
//   live in the heap may each grow by FLAT_MIB at most from the median of
//   the first three samples to the median of the last three (a median, as
//   the RSS of Bun wanders by some 4 MiB either way from one sample to the
//   next). Seven sample intervals lie between them (700 renders of the
//   whole sample, about 600 of a growing conversation), and the last test
//   plants a leak of LEAK_BYTES per render to show that it fails.
//   The heap's own size is left out, and Node's young generation is held
//   at one size (YOUNG_GENERATION): V8 doubles its semi-spaces some
//   hundreds of renders in (the heap goes from 14 to 22 to 38 MiB), and
//   the memory it keeps beside them grows with them, 8 MiB outside the
//   heap at a step, which is the engine's and no leak.
// - burst: renders back to back without the loop turning, then a gc. The
//   RSS may grow by BURST_MIB at most. Results used to reach JS as external
//   buffers that engines free only after the loop turns, and 600 renders of
//   corpus medium took Node to 1.3 GB (docs/RELIABILITY.md); a dropped
//   PruneSession still holds its conversation until then, so the burst
//   sessions are closed.
// npm run soak runs the same APIs 100 000 times.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const ROOT = process.env.CONDENSE_MEMORY_TEST_PACKAGE || path.join(__dirname, '..');
const CHILD = path.join(__dirname, 'helpers', 'memory-child.js');
const isBun = typeof globalThis.Bun !== 'undefined';
const forced = Boolean(process.env.CONDENSE_NATIVE_FORCE_FALLBACK);

const FLAT_MIB = 8;
const BURST_MIB = 40;
const LEAK_BYTES = 24 * 1024;
// MiB of each semi-space; Node's largest by default on 64-bit hosts.
const YOUNG_GENERATION = ['--min-semi-space-size=16', '--max-semi-space-size=16'];

function run(api, mode, samples, roundsPerSample, env = {}) {
  const args = isBun ? [CHILD] : ['--expose-gc', ...YOUNG_GENERATION, CHILD];
  const r = spawnSync(process.execPath, [...args, api, mode, String(samples), String(roundsPerSample)], {
    env: { ...process.env, PKG: ROOT, ...env },
    encoding: 'utf8',
    timeout: 180_000,
  });
  assert.equal(r.status, 0, `child failed: ${r.stderr}`);
  const out = JSON.parse(r.stdout.trim().split('\n').pop());
  if (process.env.CONDENSE_MEMORY_TEST_VERBOSE) console.log(api, mode, out.renders, JSON.stringify(out.samples.map((s) => Object.values(s).map((v) => v.toFixed(1)))));
  return out;
}

// [api, rounds per sample when yielding, when not] (a whole-sample API's
// round is one render, a kept API's one growing conversation, about 85
// renders)
const APIS = [
  ['prune', 100, 40],
  ['Pruner.prune', 100, 40],
  ['pruneMessages', 100, 40],
  ['PruneSession', 1, 1],
  ['pi-condense-2.4', 1, 1],
  ['pi-condense-2.9', 1, 1],
];
const mib = (n) => `${n.toFixed(1)} MiB`;

const median3 = (xs) => [...xs].sort((a, b) => a - b)[1];

// What outside the heap and live in it grew by over a run of mode yield:
// [what, from, to] (medians of the first and the last three samples).
function growthOf(out) {
  return [
    ['outside the heap', (s) => s.rss - s.heapTotal],
    ['live in the heap', (s) => s.heapUsed],
  ].map(([what, f]) => {
    const xs = out.samples.map(f);
    return [what, median3(xs.slice(0, 3)), median3(xs.slice(-3))];
  });
}

for (const [api, yieldRounds, burstRounds] of APIS) {
  test(`${api}: the RSS stays flat over rounds of renders, one per event-loop turn`, { skip: forced && 'fallback forced', timeout: 180_000 }, () => {
    const out = run(api, 'yield', 9, yieldRounds);
    assert.equal(out.backend, 'native');
    assert.equal(out.pruned, true);
    const shown = () => out.samples.map((s) => `${s.rss.toFixed(1)}/${s.heapTotal.toFixed(1)}/${s.heapUsed.toFixed(1)}`).join(', ');
    for (const [what, first, last] of growthOf(out)) {
      assert.ok(last - first <= FLAT_MIB, `${api}: ${what} ${mib(first)} -> ${mib(last)} over ${out.renders * 7} renders (RSS/heap/used MiB: ${shown()})`);
    }
  });

  test(`${api}: renders without yielding are freed by a gc`, { skip: forced && 'fallback forced', timeout: 180_000 }, () => {
    const out = run(api, 'burst', 6, burstRounds);
    assert.equal(out.pruned, true);
    const rss = out.samples.map((s) => s.rss);
    const growth = Math.max(...rss) - rss[0];
    assert.ok(growth <= BURST_MIB, `${api}: RSS grew by ${mib(growth)} over ${out.renders * 6} renders without yielding (samples ${rss.map(mib).join(', ')})`);
  });
}

test(`the flat-RSS measure fails a leak of ${LEAK_BYTES / 1024} KiB per render`, { skip: forced && 'fallback forced', timeout: 180_000 }, () => {
  const [api, yieldRounds] = APIS[0];
  const out = run(api, 'yield', 9, yieldRounds, { CONDENSE_MEMORY_TEST_LEAK_BYTES: String(LEAK_BYTES) });
  const [[what, first, last]] = growthOf(out);
  assert.ok(last - first > FLAT_MIB, `${api} with a planted leak: ${what} ${mib(first)} -> ${mib(last)} over ${out.renders * 7} renders, within ${FLAT_MIB} MiB`);
});
