'use strict';

// Property tests of the array APIs against the pure-JS implementation, on
// generated sessions (helpers/generate.js): pruneMessages on one array, and
// a PruneSession over a conversation that grows, branches back, gets older
// messages edited by "another extension", changes state at flushes and
// advances its boundary. Every render must equal pure.pruneMessages on the
// same array, and keep the caller's untouched objects.
//
// FC_SEED=<n> replays a seed, FC_RUNS=<n> changes the number of runs.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fc = require('fast-check');
const { pruneMessages, PruneSession } = require('..');
const pure = require('../js/pure.js');
const { caseArb } = require('./helpers/generate');

const SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) + 1 : 20261130;
const RUNS = process.env.FC_RUNS ? Number(process.env.FC_RUNS) : undefined;
const params = (numRuns) => ({ seed: SEED, numRuns: RUNS ?? numRuns, endOnFailure: true });

function oracle(messages, options) {
  try {
    return { value: pure.pruneMessages(messages, options) };
  } catch (error) {
    return { error };
  }
}

// got: what the native API did with `messages`; want: pure.js's answer.
function agree(got, want, messages, label) {
  if (want.error) {
    assert.ok(got.error, `${label}: pure.js throws ${want.error.message}, native answered`);
    assert.match(String(got.error.code), /^ERR_CONDENSE_/, label);
    return 'error';
  }
  assert.ok(!got.error, `${label}: native threw ${got.error && got.error.code} ${got.error && got.error.message}`);
  const a = got.value;
  const b = want.value;
  assert.equal(a.pruned, b.pruned, `${label}: pruned`);
  assert.equal(a.beforeChars, b.beforeChars, `${label}: beforeChars`);
  assert.equal(a.afterChars, b.afterChars, `${label}: afterChars`);
  assert.equal(JSON.stringify(a.messages), JSON.stringify(b.messages), `${label}: messages`);
  assert.deepEqual(a.frontier, b.frontier, `${label}: frontier`);
  assert.deepEqual(a.stats, b.stats, `${label}: stats`);
  if (!a.pruned) assert.equal(a.messages, messages, `${label}: a no-op returns the caller's array`);
  // Where pure.js keeps a caller's object, so must the native path.
  const inputs = new Set(messages);
  b.messages.forEach((m, k) => {
    if (inputs.has(m)) assert.equal(a.messages[k], m, `${label}: message ${k} should be the caller's own object`);
  });
  return a.pruned ? 'pruned' : 'unchanged';
}

function attempt(fn) {
  try {
    return { value: fn() };
  } catch (error) {
    return { error };
  }
}

test('pruneMessages equals pure.pruneMessages on generated sessions', () => {
  const seen = { pruned: 0, unchanged: 0, error: 0 };
  fc.assert(
    fc.property(caseArb, ({ messages, state, config, boundary }) => {
      const options = { state, config, thinkingStripBoundaryTimestamp: boundary };
      const snapshot = JSON.stringify(messages);
      seen[agree(attempt(() => pruneMessages(messages, options)), oracle(messages, options), messages, 'pruneMessages')]++;
      assert.equal(JSON.stringify(messages), snapshot, "the caller's array changed");
    }),
    params(1000),
  );
  if (RUNS === undefined) assert.ok(seen.pruned > 300 && seen.unchanged > 30, JSON.stringify(seen));
});

// One step of a host's life between renders.
const stepArb = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('append'), n: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('branch'), back: fc.integer({ min: 1, max: 6 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('edit'), at: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('flush') }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('setState') }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('same') }) },
);

test('a PruneSession over a growing, branching, edited conversation equals pure.pruneMessages at every render', () => {
  const seen = { renders: 0, pruned: 0, moved: 0 };
  fc.assert(
    fc.property(caseArb, fc.array(stepArb, { minLength: 4, maxLength: 14 }), fc.option(fc.integer({ min: 1, max: 3 })), (c, steps, keep) => {
      const { messages: all, state, boundary } = c;
      // Half the runs keep few turns, so flushes move the boundary often.
      const config = keep === null ? c.config : { ...c.config, thinkingStrip: { enabled: true, keepLastTurns: keep } };
      const empty = { records: {}, dedupAliases: {}, shortRefs: {}, refAliases: {}, chains: [], summaryBodies: [] };
      let current = state;
      let b = boundary;
      const session = new PruneSession({ config, state: current, thinkingStripBoundaryTimestamp: b });
      let log = all.slice(0, Math.min(2, all.length));
      let rendered = null; // what the session last indexed
      let failed = false;
      for (const step of steps) {
        if (step.op === 'append') log = log.concat(all.slice(log.length, log.length + step.n));
        if (step.op === 'branch') log = log.slice(0, Math.max(0, log.length - step.back));
        if (step.op === 'edit' && log.length > 0) {
          const at = step.at % log.length;
          const m = log[at];
          const edited = m !== null && typeof m === 'object' && !Array.isArray(m) ? { ...m, editedBy: 'another extension' } : m;
          log = [...log.slice(0, at), edited, ...log.slice(at + 1)];
        }
        if (step.op === 'setState') {
          current = current === state ? empty : state;
          session.setState(current);
        }
        if (step.op === 'flush') {
          if (failed || rendered === null) continue;
          const snap = session.flush();
          const t = config && config.thinkingStrip;
          if (t && t.enabled) {
            const stamps = rendered.filter((m) => m && m.role === 'assistant' && typeof m.timestamp === 'number').map((m) => m.timestamp);
            const next = pure.computeThinkingBoundary(stamps, t.keepLastTurns, b ?? undefined);
            if (next !== undefined && !Number.isNaN(next)) {
              if (next !== b) seen.moved++;
              b = next;
            }
          }
          assert.equal(snap.thinkingStripBoundaryTimestamp, b ?? null, 'flush');
          continue;
        }
        const input = structuredClone(log); // pi hands each render a fresh clone
        const options = { state: current, config, thinkingStripBoundaryTimestamp: b };
        const outcome = agree(attempt(() => session.render(input)), oracle(input, options), input, `render of ${input.length} after ${step.op}`);
        failed = outcome === 'error';
        rendered = input;
        seen.renders++;
        if (outcome === 'pruned') seen.pruned++;
      }
    }),
    params(150),
  );
  if (RUNS === undefined) assert.ok(seen.renders > 500 && seen.pruned > 200 && seen.moved > 10, JSON.stringify(seen));
});
