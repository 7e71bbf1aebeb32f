'use strict';

// The render path of pi-condense 2.4.3 in plain JavaScript (SPEC.md): the
// oracle of the differential tests and the fallback when no native binary
// loads. The phases talk only to an indexer (the six methods the 2.4.3
// render calls), so `pruneWithIndexer` takes the host's ToolCallIndexer with
// the release's own signature, and `pruneMessages` takes a state object and
// builds the indexer over it (js/pure/state.js). What 2.4.3 shares with
// 2.9.1 lives in js/pure/rules.js and js/pure/purge.js; this file holds what
// is 2.4.3's own: phase 1 keyed by bare ids, phase 3 by id sets, phase 4
// (thinking strip) and the frontier.

const codes = require('../codes.js');
const { CondenseInputError, assertMessageArray, messageError, sizeOf } = require('./errors.js');
const {
  stubText,
  stubMessage,
  graceKeys,
  isProtected,
  existingBlockIds,
  protectedOutputText,
  chainSummaries,
  syntheticMessage,
  isPerBatchSummary,
  summaryRefHits,
  hasThinking,
  withoutThinking,
  checkBlocks,
  bindIndexer,
  iterableField,
  checkEntry,
} = require('./rules.js');
const { errorPurge } = require('./purge.js');
const { createIndexer243 } = require('./state.js');

// The config keys of this dialect (SPEC.md §2.3); js/args.js checks a
// host's config against them. Rust counterpart: src/config.rs.
const CONFIG_KEYS = ['chainCompression', 'errorPurge', 'thinkingStrip', 'protection', 'recoveryGraceTurns'];

const INDEXER_METHODS = [
  'isSummarized',
  'getRecord',
  'getShortRefForToolCallId',
  'getChainEntries',
  'getPerBatchSummaryTextForToolCallIds',
  'findChainEntryByBlockId',
];

// ---------------------------------------------------------------------------
// Phase 1: stub-replace by bare id (SPEC.md §3). Rust counterpart:
// src/phases/stub.rs.

function stubReplace(messages, indexer, protection, recoveryGraceTurns, stats) {
  const grace = graceKeys(messages, recoveryGraceTurns, (msg) => msg.toolCallId);
  let out = null;
  messages.forEach((msg, index) => {
    // quirk 15: the reference reads msg.role on every element.
    if (msg === null || msg === undefined) messageError(index, '', 'a message object', msg);
    if (msg.role !== 'toolResult') return;
    const id = msg.toolCallId;
    if (!indexer.isSummarized(id)) return;
    const record = indexer.getRecord(id);
    if (protection && record && isProtected(protection, record.toolName, record.args)) return;
    if (grace.has(id)) return;
    const ref = indexer.getShortRefForToolCallId(id) ?? id;
    out ??= messages.slice();
    out[index] = stubMessage(msg, stubText(record, ref));
    stats.stubbed++;
  });
  return out ?? messages;
}

// ---------------------------------------------------------------------------
// Phase 3: chain range prune by id sets (SPEC.md §3). Rust counterparts:
// src/phases/chain_ids.rs, with the synthetic block in
// src/phases/synthetic.rs.

// Is an assistant one of a dropped chain's calls? `(content ?? [])` is
// filtered, so it must be an array and every block must be an object.
function callsDropped(msg, index, dropped) {
  const content = msg.content ?? [];
  if (!Array.isArray(content)) messageError(index, 'content', 'an array, null or absent (assistant content)', content);
  checkBlocks(content, index);
  return content.some((block) => block.type === 'toolCall' && dropped.has(block.id));
}

function chainRangePrune(messages, indexer, entries, stripFinalAssistantThinking, stats) {
  const existing = existingBlockIds(messages);

  const dropped = new Set();
  const protectedBlock = new Map();
  const finals = new Set();
  entries.forEach((entry, n) => {
    checkEntry(entry, n);
    for (const id of iterableField(entry.droppedToolCallIds, entry, 'droppedToolCallIds')) dropped.add(id);
    for (const id of iterableField(entry.protectedToolCallIds ?? [], entry, 'protectedToolCallIds')) {
      protectedBlock.set(id, entry.blockId);
    }
    // quirk 6: only null is excluded; a missing field adds undefined.
    if (entry.finalAssistantTimestamp !== null && stripFinalAssistantThinking) {
      finals.add(entry.finalAssistantTimestamp);
    }
  });

  // Every result of a protected id, wherever it is, joins its block.
  const outputs = new Map();
  if (protectedBlock.size > 0) {
    messages.forEach((msg, index) => {
      if (msg.role !== 'toolResult' || !protectedBlock.has(msg.toolCallId)) return;
      const blockId = protectedBlock.get(msg.toolCallId);
      if (!outputs.has(blockId)) outputs.set(blockId, []);
      outputs.get(blockId).push({ tool: msg.toolName, text: protectedOutputText(msg, index) });
    });
  }

  const { summaryOf, lookup } = chainSummaries(indexer, (entry) => entry.droppedToolCallIds);
  const byStart = new Map();
  for (const entry of entries) {
    byStart.set(entry.startUserTimestamp, {
      blockId: entry.blockId,
      message: syntheticMessage(entry, summaryOf(entry), lookup, outputs.get(entry.blockId) ?? []),
    });
  }

  const out = [];
  messages.forEach((msg, index) => {
    if (msg.role === 'toolResult' && dropped.has(msg.toolCallId)) {
      stats.chainDropped++;
      return;
    }
    if (msg.role === 'assistant') {
      if (callsDropped(msg, index, dropped)) {
        stats.chainDropped++;
        return;
      }
      if (finals.has(msg.timestamp)) {
        const stripped = withoutThinking(msg, index);
        if (stripped !== msg) stats.finalThinkingStripped++;
        out.push(stripped);
        return;
      }
    }
    if (isPerBatchSummary(msg) && summaryRefHits(msg, index, (ref) => dropped.has(ref.toolCallId))) {
      stats.chainDropped++;
      return;
    }
    out.push(msg);
    // quirk 8: every user at the start timestamp gets the block.
    const insert = msg.role === 'user' ? byStart.get(msg.timestamp) : undefined;
    if (insert && !existing.has(insert.blockId)) {
      out.push(insert.message);
      stats.chainInserted++;
    }
  });
  return out;
}

// ---------------------------------------------------------------------------
// Phase 4: thinking strip (SPEC.md §3). Rust counterpart:
// src/phases/thinking.rs.

function stripWhere(messages, strips, stats) {
  let out = null;
  messages.forEach((msg, index) => {
    if (msg.role !== 'assistant' || !strips(msg, index) || !hasThinking(msg, index)) return;
    out ??= messages.slice();
    out[index] = withoutThinking(msg, index);
    stats.thinkingStripped++;
  });
  return out ?? messages;
}

function olderThan(msg, index, boundary) {
  try {
    return msg.timestamp < boundary;
  } catch (cause) {
    throw new CondenseInputError(
      codes.INVALID_ARGUMENT,
      `thinkingBoundaryTimestamp: cannot be compared with messages[${index}].timestamp (${cause?.message ?? cause})`,
      { field: 'thinkingBoundaryTimestamp', messageIndex: index, cause },
    );
  }
}

function thinkingStrip(messages, config, boundary, stats) {
  if (boundary !== null && boundary !== undefined) {
    // quirk 4: JS `<`, so null counts as 0 and numeric strings convert; a
    // boundary of any type is compared so ('yesterday' converts to NaN and
    // strips nothing), and one `<` cannot convert (a Symbol) throws.
    return stripWhere(messages, (msg, index) => olderThan(msg, index, boundary), stats);
  }
  // quirk 5: Math.max converts; a NaN or fractional K finds no K-th
  // assistant from the end, and then every assistant with thinking goes.
  const keep = Math.max(1, config.keepLastTurns);
  const assistants = [];
  messages.forEach((msg, index) => {
    if (msg.role === 'assistant') assistants.push(index);
  });
  if (assistants.length <= keep) return messages;
  const firstKept = assistants[assistants.length - keep];
  return stripWhere(messages, (msg, index) => !(index >= firstKept), stats);
}

// ---------------------------------------------------------------------------
// Pipeline

function emptyStats() {
  return {
    stubbed: 0,
    purgedArgs: 0,
    chainDropped: 0,
    chainInserted: 0,
    finalThinkingStripped: 0,
    thinkingStripped: 0,
  };
}

/**
 * pi-condense 2.4.3's `pruneMessages`, with its signature: `indexer` is the
 * host's ToolCallIndexer (or anything with the six methods the render
 * calls). Returns {messages, pruned, beforeChars, afterChars, stats}; a no-op
 * returns the caller's array with 0/0. Nothing passed in is modified.
 */
function pruneWithIndexer(
  messages,
  indexer,
  chainCompression,
  errorPurgeConfig,
  thinkingStripConfig,
  protection,
  recoveryGraceTurns = 0,
  thinkingBoundaryTimestamp,
) {
  assertMessageArray(messages);
  const index = bindIndexer(indexer, INDEXER_METHODS, '2.4.3');
  const stats = emptyStats();
  let current = stubReplace(messages, index, protection, recoveryGraceTurns, stats);
  let pruned = current !== messages;

  if (errorPurgeConfig?.enabled) {
    const next = errorPurge(current, errorPurgeConfig, stats);
    pruned ||= next !== current;
    current = next;
  }

  if (chainCompression?.enabled) {
    const entries = index.getChainEntries();
    if (entries.length > 0) {
      // quirk 1: this phase always builds a new array, so it is a change.
      current = chainRangePrune(current, index, entries, chainCompression.stripFinalAssistantThinking, stats);
      pruned = true;
    }
  }

  if (thinkingStripConfig?.enabled) {
    const next = thinkingStrip(current, thinkingStripConfig, thinkingBoundaryTimestamp, stats);
    pruned ||= next !== current;
    current = next;
  }

  if (!pruned) return { messages, pruned: false, beforeChars: 0, afterChars: 0, stats };
  return { messages: current, pruned: true, beforeChars: sizeOf(messages), afterChars: sizeOf(current), stats };
}

// ---------------------------------------------------------------------------
// Frontier (SPEC.md §6). Rust counterpart: src/frontier.rs.

function computeThinkingBoundary(assistantTimestamps, keepLastTurns, prev) {
  const keep = Math.max(1, keepLastTurns);
  const count = assistantTimestamps.length;
  const hasPrev = prev !== null && prev !== undefined;
  if (count <= keep) return hasPrev ? prev : undefined;
  const candidate = assistantTimestamps[count - keep];
  return hasPrev ? Math.max(prev, candidate) : candidate;
}

// The boundary the next flush would persist, over the input's numeric
// assistant timestamps; null when there is none.
function nextBoundary(messages, thinkingStripConfig, boundary) {
  if (!thinkingStripConfig?.enabled) return null;
  const timestamps = [];
  for (const msg of messages) {
    if (msg?.role === 'assistant' && typeof msg.timestamp === 'number') timestamps.push(msg.timestamp);
  }
  const value = computeThinkingBoundary(timestamps, thinkingStripConfig.keepLastTurns, boundary ?? undefined);
  return typeof value === 'number' && !Number.isNaN(value) ? value : null;
}

/**
 * The state-based entry: `state` as SPEC.md §2.2, `config` as §2.3 (a null
 * section is an absent one). Adds `frontier` (the boundary used and the next
 * one) to pruneWithIndexer's result.
 */
function pruneMessages(messages, options = {}) {
  const { state, config = {}, thinkingStripBoundaryTimestamp } = options;
  const boundary = thinkingStripBoundaryTimestamp ?? null;
  const result = pruneWithIndexer(
    messages,
    createIndexer243(state),
    config.chainCompression,
    config.errorPurge,
    config.thinkingStrip,
    config.protection,
    config.recoveryGraceTurns,
    boundary,
  );
  result.frontier = {
    thinkingStripBoundaryTimestamp: boundary,
    nextThinkingStripBoundaryTimestamp: nextBoundary(messages, config.thinkingStrip, boundary),
  };
  return result;
}

module.exports = {
  pruneMessages,
  pruneWithIndexer,
  computeThinkingBoundary,
  createIndexer: createIndexer243,
  INDEXER_METHODS,
  CONFIG_KEYS,
};
