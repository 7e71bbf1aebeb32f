'use strict';

// The change-detection contract (docs/API.md, "What a kept render sees"), class
// by class, for both dialects: a kept render must give what a stateless
// render of the same input gives, after any change a kept render detects
// (appends, truncation, branch switches, compaction, in-place edits of each
// fingerprinted value, indexer changes, config and boundary changes). An
// edit that keeps every fingerprinted value is not detected; after one,
// `invalidate()` and `verify: true` must give the exact answer.
//
// Kept paths: a PruneSession (plus one in verify mode), the drop-ins on an
// indexer over a state object (js/pure's createIndexer) and, when ../shared
// is present, the drop-ins on the reference's own ToolCallIndexer, mutated
// with its own methods and compared with the reference's pruneMessages.
//
// FC_SEED=<n> replays a seed, FC_RUNS=<n> changes the number of runs (the
// checks that every class was reached then stay off).

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fc = require('fast-check');
const fs = require('node:fs');
const path = require('node:path');

const api = require('..');
const pure = { '2.4.3': require('../js/pure/v2.4.js'), '2.9.1': require('../js/pure/v2.9.js') };
const dropIns = { '2.4.3': require('../js/pi-condense-2.4.js'), '2.9.1': require('../js/pi-condense-2.9.js') };
const { Fingerprints } = require('../js/fingerprint.js');
const { Host, DETECTED, applyToIndexer } = require('./helpers/changes.js');
const { loadReference, fillIndexer, releaseArgs, SKIP_MESSAGE } = require('./helpers/indexer.js');
const { outcome, assertSameRender } = require('./helpers/render-outcome.js');

const skip = fs.existsSync(path.join(__dirname, '..', '..', 'shared', 'reference')) ? false : SKIP_MESSAGE;
const SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : 20261213;
const RUNS = process.env.FC_RUNS ? Number(process.env.FC_RUNS) : undefined;
const STEPS = 16;
const params = (numRuns) => ({ seed: SEED, numRuns: RUNS ?? numRuns, endOnFailure: true, includeErrorInReport: true });

// The classes, weighted; each test takes the ones its path has.
const MESSAGES = { append: 10, truncate: 2, branch: 2, compaction: 2, same: 1 };
// Custom messages are few, so their classes weigh more.
const EDITS = Object.fromEntries(Object.keys(DETECTED).map((k) => [k, k === 'customType' || k === 'refsCount' ? 5 : 2]));
const INDEXER = { record: 4, recordReplaced: 2, dedup: 2, shortRef: 2, chain: 3, summaryBody: 2 };
const UNDETECTED = { undetected: 3 };
const kindsFor = (settings) => ({ ...MESSAGES, ...EDITS, ...INDEXER, ...UNDETECTED, ...settings });

// got: a kept render; want: the stateless one. `exactCodes`: both are this
// project's, so an error must carry the same code.
const assertSame = (got, want, label, exactCodes) =>
  assertSameRender(got, want, label, { wanted: 'the stateless render', tested: 'the kept render', exactCodes, fullResult: true });

const differs = (a, b) =>
  Boolean(a.error) !== Boolean(b.error) ||
  (!a.error &&
    (a.value.pruned !== b.value.pruned ||
      a.value.beforeChars !== b.value.beforeChars ||
      a.value.afterChars !== b.value.afterChars ||
      JSON.stringify(a.value.messages) !== JSON.stringify(b.value.messages) ||
      JSON.stringify(a.reports) !== JSON.stringify(b.reports)));

// An undetected edit must keep every value js/fingerprint.js reads, or it
// belongs to another class (and the README's list would be wrong).
function assertUndetectable(step) {
  if (!step.applied) return;
  const prints = new Fingerprints();
  prints.push(step.before);
  assert.ok(prints.matches(0, step.after), `the ${step.what} edit changed a fingerprinted value: ${JSON.stringify(step.after).slice(0, 300)}`);
}

// Counts what each test reached, so a run that misses a class fails.
function tally() {
  const seen = { renders: 0, pruned: 0, errors: 0, stale: 0, applied: {} };
  return {
    seen,
    step(step) {
      if (step.applied) seen.applied[step.kind] = (seen.applied[step.kind] ?? 0) + 1;
    },
    render(result) {
      seen.renders++;
      if (result === 'pruned') seen.pruned++;
      if (result === 'error') seen.errors++;
    },
    check(t, label, kinds) {
      t?.diagnostic?.(`${label}: ${JSON.stringify(seen)}`);
      if (RUNS !== undefined) return;
      for (const kind of Object.keys(kinds)) assert.ok((seen.applied[kind] ?? 0) >= 5, `${label}: class ${kind} applied ${seen.applied[kind] ?? 0} times`);
      assert.ok(seen.pruned > seen.renders / 3, `${label}: only ${seen.pruned} of ${seen.renders} renders pruned`);
      assert.ok(seen.errors < seen.renders / 10, `${label}: ${seen.errors} of ${seen.renders} renders threw`);
    },
  };
}

for (const dialect of ['2.4.3', '2.9.1']) {
  const v24 = dialect === '2.4.3';

  test(`${dialect}: PruneSession and PruneSession({ verify: true }) equal stateless pruneMessages after every class of change`, (t) => {
    // The session's boundary moves only at its own flushes; its config is
    // fixed.
    const kinds = kindsFor(v24 ? { flush: 2 } : {});
    const counts = tally();
    fc.assert(
      fc.property(fc.gen(), (g) => {
        const host = new Host(g, dialect);
        let boundary = host.boundary;
        const options = () => ({ config: host.config, state: host.state, thinkingStripBoundaryTimestamp: boundary, dialect });
        const kept = new api.PruneSession(options());
        const verifying = new api.PruneSession({ ...options(), verify: true });
        const unaware = new api.PruneSession(options()); // never told about undetected edits
        let rendered = null;
        try {
          for (let s = 0; s < STEPS; s++) {
            const step = host.step(kinds);
            if (step.kind === 'flush') step.applied = rendered !== null;
            counts.step(step);
            if (step.op) for (const session of [kept, verifying, unaware]) session.setState(host.state);
            if (step.kind === 'flush') {
              if (rendered === null) continue;
              const t = host.config.thinkingStrip;
              const stamps = rendered.filter((m) => m && m.role === 'assistant' && typeof m.timestamp === 'number').map((m) => m.timestamp);
              const next = t && t.enabled ? pure['2.4.3'].computeThinkingBoundary(stamps, t.keepLastTurns, boundary ?? undefined) : boundary;
              const expected = next === undefined || Number.isNaN(next) ? boundary : next;
              for (const [name, session] of Object.entries({ kept, verifying, unaware })) {
                assert.equal(session.flush().thinkingStripBoundaryTimestamp, expected ?? null, `${dialect} step ${s} flush (${name})`);
              }
              boundary = expected;
              continue;
            }
            if (step.undetected) assertUndetectable(step);
            const label = `${dialect} step ${s} ${step.kind}${step.applied ? '' : ' (nothing fit)'} at ${host.length} messages`;
            const shown = host.shown();
            const want = outcome(() => api.pruneMessages(structuredClone(shown), options()));
            if (step.undetected) kept.invalidate();
            const result = assertSame(
              outcome(() => kept.render(structuredClone(shown))),
              want,
              `${label}, session${step.undetected ? ' after invalidate()' : ''}`,
              true,
            );
            assertSame(outcome(() => verifying.render(structuredClone(shown))), want, `${label}, verify: true`, true);
            const stale = outcome(() => unaware.render(structuredClone(shown)));
            if (step.undetected && step.applied) {
              // Not asserted: an undetected edit may leave this answer stale.
              if (differs(stale, want)) counts.seen.stale++;
              unaware.invalidate();
            }
            rendered = shown;
            counts.render(result);
          }
        } finally {
          for (const session of [kept, verifying, unaware]) session.close();
        }
      }),
      params(70),
    );
    counts.check(t, `${dialect} session`, kinds);
    if (RUNS === undefined) assert.ok(counts.seen.stale > 0, 'no undetected edit ever changed an answer: the class is not exercised');
  });

  // The drop-ins take a config and (2.4.3) a boundary at every call.
  const dropInKinds = kindsFor(v24 ? { config: 2, boundary: 2 } : { config: 2 });
  const dropInArgs = (host, indexer, sink) => releaseArgs(dialect, indexer, host.config, host.boundary ?? undefined, sink);

  // The indexer a drop-in is handed, over the host's state object (mutated
  // in place): what js/pure's createIndexer answers, rebuilt after each op.
  // It has the documented methods and nothing else (no summaryBodies): a
  // changed summary is seen from what the methods answer.
  function stateIndexer(state) {
    let inner = pure[dialect].createIndexer(state);
    const indexer = {
      refresh: () => (inner = pure[dialect].createIndexer(state)),
      isSummarized: (key) => inner.isSummarized(key),
      getRecord: (key) => inner.getRecord(key),
      getShortRefForToolCallId: (key) => inner.getShortRefForToolCallId(key),
      getChainEntries: () => inner.getChainEntries(),
      getPerBatchSummaryTextForToolCallIds: (ids) => inner.getPerBatchSummaryTextForToolCallIds(ids),
      findChainEntryByBlockId: (blockId) => inner.findChainEntryByBlockId(blockId),
    };
    if (!v24) indexer.hasLegacyBareRecord = (id) => inner.hasLegacyBareRecord(id);
    return indexer;
  }

  // One run of a drop-in: `indexerFor(host)` makes the indexer, `onOp`
  // performs an indexer op on it, `expected` is the stateless answer.
  function runDropIn(g, counts, { indexerFor, onOp, expected, exactCodes, label }) {
    const host = new Host(g, dialect);
    const indexer = indexerFor(host);
    const dropIn = dropIns[dialect];
    try {
      for (let s = 0; s < STEPS; s++) {
        const step = host.step(dropInKinds);
        counts.step(step);
        if (step.op) onOp(indexer, step.op);
        if (step.undetected) assertUndetectable(step);
        const shown = host.shown();
        const want = outcome((sink) => expected(structuredClone(shown), host, indexer, sink));
        if (step.undetected) dropIn.invalidate(indexer);
        const result = assertSame(
          outcome((sink) => dropIn.pruneMessages(structuredClone(shown), ...dropInArgs(host, indexer, sink))),
          want,
          `${label} step ${s} ${step.kind}${step.applied ? '' : ' (nothing fit)'} at ${host.length} messages${step.undetected ? ' after invalidate(indexer)' : ''}`,
          exactCodes,
        );
        counts.render(result);
      }
    } finally {
      dropIn.invalidate(indexer);
    }
  }

  test(`${dialect}: the drop-in on an indexer over a state object equals stateless pruneMessages after every class of change`, (t) => {
    const counts = tally();
    fc.assert(
      fc.property(fc.gen(), (g) => {
        runDropIn(g, counts, {
          label: `${dialect} drop-in (state indexer)`,
          exactCodes: true,
          indexerFor: (host) => stateIndexer(host.state),
          onOp: (indexer) => indexer.refresh(),
          expected: (messages, host, indexer, sink) =>
            api.pruneMessages(messages, { state: host.state, config: host.config, thinkingStripBoundaryTimestamp: host.boundary, dialect, diagnostics: sink }),
        });
      }),
      params(70),
    );
    counts.check(t, `${dialect} drop-in (state indexer)`, dropInKinds);
  });

  test(`${dialect}: the drop-in on the reference's ToolCallIndexer equals the reference's pruneMessages after every class of change`, { skip }, async (t) => {
    const reference = await loadReference(dialect);
    const counts = tally();
    fc.assert(
      fc.property(fc.gen(), (g) => {
        runDropIn(g, counts, {
          label: `${dialect} drop-in (reference indexer)`,
          exactCodes: false,
          indexerFor: (host) => fillIndexer(reference, dialect, host.state).indexer,
          onOp: applyToIndexer,
          expected: (messages, host, indexer, sink) => reference.pruneMessages(messages, ...dropInArgs(host, indexer, sink)),
        });
      }),
      params(70),
    );
    counts.check(t, `${dialect} drop-in (reference indexer)`, dropInKinds);
  });
}

// Cases the properties above found, kept as small exact ones.

const chainTurn = () => [
  { role: 'user', content: 'do it', timestamp: 1000 },
  { role: 'assistant', content: [{ type: 'toolCall', id: 'a', name: 'bash', arguments: { command: 'ls' } }], timestamp: 1001 },
  { role: 'toolResult', toolCallId: 'a', toolName: 'bash', content: [{ type: 'text', text: 'out' }], isError: true, timestamp: 1002 },
  { role: 'assistant', content: [{ type: 'text', text: 'done' }], timestamp: 1003 },
  { role: 'user', content: 'next', timestamp: 1004 },
];
const protecting = {
  chains: [{ blockId: 'b1', startUserTimestamp: 1000, droppedToolCallIds: [], finalAssistantTimestamp: 1003, toolRefs: [], compressedAt: 2000, protectedToolCallIds: ['a'], rangeSummaryText: 'sum' }],
};
const chainConfig = { chainCompression: { enabled: true } };

function assertStateless(got, messages, options, label) {
  const want = api.pruneMessages(structuredClone(messages), options);
  assert.equal(JSON.stringify(got.messages), JSON.stringify(want.messages), `${label}: messages`);
  assert.equal(got.beforeChars, want.beforeChars, `${label}: beforeChars`);
  assert.equal(got.afterChars, want.afterChars, `${label}: afterChars`);
}

for (const dialect of ['2.4.3', '2.9.1']) {
  test(`${dialect}: an edit of a tool result a chain block quotes reaches the block (session, verify, drop-in)`, () => {
    const options = { state: protecting, config: chainConfig, dialect };
    const edits = {
      toolName: (m) => (m[2].toolName = 'write'),
      'text length': (m) => (m[2].content[0].text = 'output'),
      'a block added': (m) => m[2].content.push({ type: 'text', text: 'more' }),
    };
    for (const [name, edit] of Object.entries(edits)) {
      const messages = chainTurn();
      const session = new api.PruneSession(options);
      const verifying = new api.PruneSession({ ...options, verify: true });
      const indexer = pure[dialect].createIndexer(protecting);
      const dropIn = (m) => dropIns[dialect].pruneMessages(structuredClone(m), indexer, chainConfig.chainCompression);
      for (const s of [session, verifying]) s.render(structuredClone(messages));
      dropIn(messages);
      edit(messages);
      assertStateless(session.render(structuredClone(messages)), messages, options, `${name}, session`);
      assertStateless(verifying.render(structuredClone(messages)), messages, options, `${name}, verify: true`);
      assertStateless(dropIn(messages), messages, options, `${name}, drop-in`);
      session.close();
      verifying.close();
      dropIns[dialect].invalidate(indexer);
    }
    // Undetected (same length): invalidate() and verify must still be exact.
    const messages = chainTurn();
    const session = new api.PruneSession(options);
    const verifying = new api.PruneSession({ ...options, verify: true });
    for (const s of [session, verifying]) s.render(structuredClone(messages));
    messages[2].content[0].text = 'OUT';
    session.invalidate();
    assertStateless(session.render(structuredClone(messages)), messages, options, 'same length, session after invalidate()');
    assertStateless(verifying.render(structuredClone(messages)), messages, options, 'same length, verify: true');
    session.close();
    verifying.close();
  });

  test(`${dialect}: after invalidate(), an empty conversation is read as empty and a flush still reads the last render`, () => {
    const config = { ...chainConfig, ...(dialect === '2.4.3' ? { thinkingStrip: { enabled: true, keepLastTurns: 1 } } : {}) };
    const messages = chainTurn();
    const session = new api.PruneSession({ state: protecting, config, dialect });
    if (dialect === '2.4.3') {
      const other = new api.PruneSession({ state: protecting, config, dialect });
      other.render(structuredClone(messages));
      other.invalidate();
      // The last assistant of the last render (SPEC 6, keepLastTurns 1).
      assert.equal(other.flush().thinkingStripBoundaryTimestamp, 1003, 'flush after invalidate()');
      other.close();
    }
    session.render(structuredClone(messages));
    session.setState({});
    session.render([]); // nothing can change: answered without reading
    session.invalidate();
    if (dialect === '2.4.3') assert.equal(session.flush().thinkingStripBoundaryTimestamp, null, 'flush over no messages');
    session.setState(protecting);
    assertStateless(session.render([]), [], { state: protecting, config, dialect }, 'render of []');
    session.close();
  });

  test(`${dialect}: a session sees a change made across renders that read nothing`, () => {
    // Arguments removed at one render and given back (other values) at the
    // next: each render's change is one the fingerprint sees.
    const messages = chainTurn();
    messages[2].isError = false;
    const key = dialect === '2.4.3' ? 'a' : 'a@1002';
    const withRecord = { records: { [key]: { toolCallId: 'a', resultTimestamp: 1002, toolName: 'bash', args: {} } } };
    const config = { errorPurge: { enabled: true, cooldownTurns: 0, minArgChars: 0 } };
    const session = new api.PruneSession({ state: withRecord, config, dialect });
    session.render(structuredClone(messages));
    session.setState({}); // nothing can change: renders answer without reading
    delete messages[1].content[0].arguments;
    session.render(structuredClone(messages));
    messages[1].content[0].arguments = { command: 'x'.repeat(300) };
    session.render(structuredClone(messages));
    session.setState(withRecord);
    assertStateless(session.render(structuredClone(messages)), messages, { state: withRecord, config, dialect }, 'after the state changes back');
    session.close();
  });
}
