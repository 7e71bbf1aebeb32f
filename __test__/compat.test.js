'use strict';

// The pi-condense drop-in: pruneMessagesCompat with an indexer built from
// each vector's state must give the reference's result, and must ask the
// indexer only about ids that occur in the messages.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { pruneMessagesCompat } = require('..');
const pure = require('../js/pure.js');
const { loadVectors } = require('./helpers/vectors');

const vectors = loadVectors().filter((c) => c.group !== 'boundary' && Array.isArray(c.messages));

function args(c, indexer) {
  const k = c.config;
  return [indexer, k.chainCompression ?? undefined, k.errorPurge ?? undefined, k.thinkingStrip ?? undefined, k.protection ?? undefined,
    k.recoveryGraceTurns, c.thinkingBoundaryTimestamp ?? undefined];
}

test('pruneMessagesCompat reproduces every vector through an indexer', () => {
  let exact = 0;
  for (const c of vectors) {
    const indexer = pure.createIndexer(c.state);
    const input = structuredClone(c.messages);
    if (c.expected.throws !== undefined) {
      assert.throws(() => pruneMessagesCompat(input, ...args(c, indexer)), (e) => /^ERR_CONDENSE_/.test(e.code), c.name);
      continue;
    }
    let r;
    try {
      r = pruneMessagesCompat(input, ...args(c, indexer));
    } catch (e) {
      assert.equal(c.group, 'hostile', `${c.name}: ${e.message}`);
      continue;
    }
    assert.deepEqual(Object.keys(r).sort(), ['afterChars', 'beforeChars', 'messages', 'pruned'], c.name);
    assert.equal(r.pruned, c.expected.pruned, `${c.name}: pruned`);
    assert.equal(r.beforeChars, c.expected.beforeChars, `${c.name}: beforeChars`);
    assert.equal(r.afterChars, c.expected.afterChars, `${c.name}: afterChars`);
    assert.equal(JSON.stringify(r.messages), JSON.stringify(c.expected.messages), `${c.name}: messages`);
    if (!r.pruned) assert.equal(r.messages, input, `${c.name}: no-op returns the caller's array`);
    exact++;
  }
  assert.ok(exact >= 350, `${exact} exact`);
});

test('the indexer is asked only about ids that occur in the messages', () => {
  const c = vectors.find((v) => v.group === 'combo');
  const inner = pure.createIndexer(c.state);
  const present = new Set(c.messages.filter((m) => m && m.role === 'toolResult').map((m) => m.toolCallId));
  const asked = [];
  const spy = {
    isSummarized: (id) => (asked.push(id), inner.isSummarized(id)),
    getRecord: (id) => (asked.push(id), inner.getRecord(id)),
    getShortRefForToolCallId: (id) => (asked.push(id), inner.getShortRefForToolCallId(id)),
    getChainEntries: () => inner.getChainEntries(),
    getPerBatchSummaryTextForToolCallIds: (ids) => inner.getPerBatchSummaryTextForToolCallIds(ids),
    findChainEntryByBlockId: (b) => inner.findChainEntryByBlockId(b),
  };
  const r = pruneMessagesCompat(structuredClone(c.messages), ...args(c, spy));
  assert.equal(JSON.stringify(r.messages), JSON.stringify(c.expected.messages));
  assert.ok(asked.length > 0);
  for (const id of asked) assert.ok(present.has(id), `asked about ${id}`);
});
