'use strict';

// Pure-JavaScript implementation of pi-condense's render-path pruner
// (SPEC.md). It is the fallback when no native binary fits and the oracle
// for differential tests, so it follows the reference's JavaScript semantics
// on odd values on purpose (see js/NOTES.md); those spots are marked "quirk".

const ERR_CODE = 'ERR_CONDENSE_INVALID_INPUT';
const STUB_DASH = '\u2014';
const PRUNE_SUMMARY_TYPE = 'context-prune-summary';
const GRACE_TOOL = 'context_tree_query';
const EXISTING_BLOCK_RE = /^<compressed-chain id="([^"]+)"/;
// No `u` flag: \d is ASCII digits only (quirk 17).
const BLOCK_REF_RE = /\{(b\d+)\}/g;

// Raised wherever the reference itself throws. It is a TypeError (that is
// what the reference raises) carrying a code and the place of the problem.
class CondenseInputError extends TypeError {
  constructor(message, index, field) {
    super(message);
    this.code = ERR_CODE;
    if (index !== undefined) this.index = index;
    if (field !== undefined) this.field = field;
  }
}
CondenseInputError.prototype.name = 'TypeError';

function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function fail(index, field, expectation, value) {
  const where = index === undefined ? field : `messages[${index}]${field ? '.' + field : ''}`;
  throw new CondenseInputError(`${where}: expected ${expectation}, got ${describe(value)}`, index, field);
}

// JSON.stringify as the reference calls it, but a value it cannot serialize
// (cycles, BigInt, nesting deeper than the engine's stack) becomes a typed
// error instead of escaping as a RangeError or a bare TypeError.
function serialize(value, index, field) {
  try {
    return JSON.stringify(value);
  } catch (cause) {
    const where = index === undefined ? field : `messages[${index}].${field}`;
    const error = new CondenseInputError(`${where}: cannot be serialized as JSON (${cause.message})`, index, field);
    error.cause = cause;
    throw error;
  }
}

function isNullish(value) {
  return value === null || value === undefined;
}

// ---------------------------------------------------------------------------
// Indexer: the look-ups of SPEC 2.2 over a plain state object. The id tables
// are read directly (only for ids the messages ask about); the chain registry
// is built on first use.

// The reference keeps these tables in Maps with string keys, so a non-string
// id never matches (quirk 18) and `__proto__` is an ordinary key (quirk 19).
function lookup(table, id) {
  if (typeof id !== 'string' || !table || typeof table !== 'object') return undefined;
  return Object.hasOwn(table, id) ? table[id] : undefined;
}

function hasKey(table, id) {
  return typeof id === 'string' && !!table && typeof table === 'object' && Object.hasOwn(table, id);
}

function createIndexer(state) {
  const source = state || {};
  let registry, sortedEntries, byBlockId;

  // Chains keyed by startUserTimestamp: a later registration replaces the
  // value but keeps the first one's position (Map.set semantics).
  const chainRegistry = () => {
    if (!registry) {
      registry = new Map();
      for (const entry of Array.isArray(source.chains) ? source.chains : []) {
        registry.set(entry.startUserTimestamp, entry);
      }
    }
    return registry;
  };

  const summaryBodies = Array.isArray(source.summaryBodies) ? source.summaryBodies : [];

  const indexer = {
    isSummarized(id) {
      return hasKey(source.records, id) || hasKey(source.dedupAliases, id);
    },
    getRecord(id) {
      if (hasKey(source.records, id)) return source.records[id];
      const original = lookup(source.dedupAliases, id);
      // quirk 2: the dedup target is tested for truthiness; "" falls through.
      if (original) return lookup(source.records, original);
      return lookup(source.records, lookup(source.refAliases, id));
    },
    getShortRefForToolCallId(id) {
      return lookup(source.shortRefs, id);
    },
    getChainEntries() {
      if (!sortedEntries) {
        sortedEntries = [...chainRegistry().values()].sort(
          (a, b) => a.startUserTimestamp - b.startUserTimestamp,
        );
      }
      return sortedEntries;
    },
    getPerBatchSummaryTextForToolCallIds(ids) {
      const wanted = new Set(ids);
      const texts = [];
      const seen = new Set();
      for (const body of summaryBodies) {
        const bodyIds = Array.isArray(body.toolCallIds) ? body.toolCallIds : [];
        if (!bodyIds.some((id) => wanted.has(id))) continue;
        if (seen.has(body.text)) continue;
        seen.add(body.text);
        texts.push(body.text);
      }
      return texts.join('\n\n');
    },
    // The first entry in registry order with that blockId.
    findChainEntryByBlockId(blockId) {
      if (!byBlockId) {
        byBlockId = new Map();
        for (const entry of chainRegistry().values()) {
          if (!byBlockId.has(entry.blockId)) byBlockId.set(entry.blockId, entry);
        }
      }
      return byBlockId.get(blockId);
    },
  };
  return indexer;
}

// ---------------------------------------------------------------------------
// Protection (SPEC 5)

function escapeRegExpChar(ch) {
  return /[\\^$.*+?()[\]{}|/]/.test(ch) ? '\\' + ch : ch;
}

// quirk 3: a JS regex without `u`/`s`, so `?`/`*` work on UTF-16 code units,
// `.` (from `**`) stops at line terminators, and `$` is the true end.
function globToRegExp(glob) {
  let source = '^';
  for (let i = 0; i < glob.length; ) {
    if (glob.startsWith('**/', i)) {
      source += '(?:.*/)?';
      i += 3;
    } else if (glob.startsWith('**', i)) {
      source += '.*';
      i += 2;
    } else if (glob[i] === '*') {
      source += '[^/]*';
      i += 1;
    } else if (glob[i] === '?') {
      source += '[^/]';
      i += 1;
    } else {
      source += escapeRegExpChar(glob[i]);
      i += 1;
    }
  }
  return new RegExp(source + '$');
}

function createProtection(protection) {
  if (!protection) return () => false;
  const tools = Array.isArray(protection.protectedTools) ? protection.protectedTools : [];
  const globs = Array.isArray(protection.protectedPaths) ? protection.protectedPaths : [];
  let patterns;
  return (toolName, args) => {
    if (tools.includes(toolName)) return true;
    if (globs.length === 0) return false;
    const path = isNullish(args) ? undefined : args.path;
    if (typeof path !== 'string') return false;
    patterns ??= globs.map((glob) => globToRegExp(String(glob)));
    const normalized = path.replace(/\\/g, '/');
    return patterns.some((re) => re.test(normalized));
  };
}

// ---------------------------------------------------------------------------
// Phase 1: stub-replace

function recoveryGraceIds(messages, recoveryGraceTurns) {
  const grace = new Set();
  // quirk 16: JS comparisons, so "2" works as 2 and null disables.
  if (!(recoveryGraceTurns > 0)) return grace;
  let userTotal = 0;
  for (const msg of messages) if (msg.role === 'user') userTotal++;
  let seen = 0;
  for (const msg of messages) {
    if (msg.role === 'user') seen++;
    if (
      msg.role === 'toolResult' &&
      msg.toolName === GRACE_TOOL &&
      typeof msg.toolCallId === 'string' &&
      userTotal - seen <= recoveryGraceTurns
    ) {
      grace.add(msg.toolCallId);
    }
  }
  return grace;
}

function stubText(record, ref) {
  if (record && record.spillPath) {
    return [
      `[Oversized output spilled to file ${STUB_DASH} ${record.spillBytes ?? '?'} bytes.]`,
      `Tool: ${record.toolName}`,
      'Preview (head):',
      `${record.resultPreview ?? ''}`,
      `Full output ${STUB_DASH} read this file (offset/limit supported): ${record.spillPath}`,
      `Or use context_tree_query with ref \`${ref}\`.`,
    ].join('\n');
  }
  return `[Summarized in pruner summary, ref \`${ref}\`. Use context_tree_query to retrieve full output.]`;
}

function makeStub(msg, record, ref) {
  const stub = { role: 'toolResult', toolCallId: msg.toolCallId };
  if (msg.toolName !== undefined) stub.toolName = msg.toolName;
  stub.content = [{ type: 'text', text: stubText(record, ref) }];
  stub.isError = false;
  if (msg.timestamp !== undefined) stub.timestamp = msg.timestamp;
  return stub;
}

function stubReplace(messages, indexer, isProtected, recoveryGraceTurns, stats) {
  messages.forEach((msg, index) => {
    // quirk 15: the reference reads msg.role on every element.
    if (isNullish(msg)) fail(index, '', 'a message object', msg);
  });
  const grace = recoveryGraceIds(messages, recoveryGraceTurns);
  let out = null;
  messages.forEach((msg, index) => {
    if (msg.role !== 'toolResult') return;
    const id = msg.toolCallId;
    if (!indexer.isSummarized(id)) return;
    const record = indexer.getRecord(id);
    if (record && isProtected(record.toolName, record.args)) return;
    if (grace.has(id)) return;
    const ref = indexer.getShortRefForToolCallId(id) ?? id;
    out ??= messages.slice();
    out[index] = makeStub(msg, record, ref);
    stats.stubbed++;
  });
  return out ?? messages;
}

// ---------------------------------------------------------------------------
// Phase 2: error purge

function errorPurge(messages, config, stats) {
  const erroredAt = new Map();
  let turn = 0;
  for (const msg of messages) {
    if (msg.role === 'assistant') turn++;
    else if (msg.role === 'toolResult' && msg.isError === true) erroredAt.set(msg.toolCallId, turn);
  }
  if (erroredAt.size === 0) return messages;
  const current = turn;
  // quirk 13: no defaults here; `x < undefined` / `x < null` never hold.
  const { cooldownTurns, minArgChars } = config;

  let out = null;
  messages.forEach((msg, index) => {
    if (msg.role !== 'assistant') return;
    const content = msg.content;
    // quirk 14: the reference maps every assistant's content.
    if (!Array.isArray(content)) fail(index, 'content', 'an array (assistant content)', content);
    let newContent = null;
    content.forEach((block, j) => {
      if (isNullish(block)) fail(index, `content[${j}]`, 'a content block', block);
      if (block.type !== 'toolCall' || !erroredAt.has(block.id)) return;
      if (current - erroredAt.get(block.id) < cooldownTurns) return;
      const body = serialize(block.arguments, index, `content[${j}].arguments`);
      if (body === undefined) fail(index, `content[${j}].arguments`, 'a JSON value', block.arguments);
      if (body.length < minArgChars) return;
      newContent ??= content.slice();
      newContent[j] = {
        ...block,
        arguments: { _purged: `<purged-errored-args size="${body.length}"/>` },
      };
      stats.purgedArgs++;
    });
    if (newContent) {
      out ??= messages.slice();
      out[index] = { ...msg, content: newContent };
    }
  });
  return out ?? messages;
}

// ---------------------------------------------------------------------------
// Phase 3: chain range prune

function existingBlockIds(messages) {
  const ids = new Set();
  for (const msg of messages) {
    if (msg.role !== 'user') continue;
    const content = msg.content;
    const first = isNullish(content) ? undefined : content[0];
    const text = isNullish(first) ? undefined : first.text;
    // quirk 7: String(text) is what RegExp#exec would look at.
    const match = EXISTING_BLOCK_RE.exec(String(text));
    if (match) ids.add(match[1]);
  }
  return ids;
}

function protectedOutputText(msg, index) {
  const content = msg.content;
  if (!Array.isArray(content)) return '';
  const texts = [];
  content.forEach((block, j) => {
    if (isNullish(block)) fail(index, `content[${j}]`, 'a content block', block);
    if (block.type === 'text') texts.push(block.text);
  });
  // Array#join: null/undefined become "", anything else String(value).
  return texts.join('\n');
}

function blockLookup(indexer, blockId) {
  const entry = indexer.findChainEntryByBlockId(blockId);
  if (!entry) return '';
  return entry.rangeSummaryText ?? indexer.getPerBatchSummaryTextForToolCallIds(entry.droppedToolCallIds ?? []);
}

function entrySummary(indexer, entry) {
  const summary =
    entry.rangeSummaryText ?? indexer.getPerBatchSummaryTextForToolCallIds(entry.droppedToolCallIds ?? []);
  return String(summary).replace(BLOCK_REF_RE, (whole, blockId) => {
    if (blockId === entry.blockId) return whole;
    const found = blockLookup(indexer, blockId);
    return found ? found : whole;
  });
}

function syntheticText(indexer, entry, outputs) {
  const toolRefs = entry.toolRefs;
  if (!Array.isArray(toolRefs)) fail(undefined, 'state.chains[].toolRefs', 'an array', toolRefs);
  let protectedPart = '';
  for (const { tool, text } of outputs) {
    protectedPart += `\n\n<protected-output tool="${tool}">\n${text}\n</protected-output>`;
  }
  // quirk 9: Array#join formatting of odd toolRefs elements.
  return (
    `<compressed-chain id="${entry.blockId}" tools="${toolRefs.join(',')}">\n` +
    `${entrySummary(indexer, entry)}${protectedPart}\n</compressed-chain>`
  );
}

function assistantDropped(msg, index, dropped) {
  const content = msg.content ?? [];
  if (!Array.isArray(content)) fail(index, 'content', 'an array, null or absent (assistant content)', content);
  let hit = false;
  content.forEach((block, j) => {
    if (isNullish(block)) fail(index, `content[${j}]`, 'a content block', block);
    if (block.type === 'toolCall' && dropped.has(block.id)) hit = true;
  });
  return hit;
}

function summaryDropped(msg, index, dropped) {
  const details = msg.details;
  const refs = (isNullish(details) ? undefined : details.toolCallRefs) ?? [];
  if (!Array.isArray(refs)) fail(index, 'details.toolCallRefs', 'an array, null or absent', refs);
  // Array#some stops at the first hit, so later bad elements are never read.
  for (let j = 0; j < refs.length; j++) {
    const ref = refs[j];
    if (isNullish(ref)) fail(index, `details.toolCallRefs[${j}]`, 'an object', ref);
    if (dropped.has(ref.toolCallId)) return true;
  }
  return false;
}

function withoutThinking(msg, content) {
  return { ...msg, content: content.filter((block) => block.type !== 'thinking') };
}

function chainRangePrune(messages, indexer, chainCompression, stats) {
  const entries = indexer.getChainEntries();
  const existing = existingBlockIds(messages);

  const dropped = new Set();
  const protectedBlock = new Map();
  const finalTimestamps = new Set();
  for (const entry of entries) {
    for (const id of entry.droppedToolCallIds ?? []) dropped.add(id);
    for (const id of entry.protectedToolCallIds ?? []) protectedBlock.set(id, entry.blockId);
    // quirk 6: only null is excluded; a missing field adds undefined.
    if (chainCompression.stripFinalAssistantThinking && entry.finalAssistantTimestamp !== null) {
      finalTimestamps.add(entry.finalAssistantTimestamp);
    }
  }

  const outputsByBlock = new Map();
  messages.forEach((msg, index) => {
    if (msg.role !== 'toolResult' || !protectedBlock.has(msg.toolCallId)) return;
    const blockId = protectedBlock.get(msg.toolCallId);
    if (!outputsByBlock.has(blockId)) outputsByBlock.set(blockId, []);
    outputsByBlock.get(blockId).push({ tool: msg.toolName, text: protectedOutputText(msg, index) });
  });

  const byStart = new Map();
  for (const entry of entries) {
    byStart.set(entry.startUserTimestamp, {
      entry,
      text: syntheticText(indexer, entry, outputsByBlock.get(entry.blockId) ?? []),
    });
  }

  const out = [];
  messages.forEach((msg, index) => {
    if (msg.role === 'toolResult' && dropped.has(msg.toolCallId)) {
      stats.chainDropped++;
      return;
    }
    if (msg.role === 'assistant') {
      if (assistantDropped(msg, index, dropped)) {
        stats.chainDropped++;
        return;
      }
      // An assistant without thinking stays the caller's object (null content
      // too); the reference's output is the same JSON either way for arrays.
      if (finalTimestamps.has(msg.timestamp) && hasThinking(msg, index)) {
        stats.finalThinkingStripped++;
        out.push(withoutThinking(msg, msg.content));
        return;
      }
    }
    if (msg.role === 'custom' && msg.customType === PRUNE_SUMMARY_TYPE && summaryDropped(msg, index, dropped)) {
      stats.chainDropped++;
      return;
    }
    out.push(msg);
    if (msg.role === 'user' && byStart.has(msg.timestamp)) {
      const { entry, text } = byStart.get(msg.timestamp);
      if (!existing.has(entry.blockId)) {
        out.push({ role: 'user', content: [{ type: 'text', text }], timestamp: entry.compressedAt });
        stats.chainInserted++;
      }
    }
  });
  return out;
}

// ---------------------------------------------------------------------------
// Phase 4: thinking strip

function hasThinking(msg, index) {
  const content = msg.content;
  if (!Array.isArray(content)) return false;
  // Array#some stops at the first thinking block, like the reference.
  for (let j = 0; j < content.length; j++) {
    const block = content[j];
    if (isNullish(block)) fail(index, `content[${j}]`, 'a content block', block);
    if (block.type === 'thinking') return true;
  }
  return false;
}

function stripThinkingAt(messages, shouldStrip, stats) {
  let out = null;
  messages.forEach((msg, index) => {
    if (msg.role !== 'assistant' || !shouldStrip(msg, index) || !hasThinking(msg, index)) return;
    msg.content.forEach((block, j) => {
      if (isNullish(block)) fail(index, `content[${j}]`, 'a content block', block);
    });
    out ??= messages.slice();
    out[index] = withoutThinking(msg, msg.content);
    stats.thinkingStripped++;
  });
  return out ?? messages;
}

function thinkingStrip(messages, config, boundary, stats) {
  if (!isNullish(boundary)) {
    // quirk 4: JS `<`, so null counts as 0 and numeric strings convert.
    return stripThinkingAt(messages, (msg) => msg.timestamp < boundary, stats);
  }
  // quirk 5: Math.max coerces; a NaN or fractional K gives an undefined
  // cut-off index, and then every assistant with thinking is stripped.
  const keep = Math.max(1, config.keepLastTurns);
  const assistantIndices = [];
  messages.forEach((msg, index) => {
    if (msg.role === 'assistant') assistantIndices.push(index);
  });
  if (assistantIndices.length <= keep) return messages;
  const cutoff = assistantIndices[assistantIndices.length - keep];
  return stripThinkingAt(messages, (msg, index) => !(index >= cutoff), stats);
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

function assertMessageArray(messages) {
  if (!Array.isArray(messages)) fail(undefined, 'messages', 'an array', messages);
}

function pruneWithIndexer(
  messages,
  indexer,
  chainCompression,
  errorPurgeConfig,
  thinkingStripConfig,
  protection,
  recoveryGraceTurns,
  thinkingBoundaryTimestamp,
) {
  assertMessageArray(messages);
  const stats = emptyStats();
  let current = stubReplace(messages, indexer, createProtection(protection), recoveryGraceTurns, stats);
  let pruned = current !== messages;

  if (errorPurgeConfig && errorPurgeConfig.enabled) {
    const next = errorPurge(current, errorPurgeConfig, stats);
    pruned ||= next !== current;
    current = next;
  }

  if (chainCompression && chainCompression.enabled && indexer.getChainEntries().length > 0) {
    // quirk 1: this phase always counts as a change.
    current = chainRangePrune(current, indexer, chainCompression, stats);
    pruned = true;
  }

  if (thinkingStripConfig && thinkingStripConfig.enabled) {
    const next = thinkingStrip(current, thinkingStripConfig, thinkingBoundaryTimestamp, stats);
    pruned ||= next !== current;
    current = next;
  }

  if (!pruned) return { messages, pruned: false, beforeChars: 0, afterChars: 0, stats };
  return {
    messages: current,
    pruned: true,
    beforeChars: serialize(messages, undefined, 'messages').length,
    afterChars: serialize(current, undefined, 'result').length,
    stats,
  };
}

// ---------------------------------------------------------------------------
// Frontier (SPEC 6)

function computeThinkingBoundary(assistantTimestamps, keepLastTurns, prev) {
  const keep = Math.max(1, keepLastTurns);
  const count = assistantTimestamps.length;
  const hasPrev = !isNullish(prev);
  if (count <= keep) return hasPrev ? prev : undefined;
  const candidate = assistantTimestamps[count - keep];
  return hasPrev ? Math.max(prev, candidate) : candidate;
}

function nextBoundary(messages, thinkingStripConfig, boundary) {
  if (!thinkingStripConfig || !thinkingStripConfig.enabled) return null;
  const timestamps = [];
  for (const msg of messages) {
    if (msg.role === 'assistant' && typeof msg.timestamp === 'number') timestamps.push(msg.timestamp);
  }
  const value = computeThinkingBoundary(timestamps, thinkingStripConfig.keepLastTurns, boundary ?? undefined);
  return typeof value === 'number' && !Number.isNaN(value) ? value : null;
}

function pruneMessages(messages, options = {}) {
  const { state, config = {}, thinkingStripBoundaryTimestamp } = options;
  const boundary = isNullish(thinkingStripBoundaryTimestamp) ? null : thinkingStripBoundaryTimestamp;
  const result = pruneWithIndexer(
    messages,
    createIndexer(state),
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
  createIndexer,
  globToRegExp,
  CondenseInputError,
  ERR_CODE,
};
