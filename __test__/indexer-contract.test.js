'use strict';
// The drop-ins read an indexer through its documented methods only (the
// docs/API.md's change-detection contract). The indexer here is a Proxy over
// js/pure's createIndexer that throws on any other property (pi-condense's
// private `summaryBodies` included) and counts the calls. Rendered along a
// growing sample conversation, with summaries added to a chain's batches
// between renders (nothing else changes, so only the answers of
// getPerBatchSummaryTextForToolCallIds can show it), every render must equal
// js/pure.js on the same state; and renders where nothing changed must not
// ask every chain's summary again.
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
