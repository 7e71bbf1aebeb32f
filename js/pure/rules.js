'use strict';

// The rules that pi-condense 2.4.3 and 2.9.1 apply identically, defined once
// for both pure-JS dialects (js/pure/v2.4.js, js/pure/v2.9.js): the stub and
// its envelope, recovery grace counting, protection globs, the pieces of a
// synthetic chain block, removing thinking, and the guarded calls into the
// host's indexer and diagnostics sink. Each follows the reference's
// JavaScript semantics on odd values on purpose (see the quirk lists in the
// conformance READMEs); where the reference would throw a TypeError, these
// throw a typed error (js/pure/errors.js) at the same place.

const codes = require('../codes.js');
const {
  CondenseInputError,
  messageError,
  stateError,
  configError,
  argumentError,
} = require('./errors.js');

const PRUNE_SUMMARY_TYPE = 'context-prune-summary';
const GRACE_TOOL = 'context_tree_query';
const DASH = '\u2014';

// ---------------------------------------------------------------------------
// Stub (SPEC §3 phase 1). Rust counterparts: src/phases/stub.rs (stub_text)
// and src/script.rs (write_stub, the envelope). The envelope below is also
// what js/applier.js builds from the engine's edit script.

function stubText(record, ref) {
  // quirk 11 (2.4.3) / 8 (2.9): spillPath is tested for truthiness, and the
  // fields print through templates (a missing toolName reads "undefined").
  if (record?.spillPath) {
    return [
      `[Oversized output spilled to file ${DASH} ${record.spillBytes ?? '?'} bytes.]`,
      `Tool: ${record.toolName}`,
      'Preview (head):',
      `${record.resultPreview ?? ''}`,
      `Full output ${DASH} read this file (offset/limit supported): ${record.spillPath}`,
      `Or use context_tree_query with ref \`${ref}\`.`,
    ].join('\n');
  }
  return `[Summarized in pruner summary, ref \`${ref}\`. Use context_tree_query to retrieve full output.]`;
}

// The stub's envelope: these keys in this order; a key whose value the
// original lacks is omitted (the reference writes `undefined`, which JSON
// drops).
function stubMessage(msg, text) {
  const id = msg.toolCallId;
  const name = msg.toolName;
  const ts = msg.timestamp;
  if (id !== undefined && name !== undefined && ts !== undefined) {
    // The usual tool result: one literal, one shape for every stub.
    return { role: 'toolResult', toolCallId: id, toolName: name, content: [{ type: 'text', text }], isError: false, timestamp: ts };
  }
  const stub = { role: 'toolResult' };
  if (msg.toolCallId !== undefined) stub.toolCallId = msg.toolCallId;
  if (msg.toolName !== undefined) stub.toolName = msg.toolName;
  stub.content = [{ type: 'text', text }];
  stub.isError = false;
  if (msg.timestamp !== undefined) stub.timestamp = msg.timestamp;
  return stub;
}

// Recovery grace: the keys (`keyOf(m)`: the bare id in 2.4.3, the occurrence
// key in 2.9) of context_tree_query results within the last
// `recoveryGraceTurns` user turns. quirk 16 (2.4.3) / 12 (2.9): JS `>` and
// `<=`, so "2" works as 2 and null or negatives disable it. Rust
// counterpart: src/phases/stub.rs (recovery_grace_ids).
function graceKeys(messages, recoveryGraceTurns, keyOf) {
  const keys = new Set();
  if (!(recoveryGraceTurns > 0)) return keys;
  let users = 0;
  for (const m of messages) if (m?.role === 'user') users++;
  let seen = 0;
  for (const m of messages) {
    if (m?.role === 'user') {
      seen++;
    } else if (
      m?.role === 'toolResult' &&
      m.toolName === GRACE_TOOL &&
      typeof m.toolCallId === 'string' &&
      users - seen <= recoveryGraceTurns
    ) {
      keys.add(keyOf(m));
    }
  }
  return keys;
}

// ---------------------------------------------------------------------------
// Protection (SPEC §5). Rust counterparts: src/glob.rs (the matcher) and
// src/config.rs (Protection::protects).

const globCache = new Map();
const GLOB_CACHE_MAX = 256;

// quirk 3 (2.4.3) / 2 (2.9): a JS regex without `u` or `s`, so `?` and `*`
// step over UTF-16 units, a bare `**` (`.`) stops at line terminators, `$` is
// the true end. `**/` is any number of whole directories, `[^/]*/` each, so
// a directory name may hold a line terminator. The pattern is read the way
// the reference reads it: by `.length` and index, each piece escaped with
// String#replace.
function globToRegExp(pattern) {
  const cached = typeof pattern === 'string' ? globCache.get(pattern) : undefined;
  if (cached) return cached;
  if (pattern === null || pattern === undefined) configError('protection.protectedPaths[]', 'a glob string', pattern);
  let source = '';
  for (let i = 0; i < pattern.length; ) {
    const ch = pattern[i];
    if (ch === '*' && pattern[i + 1] === '*' && pattern[i + 2] === '/') {
      source += '(?:[^/]*/)*';
      i += 3;
    } else if (ch === '*' && pattern[i + 1] === '*') {
      source += '.*';
      i += 2;
    } else if (ch === '*') {
      source += '[^/]*';
      i += 1;
    } else if (ch === '?') {
      source += '[^/]';
      i += 1;
    } else {
      if (typeof ch !== 'string') configError('protection.protectedPaths[]', 'a glob string', pattern);
      source += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      i += 1;
    }
  }
  const compiled = new RegExp(`^${source}$`);
  if (typeof pattern === 'string') {
    if (globCache.size >= GLOB_CACHE_MAX) globCache.clear();
    globCache.set(pattern, compiled);
  }
  return compiled;
}

// `protection` is read at every check, as the reference reads it: a missing
// list throws only once a check needs it (2.9 hostile-040). A string
// protectedTools is searched as a string (String#includes).
function isProtected(protection, toolName, args) {
  const tools = protection.protectedTools;
  if (typeof tools?.includes !== 'function') configError('protection.protectedTools', 'an array', tools);
  if (tools.includes(toolName)) return true;
  const paths = protection.protectedPaths;
  if (paths === null || paths === undefined) configError('protection.protectedPaths', 'an array', paths);
  if (paths.length === 0) return false;
  const path = args?.path;
  if (typeof path !== 'string') return false;
  if (typeof paths.some !== 'function') configError('protection.protectedPaths', 'an array', paths);
  const normalized = path.replace(/\\/g, '/');
  return paths.some((glob) => globToRegExp(glob).test(normalized));
}

// ---------------------------------------------------------------------------
// Synthetic chain blocks (SPEC §3 phase 3, steps 1 and 4). Rust
// counterparts: src/record/scan.rs (chain_block_id) and
// src/phases/log_index.rs (the blocks already present),
// src/phases/synthetic.rs (protected_output, synthetic_text,
// substitute_block_refs), src/script.rs (write_inserted, the envelope).

const EXISTING_BLOCK_RE = /^<compressed-chain id="([^"]+)"/;
// No `u` flag: \d is ASCII digits only (quirk 17 / 12). js/conversation.js
// finds the references to look up with it too.
const BLOCK_REF_RE = /\{b(\d+)\}/g;

// Block ids of synthetic blocks already in the array. quirk 7 / 3: reads
// `content?.[0]?.text`, converted to a string by RegExp#exec.
function existingBlockIds(messages) {
  const ids = new Set();
  for (const msg of messages) {
    if (msg.role !== 'user') continue;
    const match = EXISTING_BLOCK_RE.exec(msg.content?.[0]?.text ?? '');
    if (match) ids.add(match[1]);
  }
  return ids;
}

// A protected result's text: its text blocks joined with "\n" (quirk 10 / 7:
// non-array content gives "", text goes through Array#join, a null block
// throws).
function protectedOutputText(msg, index) {
  const content = Array.isArray(msg.content) ? msg.content : [];
  return content
    .filter((block, j) => {
      if (block === null || block === undefined) messageError(index, `content[${j}]`, 'a content block', block);
      return block.type === 'text';
    })
    .map((block) => block.text)
    .join('\n');
}

// The per-entry summary and the `{bN}` look-up built on it. `listOf(entry)`
// is the id list a dialect hands to the per-batch text.
function chainSummaries(indexer, listOf) {
  const summaryOf = (entry) => entry.rangeSummaryText ?? indexer.getPerBatchSummaryTextForToolCallIds(listOf(entry));
  const lookup = (blockId) => {
    const entry = indexer.findChainEntryByBlockId(blockId);
    if (!entry) return undefined;
    return summaryOf(entry) || undefined;
  };
  return { summaryOf, lookup };
}

// One pass of `{b<digits>}` substitution; the replacement is not re-scanned,
// `$&` in it stays literal, a non-string one is converted by String#replace.
// The entry's own block id stays literal ("self": only a string equal to
// "b" + digits).
function substituteBlockRefs(summary, lookup, entry) {
  if (typeof summary !== 'string') stateError(`chains[blockId=${entry.blockId}] summary`, 'a string', summary);
  return summary.replace(BLOCK_REF_RE, (match, digits) => {
    const ref = `b${digits}`;
    if (ref === entry.blockId) return match;
    return lookup(ref) ?? match;
  });
}

// The synthetic user message of one entry: `outputs` are its protected
// results ({tool, text}), `summary` its summary before substitution.
function syntheticMessage(entry, summary, lookup, outputs) {
  const resolved = substituteBlockRefs(summary, lookup, entry);
  const toolRefs = entry.toolRefs;
  if (!Array.isArray(toolRefs)) stateError(`chains[blockId=${entry.blockId}].toolRefs`, 'an array', toolRefs);
  // quirk 9 / 6: Array#join formatting (null empty, nested arrays flatten).
  const tools = toolRefs.join(',');
  let protectedPart = '';
  for (const { tool, text: body } of outputs) {
    protectedPart += `\n\n<protected-output tool="${tool}">\n${body}\n</protected-output>`;
  }
  const block = `<compressed-chain id="${entry.blockId}" tools="${tools}">\n${resolved}${protectedPart}\n</compressed-chain>`;
  return syntheticBlock(block, entry.compressedAt, entry.compressedAt !== undefined);
}

// The synthetic block's envelope around its text (also built by
// js/applier.js from the engine's edit script; src/script.rs write_inserted).
function syntheticBlock(text, timestamp, hasTimestamp) {
  const block = { role: 'user', content: [{ type: 'text', text }] };
  if (hasTimestamp) block.timestamp = timestamp;
  return block;
}

function isPerBatchSummary(msg) {
  return msg.role === 'custom' && msg.customType === PRUNE_SUMMARY_TYPE;
}

// Does some ref of a per-batch summary hit? `details?.toolCallRefs ?? []`
// must be an array; refs are tested in order up to the first hit, and a null
// ref throws.
function summaryRefHits(msg, index, hits) {
  const refs = msg.details?.toolCallRefs ?? [];
  if (!Array.isArray(refs)) messageError(index, 'details.toolCallRefs', 'an array, null or absent', refs);
  return refs.some((ref, j) => {
    if (ref === null || ref === undefined) messageError(index, `details.toolCallRefs[${j}]`, 'an object', ref);
    return hits(ref, j);
  });
}

// ---------------------------------------------------------------------------
// Thinking. Rust counterparts: src/phases/synthetic.rs (has_thinking),
// src/script.rs (strip_thinking), the strip itself in src/apply.rs.

function checkBlocks(content, index) {
  content.forEach((block, j) => {
    if (block === null || block === undefined) messageError(index, `content[${j}]`, 'a content block', block);
  });
}

// Does an assistant hold a thinking block? Non-array content holds none;
// like Array#some, a null block before the first thinking throws.
function hasThinking(msg, index) {
  const content = msg.content;
  if (!Array.isArray(content)) return false;
  return content.some((block, j) => {
    if (block === null || block === undefined) messageError(index, `content[${j}]`, 'a content block', block);
    return block.type === 'thinking';
  });
}

// The message without its thinking blocks, or the caller's own message when
// it has none (the reference's copy would serialize the same). The content
// must be an array without null blocks, as the reference's filter needs.
function withoutThinking(msg, index) {
  const content = msg.content;
  if (!Array.isArray(content)) messageError(index, 'content', 'an array (assistant content)', content);
  checkBlocks(content, index);
  if (!content.some((block) => block.type === 'thinking')) return msg;
  return { ...msg, content: content.filter((block) => block.type !== 'thinking') };
}

// ---------------------------------------------------------------------------
// The host's objects. The reference calls these lazily: an indexer method is
// needed only when the render gets to it, and a sink only when something is
// reported. A missing one is a typed error at that point, and only there.

// What an indexer's member is when it is not a function, for the message.
function describeMember(indexer, member) {
  if (indexer === null || indexer === undefined) return `the indexer is ${indexer}`;
  if (member === undefined) return 'it has none';
  return `it is ${member === null ? 'null' : typeof member}`;
}

// The error of a call the release's render makes to a method the indexer
// does not have. Rust counterpart (same message, code and field):
// src/indexer_methods.rs `missing_method_error`.
function missingMethodError(release, name, found) {
  return new CondenseInputError(
    codes.INVALID_ARGUMENT,
    `pruneMessages: indexer.${name} must be a function (pi-condense ${release}'s render calls it for this input; ${found})`,
    { field: `indexer.${name}` },
  );
}

// The indexer's members among `methods` that are not functions, as
// `{ name: what it is }`, or null when it has them all (what the drop-ins
// hand the engine: src/indexer_methods.rs `AbsentMethods`).
function absentMethods(indexer, methods) {
  let absent = null;
  for (const name of methods) {
    const member = indexer?.[name];
    if (typeof member !== 'function') (absent ??= {})[name] = describeMember(indexer, member);
  }
  return absent;
}

// `release`'s render path calling `methods` of the host's indexer. A method
// that throws on what the indexer holds (the reference would pass its
// TypeError on) gives a typed state error, with the original as cause.
function bindIndexer(indexer, methods, release) {
  const bound = {};
  for (const name of methods) {
    bound[name] = (arg) => {
      const method = indexer?.[name];
      if (typeof method !== 'function') throw missingMethodError(release, name, describeMember(indexer, method));
      try {
        return method.call(indexer, arg);
      } catch (cause) {
        if (typeof cause?.code === 'string' && cause.code.startsWith('ERR_CONDENSE_')) throw cause;
        throw new CondenseInputError(codes.INVALID_STATE, `indexer.${name} threw: ${cause?.message ?? cause}`, {
          field: `indexer.${name}`,
          cause,
        });
      }
    };
  }
  return bound;
}

function reporterFor(diagnostics) {
  if (diagnostics === null || diagnostics === undefined) return () => {};
  return (kind, key, detail) => {
    if (typeof diagnostics.report !== 'function') argumentError('diagnostics.report', 'a function', diagnostics.report);
    diagnostics.report(kind, key, detail);
  };
}

// An id list of a chain entry, used the way the reference uses it: iterated
// (a string gives its characters); anything not iterable throws.
function iterableField(value, entry, field) {
  if (typeof value?.[Symbol.iterator] !== 'function') {
    stateError(`chains[blockId=${entry.blockId}].${field}`, 'an array', value);
  }
  return value;
}

function checkEntry(entry, n) {
  if (entry === null || entry === undefined) stateError(`chain entry ${n}`, 'an object', entry);
  return entry;
}

module.exports = {
  stubText,
  stubMessage,
  graceKeys,
  globToRegExp,
  isProtected,
  existingBlockIds,
  protectedOutputText,
  chainSummaries,
  syntheticMessage,
  syntheticBlock,
  BLOCK_REF_RE,
  isPerBatchSummary,
  summaryRefHits,
  hasThinking,
  withoutThinking,
  checkBlocks,
  bindIndexer,
  absentMethods,
  reporterFor,
  iterableField,
  checkEntry,
};
