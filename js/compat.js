'use strict';

// The pi-condense drop-in: `pruneMessagesCompat` takes the same arguments as
// pi-condense's `pruneMessages` (an indexer object instead of a state) and
// returns the same result. It asks the indexer only about tool-call ids that
// occur in the messages, turns the answers into the state shape the native
// pruner takes, and prunes the array natively.

// A dedup target that no record can have: `isSummarized` true with no record
// (an alias whose original is gone) is expressed as an alias to it.
const MISSING_RECORD = '\u0000condense-native:missing-record';

function collectToolCallIds(messages) {
  const ids = new Set();
  for (const m of messages) {
    if (m !== null && typeof m === 'object' && m.role === 'toolResult' && typeof m.toolCallId === 'string') {
      ids.add(m.toolCallId);
    }
  }
  return ids;
}

/** The native state for these messages, read from a pi-condense indexer. */
function stateFromIndexer(messages, indexer) {
  const records = {};
  const dedupAliases = {};
  const shortRefs = {};
  for (const id of collectToolCallIds(messages)) {
    if (!indexer.isSummarized(id)) continue;
    const record = indexer.getRecord(id);
    if (record === undefined || record === null) dedupAliases[id] = MISSING_RECORD;
    else records[id] = record;
    const ref = indexer.getShortRefForToolCallId(id);
    if (ref !== undefined) shortRefs[id] = ref;
  }
  // Entries come deduplicated and sorted; each carries its own summary so
  // that `{bN}` look-ups and the synthetic block read the indexer's texts.
  const chains = (indexer.getChainEntries() || []).map((entry) => {
    if (entry.rangeSummaryText !== undefined && entry.rangeSummaryText !== null) return entry;
    const text = indexer.getPerBatchSummaryTextForToolCallIds(entry.droppedToolCallIds);
    return { ...entry, rangeSummaryText: text };
  });
  return { records, dedupAliases, shortRefs, refAliases: {}, chains, summaryBodies: [] };
}

function makeCompat(pruneMessages) {
  /**
   * Same signature and result as pi-condense's `pruneMessages`:
   * `{ messages, pruned, beforeChars, afterChars }`.
   */
  function pruneMessagesCompat(
    messages,
    indexer,
    chainCompression,
    errorPurge,
    thinkingStrip,
    protection,
    recoveryGraceTurns = 0,
    thinkingBoundaryTimestamp,
  ) {
    const state = Array.isArray(messages) ? stateFromIndexer(messages, indexer) : {};
    const config = { chainCompression, errorPurge, thinkingStrip, protection, recoveryGraceTurns };
    const r = pruneMessages(messages, { state, config, thinkingStripBoundaryTimestamp: thinkingBoundaryTimestamp });
    return { messages: r.messages, pruned: r.pruned, beforeChars: r.beforeChars, afterChars: r.afterChars };
  }
  return { pruneMessagesCompat, stateFromIndexer };
}

module.exports = { makeCompat, stateFromIndexer };
