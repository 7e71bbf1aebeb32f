'use strict';

// Differential: the native addon against the pure-JS implementation
// (js/pure.js, the oracle) on generated sessions in pi's shapes, with a state
// and config derived from each session: summarized ids (some through dedup
// aliases or spilled to files), short refs and ref aliases, chains that drop
// ids (some no longer present), protect outputs and point at each other with
// {bN}, per-batch summaries, errored calls with big arguments, thinking
// blocks, a boundary or the fallback. pruned, beforeChars, afterChars, the
// output text, frontier and stats must be equal.
//
// FC_SEED=<n> replays a seed, FC_RUNS=<n> changes the number of runs.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fc = require('fast-check');
const { prune, Pruner } = require('..');
const pure = require('../js/pure.js');
const { caseArb } = require('./helpers/generate');

const SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : 20260530;
const RUNS = process.env.FC_RUNS ? Number(process.env.FC_RUNS) : undefined;


// These suites are about the native addon: make sure it is the one answering
// (the loader falls back to pure JS when no binary loads).
test('the native backend answers', { skip: process.env.CONDENSE_NATIVE_FORCE_FALLBACK ? 'fallback forced' : false }, () => {
  const { backend } = require('..');
  if (backend !== undefined) assert.equal(backend, 'native');
});

// ---------------------------------------------------------------------------
// Comparison

function assertSame(actual, expected, bytes, label) {
  assert.equal(actual.pruned, expected.pruned, `${label}: pruned`);
  assert.equal(actual.beforeChars, expected.beforeChars, `${label}: beforeChars`);
  assert.equal(actual.afterChars, expected.afterChars, `${label}: afterChars`);
  if (expected.pruned) {
    assert.equal(actual.messages.toString('utf8'), JSON.stringify(expected.messages), `${label}: messages`);
  } else {
    assert.equal(actual.messages, null, `${label}: messages of a no-op`);
  }
  assert.deepEqual(actual.frontier, expected.frontier, `${label}: frontier`);
  assert.deepEqual(actual.stats, expected.stats, `${label}: stats`);
}

function oracle(messages, options) {
  try {
    return { value: pure.pruneMessages(messages, options) };
  } catch (error) {
    return { error };
  }
}

function check(run, messages, bytes, options, label) {
  const want = oracle(messages, options);
  const copy = Buffer.from(bytes);
  let got;
  try {
    got = { value: run(bytes) };
  } catch (error) {
    got = { error };
  }
  assert.ok(bytes.equals(copy), `${label}: the caller buffer changed`);
  if (want.error) {
    assert.ok(got.error, `${label}: pure.js throws ${want.error.message} but native answered`);
    assert.match(String(got.error.code), /^ERR_CONDENSE_/, label);
    return 'error';
  }
  assert.ok(!got.error, `${label}: native threw ${got.error && got.error.code} ${got.error && got.error.message}`);
  assertSame(got.value, want.value, bytes, label);
  return want.value.pruned ? 'pruned' : 'unchanged';
}

const params = (numRuns) => ({ seed: SEED, numRuns: RUNS ?? numRuns, endOnFailure: true });

// ---------------------------------------------------------------------------

test('prune equals pure.pruneMessages on generated sessions', () => {
  const seen = { pruned: 0, unchanged: 0, error: 0 };
  const stats = {};
  fc.assert(
    fc.property(caseArb, ({ messages, state, config, boundary, bytes }) => {
      const options = { state, config, thinkingStripBoundaryTimestamp: boundary };
      seen[check((b) => prune(b, options), messages, bytes, options, 'prune')]++;
      const r = pure.pruneMessages(messages, options);
      for (const [k, v] of Object.entries(r.stats)) if (v > 0) stats[k] = (stats[k] || 0) + 1;
    }),
    params(2000),
  );
  // The generator reaches both outcomes, and every phase, often.
  if (RUNS === undefined) {
    assert.ok(seen.pruned > 500 && seen.unchanged > 100, JSON.stringify(seen));
    for (const k of ['stubbed', 'purgedArgs', 'chainDropped', 'chainInserted', 'finalThinkingStripped', 'thinkingStripped']) {
      assert.ok(stats[k] > 50, `${k}: ${JSON.stringify(stats)}`);
    }
  }
});

test('Pruner with setState between runs equals pure.pruneMessages', () => {
  const seqArb = fc.tuple(fc.array(caseArb, { minLength: 2, maxLength: 4 }), fc.array(fc.nat(9), { minLength: 4, maxLength: 4 }));
  fc.assert(
    fc.property(seqArb, ([cases, coins]) => {
      // One held Pruner for the sequence, as a host holds it between
      // renders; the state changes at each "flush", the config sometimes.
      let config = cases[0].config;
      const pruner = new Pruner(config);
      let state;
      cases.forEach((c, i) => {
        if (coins[i] === 0) {
          config = c.config;
          pruner.setConfig(config);
        }
        if (coins[i] !== 1 || state === undefined) {
          // coin 1: a render without a flush keeps the previous state
          state = c.state;
          pruner.setState(state);
          if (coins[i] === 2) pruner.setState(state); // setting it twice changes nothing
        }
        const options = { state, config, thinkingStripBoundaryTimestamp: c.boundary };
        check((b) => pruner.prune(b, { thinkingStripBoundaryTimestamp: c.boundary }), c.messages, c.bytes, options, `Pruner run ${i}`);
        // The same bytes again: a held Pruner has no memory of the last render.
        check((b) => pruner.prune(b, { thinkingStripBoundaryTimestamp: c.boundary }), c.messages, c.bytes, options, `Pruner rerun ${i}`);
      });
    }),
    params(400),
  );
});
