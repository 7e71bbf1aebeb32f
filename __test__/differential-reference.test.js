'use strict';

// Differential: the pure-JS oracles against pi-condense's own pruneMessages
// (../shared/reference), both dialects, on the same real ToolCallIndexer.
// Growing conversations (helpers/conversation.js) are rendered after most
// appended messages, with flushes that mutate the indexer between renders;
// every render must agree: pruned, both sizes, the messages, and (2.9) every
// diagnostic in order. Each render is also run through the state-based
// entry, with the state read back from the indexer's tables, and must agree
// too; a no-op must hand back the caller's array, and no input may change.
// Then odd values where the oracles follow the reference on purpose.
//
// SEED=<n> starts the conversations at another seed; CONVERSATIONS=<n>
// changes how many run per dialect. Skips without ../shared.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const v24 = require('../js/pure/v2.4.js');
const v29 = require('../js/pure/v2.9.js');
const { loadReference, releaseArgs, stateOfIndexer: stateOf, SKIP_MESSAGE } = require('./helpers/indexer.js');
const { outcome, assertSameRender: assertSame } = require('./helpers/render-outcome.js');
const { simulate } = require('./helpers/conversation.js');

const SEED = process.env.SEED ? Number(process.env.SEED) : 20260601;
const CONVERSATIONS = process.env.CONVERSATIONS ? Number(process.env.CONVERSATIONS) : 150;
const skip = fs.existsSync(path.join(__dirname, '..', '..', 'shared', 'reference')) ? false : SKIP_MESSAGE;

// Results a 2.9 render finds through the legacy bare-id rung (their own key
// is not summarized, their id has a legacy-only record).
function legacyRungs(messages, indexer) {
  return messages.filter(
    (m) =>
      m?.role === 'toolResult' &&
      !indexer.isSummarized(typeof m.timestamp === 'number' ? `${m.toolCallId}@${m.timestamp}` : m.toolCallId) &&
      indexer.hasLegacyBareRecord(m.toolCallId),
  ).length;
}

const assertSameRender = (got, want, label) => assertSame(got, want, label, { tested: 'the oracle' });

// Both entries of one dialect, with the release's signature order.
const DIALECTS = {
  '2.4.3': {
    withIndexer: (messages, indexer, config, boundary) => v24.pruneWithIndexer(messages, ...releaseArgs('2.4.3', indexer, config, boundary)),
    reference: (ref, messages, indexer, config, boundary) => ref.pruneMessages(messages, ...releaseArgs('2.4.3', indexer, config, boundary)),
    withState: (messages, state, config, boundary) =>
      v24.pruneMessages(messages, { state, config, thinkingStripBoundaryTimestamp: boundary }),
  },
  '2.9.1': {
    withIndexer: (messages, indexer, config, _boundary, sink) => v29.pruneWithIndexer(messages, ...releaseArgs('2.9.1', indexer, config, undefined, sink)),
    reference: (ref, messages, indexer, config, _boundary, sink) => ref.pruneMessages(messages, ...releaseArgs('2.9.1', indexer, config, undefined, sink)),
    withState: (messages, state, config, _boundary, sink) => v29.pruneMessages(messages, { state, config }, sink),
  },
};

for (const [dialect, run] of Object.entries(DIALECTS)) {
  test(`${dialect}: every render of growing conversations equals the reference's, on the same real indexer`, { skip }, async (t) => {
    const ref = await loadReference(dialect);
    const seen = { renders: 0, pruned: 0, unchanged: 0, legacyRung: 0, stats: {}, reports: {} };
    for (let n = 0; n < CONVERSATIONS; n++) {
      const seed = SEED + n;
      const indexer = new ref.ToolCallIndexer();
      let config;
      let step = 0;
      simulate({
        dialect,
        seed,
        indexer,
        onConfig: (c) => (config = c),
        render: (messages, boundary) => {
          const label = `${dialect} seed ${seed} render ${step++} (${messages.length} messages)`;
          const before = JSON.stringify(messages);
          const want = outcome((sink) => run.reference(ref, messages, indexer, config, boundary, sink));
          const got = outcome((sink) => run.withIndexer(messages, indexer, config, boundary, sink));
          assertSameRender(got, want, label);
          const fromState = outcome((sink) => run.withState(messages, stateOf(indexer), config, boundary, sink));
          assertSameRender(fromState, want, `${label}, from the state`);
          assert.equal(JSON.stringify(messages), before, `${label}: the input changed`);
          if (got.value && !got.value.pruned) assert.equal(got.value.messages, messages, `${label}: a no-op returns the caller's array`);

          seen.renders++;
          seen[got.value?.pruned ? 'pruned' : 'unchanged']++;
          for (const [k, v] of Object.entries(got.value?.stats ?? {})) if (v > 0) seen.stats[k] = (seen.stats[k] ?? 0) + 1;
          for (const r of got.reports) {
            const kind = String(r.key).startsWith('overlap:') ? 'overlap' : r.kind;
            seen.reports[kind] = (seen.reports[kind] ?? 0) + 1;
          }
          if (dialect === '2.9.1') seen.legacyRung += legacyRungs(messages, indexer);
        },
      });
    }
    t.diagnostic?.(`${dialect}: ${JSON.stringify(seen)}`);
    // The simulation reaches every phase and every diagnostic, often.
    if (CONVERSATIONS >= 150) {
      assert.ok(seen.renders > 3000 && seen.pruned > 1000 && seen.unchanged > 100, JSON.stringify(seen));
      const phases = ['stubbed', 'purgedArgs', 'chainDropped', 'chainInserted', 'finalThinkingStripped'];
      phases.push(dialect === '2.9.1' ? 'orphansSwept' : 'thinkingStripped');
      for (const k of phases) assert.ok(seen.stats[k] > 50, `${k}: ${JSON.stringify(seen.stats)}`);
      if (dialect === '2.9.1') {
        for (const kind of ['unresolved-range', 'overlap', 'range-id-mismatch', 'orphan-sweep']) {
          assert.ok(seen.reports[kind] > 20, `${kind}: ${JSON.stringify(seen.reports)}`);
        }
        assert.ok(seen.legacyRung > 50, `legacy rung: ${seen.legacyRung}`);
      }
    }
  });
}

// ---------------------------------------------------------------------------
// Odd values: inputs no vector holds, where the oracles follow the reference
// on purpose (each is run through both, on a real indexer filled from the
// state, and through the state-based entry).

const { fillIndexer } = require('./helpers/indexer.js');
const codes = require('../js/codes.js');

const PATH = 'a\nb/c.md';
const user = (timestamp) => ({ role: 'user', content: 'go', timestamp });
const call = (id, timestamp) => ({
  role: 'assistant',
  content: [{ type: 'toolCall', id, name: 'bash', arguments: { path: PATH } }],
  timestamp,
});
const result = (id, timestamp) => ({
  role: 'toolResult',
  toolCallId: id,
  toolName: 'bash',
  content: [{ type: 'text', text: 'out' }],
  isError: false,
  timestamp,
});
const final = (timestamp, content = [{ type: 'thinking', thinking: 'hm' }, { type: 'text', text: 'done' }]) => ({
  role: 'assistant',
  content,
  timestamp,
});
const entry = (fields) => ({
  blockId: 'b1',
  startUserTimestamp: 1,
  droppedToolCallIds: ['c1'],
  finalAssistantTimestamp: 4,
  toolRefs: ['t1'],
  compressedAt: 9,
  ...fields,
});
const record = (fields) => ({ toolCallId: 'c1', resultTimestamp: 3, toolName: 'bash', args: { path: PATH }, ...fields });
const CHAIN_ON = { chainCompression: { enabled: true, stripFinalAssistantThinking: true } };
const ONE_CALL = [call('c1', 2), result('c1', 3)];
const ONE_TURN = [user(1), call('c1', 2), result('c1', 3), final(4)];
const RECORDED = { records: { 'c1@3': record() } };

// `throws`: the code the oracle must throw (the reference throws there).
const ODD_CASES = [
  { label: 'protection that is a number', state: RECORDED, config: { protection: 5 }, throws: codes.INVALID_CONFIG },
  {
    label: 'protection without protectedPaths, the tool not listed',
    state: RECORDED,
    config: { protection: { protectedTools: ['read'] } },
    throws: codes.INVALID_CONFIG,
  },
  {
    label: 'a string protectedTools is searched as a string',
    state: RECORDED,
    config: { protection: { protectedTools: 'xbashx', protectedPaths: [] } },
  },
  {
    label: 'a glob that is a number matches only the empty path',
    state: { records: { 'c1@3': record({ args: { path: '' } }) } },
    config: { protection: { protectedTools: [], protectedPaths: [5] } },
  },
  {
    label: '**/ crosses a line terminator inside a directory name',
    state: RECORDED,
    config: { protection: { protectedTools: [], protectedPaths: ['**/*.md'] } },
  },
  {
    label: 'a record keyed "" is never returned by getRecord',
    state: { records: { '': record({ toolCallId: '', resultTimestamp: undefined, spillPath: '/s' }) } },
    config: { protection: { protectedTools: ['bash'], protectedPaths: [] } },
    messages: [call('', 2), result('', 'x')],
  },
  {
    label: 'a rangeSummaryText that is not a string',
    state: { chains: [entry({ rangeSummaryText: 0 })] },
    config: CHAIN_ON,
    messages: ONE_TURN,
    throws: codes.INVALID_STATE,
  },
  {
    label: 'a rangeSummaryText that is not a string, only referenced as {bN}',
    dialect: '2.9.1',
    state: {
      chains: [
        entry({ rangeSummaryText: 'see {b2}' }),
        entry({ blockId: 'b2', startUserTimestamp: 7, finalAssistantTimestamp: null, rangeSummaryText: 5 }),
      ],
    },
    config: CHAIN_ON,
    messages: ONE_TURN,
  },
  {
    label: 'a chain entry without droppedToolCallIds',
    state: { chains: [entry({ droppedToolCallIds: undefined, droppedOccurrenceKeys: [] })] },
    config: CHAIN_ON,
    messages: ONE_TURN,
  },
  {
    label: 'a final assistant whose content is null',
    state: { chains: [entry({ rangeSummaryText: 's' })] },
    config: CHAIN_ON,
    messages: [user(1), call('c1', 2), result('c1', 3), final(4, null)],
    throws: codes.INVALID_MESSAGE,
  },
  {
    label: 'a summary body whose ids are a string',
    state: { chains: [entry({ droppedOccurrenceKeys: ['c1@3'] })], summaryBodies: [{ toolCallIds: 'c1', text: 't' }] },
    config: CHAIN_ON,
    messages: ONE_TURN,
  },
];

// 2.4.3 states key records by bare id.
function stateFor(dialect, state) {
  if (dialect === '2.9.1' || !state.records) return state;
  return { ...state, records: Object.fromEntries(Object.values(state.records).map((r) => [r.toolCallId, r])) };
}

// One odd input through the reference and the oracle (indexer entry, and
// state entry unless `wrap` makes an indexer no state describes). Reports
// are collected and compared, unless `sink` stands in for the host's.
function oddRun(dialect, ref, { label, state, config, messages = ONE_CALL, throws, wrap, sink }) {
  const run = DIALECTS[dialect];
  const indexer = () => {
    const real = fillIndexer(ref, dialect, state).indexer;
    return wrap ? wrap(real) : real;
  };
  const withSink = (fn) => (sink === undefined ? outcome(fn) : outcome(() => fn(sink)));
  const want = withSink((s) => run.reference(ref, messages, indexer(), config, undefined, s));
  const got = withSink((s) => run.withIndexer(messages, indexer(), config, undefined, s));
  assertSameRender(got, want, `${dialect} ${label}`);
  if (!wrap) {
    const fromState = withSink((s) => run.withState(messages, state, config, undefined, s));
    assertSameRender(fromState, want, `${dialect} ${label}, from the state`);
  }
  if (throws) assert.equal(got.error?.code, throws, `${dialect} ${label}: ${got.error?.message}`);
  return { want, got };
}

test('odd values: the oracles answer or throw where the reference does', { skip }, async () => {
  for (const dialect of ['2.4.3', '2.9.1']) {
    const ref = await loadReference(dialect);
    for (const c of ODD_CASES) {
      if (c.dialect && c.dialect !== dialect) continue;
      oddRun(dialect, ref, { ...c, state: stateFor(dialect, c.state) });
    }
  }
});

test("the host's objects: a missing method or sink fails only where the reference uses it", { skip }, async () => {
  const ref = await loadReference('2.9.1');
  const state = { ...RECORDED, chains: [entry({ finalAssistantTimestamp: 99 })] };
  // An indexer with the phase-1 methods only: enough until chains are on.
  const phase1Only = (real) => ({
    isSummarized: (key) => real.isSummarized(key),
    hasLegacyBareRecord: (id) => real.hasLegacyBareRecord(id),
    getRecord: (key) => real.getRecord(key),
    getShortRefForToolCallId: (key) => real.getShortRefForToolCallId(key),
  });
  const base = { state, messages: ONE_TURN, wrap: phase1Only };
  oddRun('2.9.1', ref, { ...base, label: 'no chain methods, chains off', config: {} });
  const { got } = oddRun('2.9.1', ref, {
    ...base,
    label: 'no chain methods, chains on',
    config: CHAIN_ON,
    throws: codes.INVALID_ARGUMENT,
  });
  assert.equal(got.error.field, 'indexer.getChainEntries');

  // A sink without report: fine until something is reported.
  const silent = { state: RECORDED, messages: ONE_TURN, config: {}, sink: {} };
  oddRun('2.9.1', ref, { ...silent, label: 'a sink without report, nothing to report' });
  oddRun('2.9.1', ref, {
    ...silent,
    state,
    config: CHAIN_ON,
    label: 'a sink without report, a report due',
    throws: codes.INVALID_ARGUMENT,
  });

  // An indexer that lists one entry twice reaches the second rejection rule.
  const twice = (real) => {
    const entries = real.getChainEntries();
    return Object.assign(Object.create(real), { getChainEntries: () => [...entries, ...entries] });
  };
  const { want } = oddRun('2.9.1', ref, {
    label: 'an entry listed twice',
    state: { chains: [entry({ rangeSummaryText: 's' })] },
    config: CHAIN_ON,
    messages: ONE_TURN,
    wrap: twice,
  });
  assert.ok(want.value.pruned);
  assert.deepEqual(want.reports, [
    { kind: 'unresolved-range', key: 'overlap:b1', detail: 'blockId=b1 skipped: range duplicates startIndex=0 already claimed' },
  ]);
});
