'use strict';

// The indexer interface over a plain state object, for both dialects: what
// the host's ToolCallIndexer would answer if it had been filled with that
// state (SPEC.md §2.2 for 2.4.3, SPEC-2.9.md §2.3-2.4 for 2.9.1). The
// pure-JS phases only ever talk to an indexer, so the state-based entry
// points hand them one of these, and the drop-ins hand them the host's own.
//
// The reference keeps its tables in Maps: keys compare by SameValueZero, so a
// number never finds a string key, and `__proto__` is an ordinary key. The
// state's tables are JSON objects (string keys), read with own-property
// look-ups for string keys only, which is the same thing. A table that is
// absent or not an object reads as empty. Rust counterpart: src/state.rs.

const { stateError } = require('./errors.js');

function tableOf(state, name) {
  const table = state?.[name];
  return table !== null && typeof table === 'object' ? table : null;
}

function has(table, key) {
  return table !== null && typeof key === 'string' && Object.hasOwn(table, key);
}

function get(table, key) {
  return has(table, key) ? table[key] : undefined;
}

// Chains registered in array order under startUserTimestamp: a later
// registration replaces the value and keeps the first one's place (Map#set).
// getChainEntries sorts a copy with the reference's comparator (stable; a NaN
// difference counts as equal); findChainEntryByBlockId takes the first value
// in registry order with that blockId.
function chainRegistry(state) {
  const chains = Array.isArray(state?.chains) ? state.chains : [];
  const registry = new Map();
  chains.forEach((entry, n) => {
    if (entry === null || entry === undefined) stateError(`chains[${n}]`, 'an object', entry);
    registry.set(entry.startUserTimestamp, entry);
  });
  const values = [...registry.values()];
  let sorted;
  return {
    entries: () => (sorted ??= [...values].sort((a, b) => a.startUserTimestamp - b.startUserTimestamp)),
    byBlockId: (blockId) => values.find((entry) => entry.blockId === blockId),
  };
}

// The texts of the bodies (in order) whose ids meet `ids`, each text once,
// joined by a blank line. `ids` is used as the reference uses it: `""` when
// its length is 0, else `new Set(ids)` (a string is its characters).
// `index` (from bodyIndex) finds the bodies by id instead of testing every
// body against every id list: chains x bodies was the cost on long sessions.
function perBatchSummaryText(state, ids, index) {
  if (ids === null || ids === undefined) stateError('chain entry id list', 'an array', ids);
  if (ids.length === 0) return '';
  if (typeof ids[Symbol.iterator] !== 'function') stateError('chain entry id list', 'an array', ids);
  const wanted = new Set(ids);
  const bodies = Array.isArray(state?.summaryBodies) ? state.summaryBodies : [];
  let picked;
  if (index !== null) {
    const found = new Set();
    for (const id of wanted) for (const n of index.get(id) ?? []) found.add(n);
    picked = [...found].sort((a, b) => a - b);
  } else {
    picked = [];
    bodies.forEach((body, n) => {
      if (body === null || body === undefined) stateError(`summaryBodies[${n}]`, 'an object', body);
      const bodyIds = body.toolCallIds;
      if (typeof bodyIds?.some !== 'function') stateError(`summaryBodies[${n}].toolCallIds`, 'an array', bodyIds);
      if (bodyIds.some((id) => wanted.has(id))) picked.push(n);
    });
  }
  const texts = [];
  const seen = new Set();
  for (const n of picked) {
    const text = bodies[n].text;
    if (seen.has(text)) continue;
    seen.add(text);
    texts.push(text);
  }
  return texts.join('\n\n');
}

// For perBatchSummaryText: each id (by SameValueZero, as a Set compares) to
// the indices of the bodies listing it, ascending. Null when a body is not
// an object with an array of ids, so the scan throws its error as before.
function bodyIndex(state) {
  const bodies = Array.isArray(state?.summaryBodies) ? state.summaryBodies : [];
  const index = new Map();
  for (let n = 0; n < bodies.length; n++) {
    const body = bodies[n];
    if (body === null || typeof body !== 'object' || !Array.isArray(body.toolCallIds)) return null;
    for (const id of body.toolCallIds) {
      const at = index.get(id);
      if (at === undefined) index.set(id, [n]);
      else if (at[at.length - 1] !== n) at.push(n);
    }
  }
  return index;
}

// bodyIndex(state), built on first use.
function bodiesOf(state) {
  let index;
  return () => (index === undefined ? (index = bodyIndex(state)) : index);
}

// Both dialects resolve a record the same way up to the legacy rung, then
// test the result for truthiness: a record keyed "" is never returned, and a
// falsy alias target falls through to the next rung (quirk 2 / 1).
function resolver(records, dedupAliases, refAliases, keysOf) {
  return (key) => {
    if (has(records, key)) return key;
    const original = get(dedupAliases, key);
    if (original) return original;
    const aliased = get(refAliases, key);
    if (aliased || !keysOf) return aliased;
    const keys = keysOf(key);
    return keys !== undefined && keys.length === 1 ? keys[0] : undefined;
  };
}

/** The 2.4.3 indexer over a state (SPEC.md §2.2): bare toolCallIds. */
function createIndexer243(state) {
  const records = tableOf(state, 'records');
  const dedupAliases = tableOf(state, 'dedupAliases');
  const shortRefs = tableOf(state, 'shortRefs');
  const resolve = resolver(records, dedupAliases, tableOf(state, 'refAliases'), null);
  let chains;
  const registry = () => (chains ??= chainRegistry(state));
  const bodies = bodiesOf(state);
  return {
    isSummarized: (id) => has(records, id) || has(dedupAliases, id),
    getRecord(id) {
      const key = resolve(id);
      return key ? get(records, key) : undefined;
    },
    getShortRefForToolCallId: (id) => get(shortRefs, id),
    getChainEntries: () => registry().entries(),
    getPerBatchSummaryTextForToolCallIds: (ids) => perBatchSummaryText(state, ids, bodies()),
    findChainEntryByBlockId: (blockId) => registry().byBlockId(blockId),
  };
}

/**
 * The 2.9.1 indexer over a state (SPEC-2.9.md §2.4): occurrence keys, with
 * the bare id of a legacy record as the only fallback.
 */
function createIndexer291(state) {
  const records = tableOf(state, 'records');
  const dedupAliases = tableOf(state, 'dedupAliases');
  const shortRefs = tableOf(state, 'shortRefs');

  // keysOf(id): the keys of the records whose toolCallId is id (any value,
  // by SameValueZero), in insertion order. Built on first use.
  let keysById;
  const keysOf = (id) => {
    if (!keysById) {
      keysById = new Map();
      for (const key of records ? Object.keys(records) : []) {
        const record = records[key];
        if (record === null || record === undefined) continue;
        const list = keysById.get(record.toolCallId);
        if (list) list.push(key);
        else keysById.set(record.toolCallId, [key]);
      }
    }
    return keysById.get(id);
  };
  const resolve = resolver(records, dedupAliases, tableOf(state, 'refAliases'), keysOf);
  let chains;
  const registry = () => (chains ??= chainRegistry(state));
  const bodies = bodiesOf(state);
  return {
    isSummarized: (key) => has(records, key) || has(dedupAliases, key),
    hasLegacyBareRecord: (id) => has(records, id) && keysOf(id)?.length === 1,
    getRecord(key) {
      const resolved = resolve(key);
      return resolved ? get(records, resolved) : undefined;
    },
    getShortRefForToolCallId: (key) => get(shortRefs, key),
    getChainEntries: () => registry().entries(),
    getPerBatchSummaryTextForToolCallIds: (ids) => perBatchSummaryText(state, ids, bodies()),
    findChainEntryByBlockId: (blockId) => registry().byBlockId(blockId),
  };
}

module.exports = { createIndexer243, createIndexer291 };
