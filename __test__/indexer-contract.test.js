'use strict';
// The drop-ins read an indexer through its documented methods only (the
// docs/API.md's change-detection contract). The first test's indexer is a
// Proxy over js/pure's createIndexer that throws on any other property
// (pi-condense's private `summaryBodies` included) and counts the calls.
// Rendered along a growing sample conversation, with summaries added to a
// chain's batches between renders (nothing else changes, so only the
// answers of getPerBatchSummaryTextForToolCallIds can show it), every render
// must equal js/pure.js on the same state; and renders where nothing changed
// must not ask every chain's summary again. The second test does the same
// through a class shaped as pi-condense's own, whose registry of summaries
// the drop-in reads instead of asking. The third registers summaries and a
// chain one at a time through that class: each render asks only about the
// chains a new summary names (or a new chain) and sends the engine the
// chains from the first one whose answer changed. The fourth does the same
// for 2.9.1, whose summaries and chains meet by occurrence key.
// Runs under `node --test` and `bun test`.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const dropIn = require('../js/pi-condense-2.4.js');
const v24 = require('../js/pure/v2.4.js');
const { backend } = require('..');

const sample = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'sample', 'session.json'), 'utf8'));

function strictIndexer(state) {
  let inner = v24.createIndexer(state);
  const calls = {};
  const methods = new Set(v24.INDEXER_METHODS);
  const target = {};
  const proxy = new Proxy(target, {
    get(_, key) {
      if (typeof key === 'string' && methods.has(key)) {
        return (...args) => {
          calls[key] = (calls[key] ?? 0) + 1;
          return inner[key](...args);
        };
      }
      if (key === 'then' || typeof key === 'symbol') return undefined;
      throw new Error(`the drop-in read indexer.${String(key)}, which is not a documented method`);
    },
    has: () => {
      throw new Error('the drop-in asked what the indexer has');
    },
  });
  return { proxy, calls, refresh: () => (inner = v24.createIndexer(state)) };
}

test('the 2.4 drop-in reads only the documented methods and sees a changed summary from their answers', () => {
  const state = structuredClone(sample.state);
  const { config } = sample;
  const indexer = strictIndexer(state);
  const chain = state.chains.find((c) => c.rangeSummaryText === undefined || c.rangeSummaryText === null);
  assert.ok(chain, 'the sample has a chain summarized from its batches');
  const args = (boundary) => [indexer.proxy, config.chainCompression, config.errorPurge, config.thinkingStrip, config.protection, config.recoveryGraceTurns, boundary];
  const n = sample.messages.length;
  let added = 0;
  let quiet = null;
  for (let k = n - 12; k <= n; k++) {
    const messages = sample.messages.slice(0, k);
    if (k % 4 === 0) {
      // A summary of one of the chain's batches, registered as pi-condense
      // registers it: no record or short ref changes.
      state.summaryBodies.push({ toolCallIds: [chain.droppedToolCallIds[0]], text: `Later summary ${++added} of the chain's first batch.` });
      indexer.refresh();
    }
    const before = { ...indexer.calls };
    const got = dropIn.pruneMessages(structuredClone(messages), ...args(sample.thinkingBoundaryTimestamp ?? undefined));
    const want = v24.pruneMessages(structuredClone(messages), { state, config, thinkingStripBoundaryTimestamp: sample.thinkingBoundaryTimestamp });
    assert.equal(JSON.stringify(got.messages), JSON.stringify(want.messages), `render of ${k} messages (${added} summaries added)`);
    assert.equal(got.afterChars, want.afterChars);
    if (k % 4 !== 0 && k > n - 12) {
      quiet = (indexer.calls.getPerBatchSummaryTextForToolCallIds ?? 0) - (before.getPerBatchSummaryTextForToolCallIds ?? 0);
    }
  }
  assert.ok(added >= 2, 'summaries were added between renders');
  assert.ok(JSON.stringify(sample.messages).includes(chain.droppedToolCallIds[0]));
  if (backend === 'native') {
    // With nothing changed, one probe for all chains, not one question per chain.
    assert.equal(quiet, 1, `a quiet render asked getPerBatchSummaryTextForToolCallIds ${quiet} times`);
  }
});

// pi-condense's own indexer class, as its shape matters to the drop-in: a
// class named ToolCallIndexer whose summary registry is its own array field
// `summaryBodies`, appended to at a flush and replaced when a session is
// rebuilt, with the summary methods on its prototype. The drop-in reads that
// registry in place of the probe (js/conversation.js keepsSummaryRegistry).
// `inner`: the release's indexer over the same state (js/pure), which
// answers about tool results; 2.4.3's by default.
class ToolCallIndexer {
  summaryBodies;
  constructor(state, inner = v24.createIndexer(state)) {
    this.state = state;
    this.summaryBodies = state.summaryBodies;
    this.inner = inner;
    this.asked = 0;
    // Its chain registry: by start timestamp, a later registration in the
    // first one's place (SPEC.md §2.2), the entries themselves handed out.
    this.chainRegistry = new Map();
    for (const c of state.chains) this.chainRegistry.set(c.startUserTimestamp, c);
  }
  isSummarized(id) {
    return this.inner.isSummarized(id);
  }
  hasLegacyBareRecord(id) {
    return this.inner.hasLegacyBareRecord(id);
  }
  getRecord(id) {
    return this.inner.getRecord(id);
  }
  getShortRefForToolCallId(id) {
    return this.inner.getShortRefForToolCallId(id);
  }
  getChainEntries() {
    return [...this.chainRegistry.values()].sort((a, b) => a.startUserTimestamp - b.startUserTimestamp);
  }
  findChainEntryByBlockId(blockId) {
    for (const c of this.chainRegistry.values()) if (c.blockId === blockId) return c;
    return undefined;
  }
  registerChain(entry) {
    this.state.chains.push(entry);
    this.chainRegistry.set(entry.startUserTimestamp, entry);
  }
  registerSummaryBody(toolCallIds, text) {
    this.summaryBodies.push({ toolCallIds, text });
  }
  // A session rebuilt: a new array, here as long as the one it replaces.
  rebuild(last) {
    const bodies = this.summaryBodies.slice(0, -1).map((b) => ({ ...b }));
    bodies.push(last);
    this.summaryBodies = this.state.summaryBodies = bodies;
  }
  getPerBatchSummariesForToolCallIds(toolCallIds) {
    const ids = new Set(toolCallIds);
    const texts = [];
    for (const s of this.summaryBodies) {
      if (s.toolCallIds.some((id) => ids.has(id)) && !texts.includes(s.text)) texts.push(s.text);
    }
    return texts;
  }
  getPerBatchSummaryTextForToolCallIds(toolCallIds) {
    this.asked++;
    return this.getPerBatchSummariesForToolCallIds(toolCallIds).join('\n\n');
  }
}

test("the 2.4 drop-in sees a summary pi-condense's own indexer registers alone, and asks it nothing when nothing changed", () => {
  const state = structuredClone(sample.state);
  state.summaryBodies ??= [];
  const { config } = sample;
  const indexer = new ToolCallIndexer(state);
  const chain = state.chains.find((c) => c.rangeSummaryText === undefined || c.rangeSummaryText === null);
  assert.ok(chain, 'the sample has a chain summarized from its batches');
  const n = sample.messages.length;
  const quiet = [];
  let changed = 0;
  for (let k = n - 12; k <= n; k++) {
    const messages = sample.messages.slice(0, k);
    let what = 'nothing changed';
    if (k % 4 === 0) {
      // A summary of one of the chain's batches, alone: no record or short
      // ref changes, the chain entries are the same objects.
      indexer.registerSummaryBody([chain.droppedToolCallIds[0]], `Later summary ${++changed} of the chain's first batch.`);
      what = 'a summary registered';
    } else if (k % 4 === 2) {
      // A session rebuilt: the registry is a new array of the same length,
      // its last summary another.
      indexer.rebuild({ toolCallIds: [chain.droppedToolCallIds[0]], text: `Rebuilt summary ${++changed}.` });
      what = 'the registry rebuilt';
    }
    const before = indexer.asked;
    const args = [indexer, config.chainCompression, config.errorPurge, config.thinkingStrip, config.protection, config.recoveryGraceTurns];
    const got = dropIn.pruneMessages(structuredClone(messages), ...args, sample.thinkingBoundaryTimestamp ?? undefined);
    const want = v24.pruneMessages(structuredClone(messages), { state, config, thinkingStripBoundaryTimestamp: sample.thinkingBoundaryTimestamp });
    assert.equal(JSON.stringify(got.messages), JSON.stringify(want.messages), `render of ${k} messages (${what})`);
    assert.equal(got.afterChars, want.afterChars);
    if (what === 'nothing changed' && k > n - 12) quiet.push(indexer.asked - before);
  }
  assert.ok(changed >= 4, 'summaries were registered between renders');
  if (backend === 'native') {
    // Nothing changed: the registry says so, with no question asked.
    assert.deepEqual(quiet, quiet.map(() => 0), `quiet renders asked for summaries ${quiet.join(', ')} times`);
  }
});

test("the 2.4 drop-in asks pi-condense's own indexer again only about the chains a new summary names", () => {
  const state = structuredClone(sample.state);
  state.summaryBodies ??= [];
  // Every chain summarized from its batches, so each one's answer comes
  // from the registry.
  for (const c of state.chains) delete c.rangeSummaryText;
  const { config } = sample;
  const indexer = new ToolCallIndexer(state);
  const [b1, b2, b3] = ['b1', 'b2', 'b3'].map((id) => state.chains.find((c) => c.blockId === id));
  // Each step registers one summary, as a flush does, then renders one more
  // message; `asks`: the questions it takes, one per chain whose dropped
  // ids the summary names (a `{bN}` lookup of a chain takes that chain's
  // answer).
  const steps = [
    { what: "one of b2's batches", ids: [b2.droppedToolCallIds[0]], text: 'Summary A.', asks: 1, sent: [1] },
    { what: "one of b3's batches, with A's text", ids: [b3.droppedToolCallIds[0]], text: 'Summary A.', asks: 1, sent: [2] },
    { what: 'a batch no chain dropped', ids: ['call-nobody-dropped'], text: 'Summary C.', asks: 0, sent: [] },
    { what: "one of b1's batches, citing {b2}", ids: [b1.droppedToolCallIds[1]], text: 'Summary D, after {b2}.', asks: 1, sent: [0] },
    { what: "another of b2's batches", ids: [b2.droppedToolCallIds[1]], text: 'Summary E.', asks: 1, sent: [1] },
    { what: 'nothing', asks: 0, sent: [] },
    { what: 'a new chain', chain: { ...b3, blockId: 'b4', startUserTimestamp: b3.startUserTimestamp + 1, droppedToolCallIds: [b3.droppedToolCallIds[2]] }, asks: 1, sent: [3] },
    { what: "one of b3's batches, after the new chain", ids: [b3.droppedToolCallIds[3]], text: 'Summary G.', asks: 1, sent: [2] },
  ];
  const n = sample.messages.length;
  const args = [indexer, config.chainCompression, config.errorPurge, config.thinkingStrip, config.protection, config.recoveryGraceTurns];
  const render = (k, what) => {
    const messages = sample.messages.slice(0, k);
    const got = dropIn.pruneMessages(structuredClone(messages), ...args, sample.thinkingBoundaryTimestamp ?? undefined);
    const want = v24.pruneMessages(structuredClone(messages), { state, config, thinkingStripBoundaryTimestamp: sample.thinkingBoundaryTimestamp });
    assert.equal(JSON.stringify(got.messages), JSON.stringify(want.messages), `render of ${k} messages (${what})`);
    assert.equal(got.afterChars, want.afterChars);
    assert.equal(got.beforeChars, want.beforeChars);
  };
  // What the engine is sent of the chains, from which entry on.
  const sentFrom = [];
  const proto = backend === 'native' ? require('../loader.js').NativeEngine.prototype : null;
  const setChains = proto?.setChains;
  if (proto) {
    proto.setChains = function (text) {
      sentFrom.push(JSON.parse(text).from ?? 0);
      return setChains.call(this, text);
    };
  }
  try {
    render(n - steps.length, 'the first');
    steps.forEach((step, s) => {
      if (step.ids) indexer.registerSummaryBody(step.ids, step.text);
      if (step.chain) indexer.registerChain(step.chain);
      const before = indexer.asked;
      sentFrom.length = 0;
      render(n - steps.length + s + 1, step.what);
      if (backend !== 'native') return;
      assert.equal(indexer.asked - before, step.asks, `questions after a summary of ${step.what}`);
      // Sent from the first chain whose answer changed (the entries in
      // start order: b1, b2, b3, then the new b4), or not at all.
      if (step.sent !== undefined) assert.deepEqual(sentFrom, step.sent, `chains sent after ${step.what}`);
    });
  } finally {
    if (proto) proto.setChains = setChains;
  }
  // The summaries reached the rendered chains: a chain block quotes them.
  const last = dropIn.pruneMessages(structuredClone(sample.messages), ...args, sample.thinkingBoundaryTimestamp ?? undefined);
  const text = JSON.stringify(last.messages);
  for (const t of ['Summary A.', 'Summary D, after', 'Summary E.']) assert.ok(text.includes(t), `${t} is rendered`);
});

test("the 2.9 drop-in matches a new summary to pi-condense's own chains by their occurrence keys", () => {
  const dropIn29 = require('../js/pi-condense-2.9.js');
  const v29 = require('../js/pure/v2.9.js');
  const vector = require('./fixtures/vectors-2.9.json').find((v) => v.name === 'combo-020-n271');
  const state = structuredClone(vector.state);
  state.summaryBodies ??= [];
  const { config } = vector;
  // pi-condense 2.9.1's own class, in shape: its summaries keyed by
  // occurrence (`id@timestamp`), the chains' `droppedOccurrenceKeys`.
  const indexer = new ToolCallIndexer(state, v29.createIndexer(state));
  const batchChains = indexer.getChainEntries().filter((c) => c.rangeSummaryText === undefined || c.rangeSummaryText === null);
  const [x, y] = batchChains.filter((c) => c.droppedOccurrenceKeys[0] !== c.droppedToolCallIds[0]);
  assert.ok(x && y, 'two chains whose occurrence keys are not their bare ids');
  const steps = [
    { what: `an occurrence ${x.blockId} dropped`, keys: [x.droppedOccurrenceKeys[0]], text: 'Summary X.', asks: 1 },
    { what: `an occurrence ${y.blockId} dropped, with X's text`, keys: [y.droppedOccurrenceKeys[0]], text: 'Summary X.', asks: 1 },
    { what: `the bare id ${x.blockId} dropped (not an occurrence key)`, keys: [x.droppedToolCallIds[0]], text: 'Summary Z.', asks: 0 },
  ];
  const n = vector.messages.length;
  const render = (k, what) => {
    const messages = vector.messages.slice(0, k);
    const args = [config.chainCompression, config.errorPurge, config.protection, config.recoveryGraceTurns];
    const got = dropIn29.pruneMessages(structuredClone(messages), indexer, ...args);
    const want = v29.pruneMessages(structuredClone(messages), { state, config });
    assert.equal(JSON.stringify(got.messages), JSON.stringify(want.messages), `render of ${k} messages (${what})`);
    assert.equal(got.afterChars, want.afterChars);
  };
  render(n - steps.length, 'the first');
  steps.forEach((step, s) => {
    indexer.registerSummaryBody(step.keys, step.text);
    const before = indexer.asked;
    render(n - steps.length + s + 1, step.what);
    if (backend === 'native') assert.equal(indexer.asked - before, step.asks, `questions after a summary of ${step.what}`);
  });
});

test("after a flush the 2.4 drop-in reads of pi-condense's own chains only those the flush reaches", () => {
  const state = structuredClone(sample.state);
  state.summaryBodies ??= [];
  const { config } = sample;
  // Each chain entry counts what is read of it while the drop-in renders,
  // the indexer's own methods aside (its sort and lookups read them too).
  const reads = new Map();
  let counting = false;
  let inside = 0;
  const watch = (entry) =>
    new Proxy(entry, {
      get(target, key, receiver) {
        if (counting && inside === 0) reads.set(target.blockId, (reads.get(target.blockId) ?? 0) + 1);
        return Reflect.get(target, key, receiver);
      },
    });
  state.chains = state.chains.map(watch);
  const indexer = new ToolCallIndexer(state);
  for (const name of ['getChainEntries', 'findChainEntryByBlockId']) {
    const method = indexer[name].bind(indexer);
    indexer[name] = (...args) => {
      inside++;
      try {
        return method(...args);
      } finally {
        inside--;
      }
    };
  }
  const b3 = state.chains.find((c) => c.blockId === 'b3');
  const later = (n, fields) => watch({ ...b3, blockId: `b${n}`, startUserTimestamp: b3.startUserTimestamp + n, toolRefs: [], ...fields });
  // Each flush registers a summary or a chain, or both, as pi-condense's
  // flush does; `reached`: the chains the render may read, the new one and
  // those whose dropped ids the new summary names (and any after the first
  // of them, sent to the engine again).
  const steps = [
    { what: 'a summary of a batch no chain dropped, and a fused chain', ids: ['call-nobody-dropped'], chain: later(4, { rangeSummaryText: 'Fused b4.' }), reached: ['b4'] },
    { what: 'a chain summarized from its batches', chain: later(5, { rangeSummaryText: undefined, droppedToolCallIds: ['call-b5'] }), reached: ['b5'] },
    { what: "a summary of b5's batch", ids: ['call-b5'], reached: ['b5'] },
    { what: 'nothing', reached: [] },
  ];
  const args = [indexer, config.chainCompression, config.errorPurge, config.thinkingStrip, config.protection, config.recoveryGraceTurns];
  const render = (what) => {
    counting = true;
    let got;
    try {
      got = dropIn.pruneMessages(structuredClone(sample.messages), ...args, sample.thinkingBoundaryTimestamp ?? undefined);
    } finally {
      counting = false;
    }
    const want = v24.pruneMessages(structuredClone(sample.messages), { state, config, thinkingStripBoundaryTimestamp: sample.thinkingBoundaryTimestamp });
    assert.equal(JSON.stringify(got.messages), JSON.stringify(want.messages), `render after ${what}`);
    assert.equal(got.afterChars, want.afterChars);
  };
  render('the first');
  for (const step of steps) {
    if (step.ids) indexer.registerSummaryBody(step.ids, `Summary of ${step.ids.join(', ')}.`);
    if (step.chain) indexer.registerChain(step.chain);
    reads.clear();
    render(step.what);
    if (backend !== 'native') continue;
    const read = [...reads.keys()].sort();
    assert.ok(
      read.every((b) => step.reached.includes(b)),
      `after ${step.what}, read ${read.join(', ') || 'nothing'}; the flush reaches ${step.reached.join(', ') || 'nothing'}`,
    );
  }
});
