'use strict';

// The render path of pi-condense 2.9.1 in plain JavaScript (SPEC-2.9.md):
// the oracle of the 2.9 differential tests and the fallback of the 2.9
// dialect when no native binary loads. Like the 2.4.3 oracle (v2.4.js) its
// phases talk only to an indexer (the seven methods the 2.9.1 render calls),
// so `pruneWithIndexer` takes the host's ToolCallIndexer with the release's
// own signature and `pruneMessages` builds one over a state object
// (js/pure/state.js). What is 2.9.1's own lives here: occurrence keys, the
// legacy bare-id rung of phase 1, positional chain ranges with their
// diagnostics, and the orphan sweep; the rest is shared (rules.js, purge.js).

const { createHash } = require('node:crypto');

const { assertMessageArray, messageError, stateError, configError, sizeOf } = require('./errors.js');
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
  withoutThinking,
  bindIndexer,
  reporterFor,
  iterableField,
  checkEntry,
} = require('./rules.js');
const { errorPurge } = require('./purge.js');
const { createIndexer291 } = require('./state.js');

const INDEXER_METHODS = [
  'isSummarized',
  'hasLegacyBareRecord',
  'getRecord',
  'getShortRefForToolCallId',
  'getChainEntries',
  'getPerBatchSummaryTextForToolCallIds',
  'findChainEntryByBlockId',
];

// The config keys of this dialect (SPEC-2.9.md §2.5); js/args.js checks a
// host's config against them too. Rust counterpart: src/config.rs.
const CONFIG_KEYS = ['chainCompression', 'errorPurge', 'protection', 'recoveryGraceTurns'];

// ---------------------------------------------------------------------------
// Occurrence keys (SPEC-2.9.md §2.2). Rust counterpart: src/phases/keys.rs.

// occKey(id, ts): the id itself when ts is undefined, else `${id}@${ts}`
// with String() conversion of both.
function occKey(id, timestamp) {
  return timestamp === undefined ? id : `${id}@${timestamp}`;
}

// K(m): the key of a tool result; only a numeric timestamp counts.
function occurrenceKeyOf(msg) {
  return typeof msg.timestamp === 'number' ? occKey(msg.toolCallId, msg.timestamp) : msg.toolCallId;
}

// bare(k): the id of a key. A suffix of one or more ASCII digits after the
// last `@` (not at position 0) is cut off; anything else stays. `k` must be a
// string (the reference calls a string method on it).
function bare(key, fail) {
  if (typeof key !== 'string') fail(key);
  const at = key.lastIndexOf('@');
  if (at <= 0 || !/^\d+$/.test(key.slice(at + 1))) return key;
  return key.slice(0, at);
}

// ---------------------------------------------------------------------------
// Phase 1: stub-replace keyed by occurrence (SPEC-2.9.md §3). Rust
// counterpart: src/phases/stub.rs (both dialects; the keys in
// src/phases/keys.rs).

function stubReplace(messages, indexer, protection, recoveryGraceTurns, stats) {
  const grace = graceKeys(messages, recoveryGraceTurns, occurrenceKeyOf);
  let out = null;
  messages.forEach((msg, index) => {
    if (msg === null || msg === undefined) messageError(index, '', 'a message object', msg);
    if (msg.role !== 'toolResult') return;
    const key = occurrenceKeyOf(msg);
    let lookupKey;
    if (indexer.isSummarized(key)) lookupKey = key;
    else if (indexer.hasLegacyBareRecord(msg.toolCallId)) lookupKey = msg.toolCallId;
    if (lookupKey === undefined) return;
    const record = indexer.getRecord(lookupKey);
    if (protection && record && isProtected(protection, record.toolName, record.args)) return;
    // Grace is by the result's own key, whichever rung found the record.
    if (grace.has(key)) return;
    const ref = indexer.getShortRefForToolCallId(lookupKey) ?? msg.toolCallId;
    out ??= messages.slice();
    out[index] = stubMessage(msg, stubText(record, ref));
    stats.stubbed++;
  });
  return out ?? messages;
}

// ---------------------------------------------------------------------------
// Phase 3: positional chain range prune (SPEC-2.9.md §3). Rust counterpart:
// src/phases/chain_ranges.rs (the synthetic block: src/phases/synthetic.rs).

// The range (s, f) of an entry: exactly one user at its start timestamp,
// exactly one assistant at its final timestamp (strict equality, roles
// gated), s before f. null when it does not resolve.
function resolveRange(entry, messages) {
  if (entry.finalAssistantTimestamp === null) return null;
  let start = -1;
  let starts = 0;
  let end = -1;
  let ends = 0;
  messages.forEach((msg, index) => {
    if (msg.role === 'user' && msg.timestamp === entry.startUserTimestamp) {
      starts++;
      if (start < 0) start = index;
    } else if (msg.role === 'assistant' && msg.timestamp === entry.finalAssistantTimestamp) {
      ends++;
      if (end < 0) end = index;
    }
  });
  if (starts !== 1 || ends !== 1 || !(start < end)) return null;
  return { start, end };
}

// Steps 2 and 3: the resolved entries that are accepted, in order, with the
// reports for the others.
function acceptedRanges(messages, entries, report) {
  const resolved = [];
  entries.forEach((entry, n) => {
    checkEntry(entry, n);
    const range = resolveRange(entry, messages);
    if (range) {
      resolved.push({ entry, ...range });
    } else {
      report(
        'unresolved-range',
        entry.blockId,
        `blockId=${entry.blockId} start=${entry.startUserTimestamp} final=${entry.finalAssistantTimestamp}`,
      );
    }
  });
  const accepted = [];
  const claimedStarts = new Set();
  for (const candidate of resolved) {
    // Nested in any other resolved range, rejected ones included.
    const outer = resolved.find(
      (other) => other !== candidate && candidate.start > other.start && candidate.start < other.end,
    );
    // Two entries with one start index: unreachable with a real indexer
    // (registry keys are unique and matching is strict), but an indexer that
    // lists one entry twice gets the reference's answer.
    if (outer || claimedStarts.has(candidate.start)) {
      const blockId = candidate.entry.blockId;
      report(
        'unresolved-range',
        `overlap:${blockId}`,
        outer
          ? `blockId=${blockId} skipped: range nests inside blockId=${outer.entry.blockId}`
          : `blockId=${blockId} skipped: range duplicates startIndex=${candidate.start} already claimed`,
      );
      continue;
    }
    claimedStarts.add(candidate.start);
    accepted.push(candidate);
  }
  return accepted;
}

// The toolCall ids of an interior assistant. `content ?? []` is iterated: a
// string yields characters (no blocks), anything else must be an array of
// objects.
function interiorCallIds(msg, index) {
  const content = msg.content ?? [];
  if (typeof content === 'string') return [];
  if (!Array.isArray(content)) messageError(index, 'content', 'an array, null or absent (assistant content)', content);
  const ids = [];
  for (let j = 0; j < content.length; j++) {
    const block = content[j];
    if (block === null || block === undefined) messageError(index, `content[${j}]`, 'a content block', block);
    if (block.type === 'toolCall') ids.push(block.id);
  }
  return ids;
}

// The recorded ids of an entry, bare (quirk 24): a missing list is empty, a
// non-array or a non-string element throws.
function recordedIds(entry) {
  const list = entry.droppedToolCallIds ?? [];
  const field = `chains[blockId=${entry.blockId}].droppedToolCallIds`;
  if (!Array.isArray(list)) stateError(field, 'an array', list);
  return new Set(list.map((id) => bare(id, (value) => stateError(`${field}[]`, 'a string', value))));
}

function chainRangePrune(messages, indexer, entries, chainCompression, report, stats) {
  const existing = existingBlockIds(messages);
  const accepted = acceptedRanges(messages, entries, report);
  if (accepted.length === 0) return messages;

  const interior = new Set();
  const stripAt = new Set();
  const insertAfter = new Map();
  const droppedIds = new Set();
  const droppedKeys = new Set();
  // quirk 21: protected outputs pool per blockId across accepted entries.
  const outputsByBlock = new Map();
  const { summaryOf, lookup } = chainSummaries(
    indexer,
    (entry) => entry.droppedOccurrenceKeys ?? entry.droppedToolCallIds,
  );

  for (const { entry, start, end } of accepted) {
    const protectedIds = new Set(iterableField(entry.protectedToolCallIds ?? [], entry, 'protectedToolCallIds'));
    const inRange = [];
    for (let index = start + 1; index < end; index++) {
      const msg = messages[index];
      interior.add(index);
      if (msg.role === 'toolResult') {
        inRange.push(msg.toolCallId);
        droppedIds.add(msg.toolCallId);
        droppedKeys.add(occurrenceKeyOf(msg));
        if (protectedIds.has(msg.toolCallId)) {
          if (!outputsByBlock.has(entry.blockId)) outputsByBlock.set(entry.blockId, []);
          outputsByBlock.get(entry.blockId).push({ tool: msg.toolName, text: protectedOutputText(msg, index) });
        }
      } else if (msg.role === 'assistant') {
        for (const id of interiorCallIds(msg, index)) {
          inRange.push(id);
          droppedIds.add(id);
        }
      }
    }
    const recorded = recordedIds(entry);
    const actual = new Set(inRange);
    if (recorded.size !== actual.size || [...recorded].some((id) => !actual.has(id))) {
      const detail = `blockId=${entry.blockId} recorded=${recorded.size} actual=${actual.size}`;
      report('range-id-mismatch', entry.blockId, detail);
    }
    if (chainCompression.stripFinalAssistantThinking) stripAt.add(end);
    insertAfter.set(start, {
      blockId: entry.blockId,
      message: syntheticMessage(entry, summaryOf(entry), lookup, outputsByBlock.get(entry.blockId) ?? []),
    });
  }

  // A per-batch summary outside the ranges goes when a ref names a dropped
  // result: by occurrence when the ref carries resultTimestamp (null too),
  // else by bare id.
  const refHits = (index) => (ref, j) => {
    if (ref.resultTimestamp !== undefined) return droppedKeys.has(occKey(ref.toolCallId, ref.resultTimestamp));
    const id = bare(ref.toolCallId, (value) =>
      messageError(index, `details.toolCallRefs[${j}].toolCallId`, 'a string', value),
    );
    return droppedIds.has(id);
  };

  const out = [];
  messages.forEach((msg, index) => {
    const summary = isPerBatchSummary(msg);
    if (interior.has(index) && (msg.role === 'assistant' || msg.role === 'toolResult' || summary)) {
      stats.chainDropped++;
      return;
    }
    if (summary && summaryRefHits(msg, index, refHits(index))) {
      stats.chainDropped++;
      return;
    }
    if (msg.role === 'assistant' && stripAt.has(index)) {
      const stripped = withoutThinking(msg, index);
      if (stripped !== msg) stats.finalThinkingStripped++;
      out.push(stripped);
    } else {
      out.push(msg);
    }
    const insert = insertAfter.get(index);
    if (insert && !existing.has(insert.blockId)) {
      out.push(insert.message);
      stats.chainInserted++;
    }
  });
  return out;
}

// ---------------------------------------------------------------------------
// Phase 4: orphan sweep (SPEC-2.9.md §3, §4.1). Rust counterpart:
// src/phases/sweep.rs.

// The calls an assistant opens: `(content ?? [])` is filtered, so it must be
// an array of objects; a block without `id` opens undefined.
function openedCalls(msg, index) {
  const content = msg.content ?? [];
  if (!Array.isArray(content)) messageError(index, 'content', 'an array, null or absent (assistant content)', content);
  const open = new Set();
  content.forEach((block, j) => {
    if (block === null || block === undefined) messageError(index, `content[${j}]`, 'a content block', block);
    if (block.type === 'toolCall') open.add(block.id);
  });
  return open;
}

function orphanSweep(messages, report, stats) {
  let open = new Set();
  const orphans = new Set();
  const ids = [];
  messages.forEach((msg, index) => {
    if (msg.role === 'assistant') {
      open = openedCalls(msg, index);
    } else if (msg.role === 'toolResult') {
      if (open.has(msg.toolCallId)) {
        open.delete(msg.toolCallId);
      } else {
        orphans.add(index);
        ids.push(msg.toolCallId);
      }
    } else {
      // Everything else is a barrier, non-objects included.
      open = new Set();
    }
  });
  if (orphans.size === 0) return messages;
  stats.orphansSwept += orphans.size;
  reportOrphans(ids, report);
  return messages.filter((_, index) => !orphans.has(index));
}

// One `orphan-sweep` report: ids in JS default sort order (as strings,
// undefined last), the key the first 16 hex digits of SHA-1 over their UTF-8
// join (lone surrogates as U+FFFD), the detail the first five.
function reportOrphans(ids, report) {
  const sorted = [...ids].sort();
  const key = createHash('sha1').update(sorted.join(','), 'utf8').digest('hex').slice(0, 16);
  const shown = sorted.slice(0, 5);
  const more = sorted.length > shown.length ? ` ... +${sorted.length - shown.length} more` : '';
  report('orphan-sweep', key, `swept ${ids.length} orphan toolResult(s): ${shown.join(', ')}${more}`);
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
    orphansSwept: 0,
  };
}

/**
 * pi-condense 2.9.1's `pruneMessages`, with its signature: `indexer` is the
 * host's ToolCallIndexer (or anything with the seven methods the render
 * calls), `diagnostics` an object with report(kind, key, detail) or absent.
 * Returns {messages, pruned, beforeChars, afterChars, stats}; a no-op returns
 * the caller's array with 0/0 (diagnostics may still have been reported).
 * Nothing passed in is modified.
 */
function pruneWithIndexer(
  messages,
  indexer,
  chainCompression,
  errorPurgeConfig,
  protection,
  recoveryGraceTurns = 0,
  diagnostics,
) {
  assertMessageArray(messages);
  const index = bindIndexer(indexer, INDEXER_METHODS, '2.9.1');
  const report = reporterFor(diagnostics);
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
    if (entries === null || entries === undefined) stateError('indexer.getChainEntries()', 'an array', entries);
    if (entries.length > 0) {
      if (!Array.isArray(entries)) stateError('indexer.getChainEntries()', 'an array', entries);
      // Changed only when an entry was accepted (quirk 20).
      const next = chainRangePrune(current, index, entries, chainCompression, report, stats);
      pruned ||= next !== current;
      current = next;
    }
  }

  const swept = orphanSweep(current, report, stats);
  pruned ||= swept !== current;
  current = swept;

  if (!pruned) return { messages, pruned: false, beforeChars: 0, afterChars: 0, stats };
  return { messages: current, pruned: true, beforeChars: sizeOf(messages), afterChars: sizeOf(current), stats };
}

/**
 * The state-based entry: `state` as SPEC-2.9.md §2.3, `config` with the keys
 * of §2.5 (a null section is an absent one; another key, such as 2.4.3's
 * thinkingStrip, is a typed error), `diagnostics` as for pruneWithIndexer.
 */
function pruneMessages(messages, options = {}, diagnostics) {
  const { state, config } = options ?? {};
  const settings = config ?? {};
  if (typeof settings !== 'object' || Array.isArray(settings)) configError('config', 'an object', settings);
  for (const key of Object.keys(settings)) {
    if (!CONFIG_KEYS.includes(key)) configError(key, `one of ${CONFIG_KEYS.join(', ')}`, settings[key]);
  }
  return pruneWithIndexer(
    messages,
    createIndexer291(state),
    settings.chainCompression,
    settings.errorPurge,
    settings.protection,
    settings.recoveryGraceTurns,
    diagnostics,
  );
}

module.exports = {
  pruneMessages,
  pruneWithIndexer,
  createIndexer: createIndexer291,
  occKey,
  bare: (key) => bare(key, (value) => stateError('key', 'a string', value)),
  INDEXER_METHODS,
  CONFIG_KEYS,
};
