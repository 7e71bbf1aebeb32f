'use strict';

// pi-condense's own ToolCallIndexer, filled from a state object of either
// dialect, for the tests that hold the pure-JS oracles against the
// reference. The reference modules are loaded from ../shared/reference at
// test time and never copied into the repository; when they are absent,
// loadReference answers null and the tests skip with a message.
//
// The state goes in through the indexer's own methods (indexRecord or
// addBatch, registerSummaryRefs, registerDuplicate, registerSummaryBody,
// registerChain). A state can hold what no sequence of calls produces (a
// duplicate's short ref that differs from its original's, ref maps that are
// not each other's inverse, a self alias, an empty body); those parts are
// written into the indexer's fields, and `direct` lists each one so a test
// can show how much of a state needed it.

const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const REFERENCE = path.join(__dirname, '..', '..', '..', 'shared', 'reference');
const FOLDERS = { '2.4.3': 'pi-condense-2.4.3', '2.9.1': 'pi-condense-2.9.1' };

const loaded = new Map();

/**
 * The reference's modules for a dialect ('2.4.3' or '2.9.1'):
 * {ToolCallIndexer, pruneMessages}, or null when ../shared is absent.
 */
function loadReference(dialect) {
  if (!loaded.has(dialect)) {
    const dir = path.join(REFERENCE, FOLDERS[dialect]);
    const files = ['indexer.mjs', 'pruner.mjs'].map((f) => path.join(dir, f));
    loaded.set(
      dialect,
      files.every((f) => fs.existsSync(f))
        ? Promise.all(files.map((f) => import(pathToFileURL(f).href))).then(([indexer, pruner]) => ({
            ToolCallIndexer: indexer.ToolCallIndexer,
            pruneMessages: pruner.pruneMessages,
          }))
        : Promise.resolve(null),
    );
  }
  return loaded.get(dialect);
}

const SKIP_MESSAGE = `the reference modules are absent (${REFERENCE})`;

const isObject = (value) => value !== null && typeof value === 'object';
const tableOf = (state, name) => (isObject(state?.[name]) ? state[name] : {});
const listOf = (state, name) => (Array.isArray(state?.[name]) ? state[name] : []);
const noAppend = () => {};

// The records of a 2.9 state. indexRecord keys a record by its own
// toolCallId and resultTimestamp, so only a record the state keys that way
// can go through it; any other is set under the state's key and joins its
// toolCallId's key list, which is what indexRecord does with its own key.
function addRecords291(indexer, state, direct) {
  for (const [key, record] of Object.entries(tableOf(state, 'records'))) {
    const own = isObject(record)
      ? record.resultTimestamp === undefined
        ? record.toolCallId
        : `${record.toolCallId}@${record.resultTimestamp}`
      : undefined;
    if (own === key) {
      indexer.indexRecord(record);
      continue;
    }
    indexer.index.set(key, record);
    if (record !== null && record !== undefined) {
      const keys = indexer.bareIdToKeys.get(record.toolCallId) ?? [];
      keys.push(key);
      indexer.bareIdToKeys.set(record.toolCallId, keys);
    }
    direct.push(`records[${key}]: not keyed by its own id and timestamp`);
  }
}

// The records of a 2.4.3 state, through addBatch (2.4.3 has no indexRecord).
// addBatch copies the fields the render reads (toolName, args and the spill
// fields when present) into a record of its own; a content hash is given so
// that it does not hash a result text the state does not have. A record that
// is not an object cannot be copied and is set as it is.
function addRecords243(indexer, state, direct) {
  const toolCalls = [];
  for (const [key, record] of Object.entries(tableOf(state, 'records'))) {
    if (!isObject(record)) {
      indexer.index.set(key, record);
      direct.push(`records[${key}]: not an object`);
      continue;
    }
    const call = { toolCallId: key, toolName: record.toolName, args: record.args, resultText: '', isError: false };
    for (const field of ['spillPath', 'spillBytes', 'resultPreview']) {
      if (field in record) call[field] = record[field];
    }
    call.contentHash = `state:${key}`;
    toolCalls.push(call);
  }
  if (toolCalls.length > 0) indexer.addBatch({ toolCalls, turnIndex: 0, timestamp: 0 }, noAppend);
}

// Makes `map` hold exactly the entries of `table` (a JSON object).
function reconcile(map, table, what, direct) {
  for (const [key, value] of Object.entries(table)) {
    if (map.has(key) && map.get(key) === value) continue;
    map.set(key, value);
    direct.push(`${what}[${key}]: no registration sets it alone`);
  }
  for (const key of [...map.keys()]) {
    if (typeof key === 'string' && Object.hasOwn(table, key)) continue;
    map.delete(key);
    direct.push(`${what}[${String(key)}]: a registration added it, the state has none`);
  }
}

/**
 * A new ToolCallIndexer of `reference` (from loadReference) holding `state`
 * (a conformance state of that dialect). Returns {indexer, direct}.
 */
function fillIndexer(reference, dialect, state) {
  const indexer = new reference.ToolCallIndexer();
  const direct = [];
  if (dialect === '2.9.1') addRecords291(indexer, state, direct);
  else addRecords243(indexer, state, direct);

  // Ref aliases first: each registers the pair both ways.
  for (const [shortId, key] of Object.entries(tableOf(state, 'refAliases'))) {
    indexer.registerSummaryRefs([{ shortId, toolCallId: key }]);
  }
  // Dedup aliases after them, so a duplicate takes its original's short ref
  // as registerDuplicate gives it. It refuses a self alias and (2.9) a
  // non-string original; those are set as they are.
  for (const [key, original] of Object.entries(tableOf(state, 'dedupAliases'))) {
    if (key !== original && (dialect === '2.4.3' || typeof original === 'string')) {
      indexer.registerDuplicate(key, original, noAppend);
    } else {
      indexer.dedupAliasToOriginal.set(key, original);
      direct.push(`dedupAliases[${key}]: registerDuplicate refuses it`);
    }
  }
  // The two short-ref maps: registerSummaryRefs writes both at once and
  // skips empty or self refs, so where the state's pair is not each other's
  // inverse the remaining entries are written (or removed) directly.
  reconcile(indexer.toolCallIdToAlias, tableOf(state, 'shortRefs'), 'shortRefs', direct);
  reconcile(indexer.aliasToToolCallId, tableOf(state, 'refAliases'), 'refAliases', direct);

  // registerSummaryBody drops a body with an empty text or no ids; the state
  // keeps it (an empty text still joins the per-batch text), so it is pushed.
  listOf(state, 'summaryBodies').forEach((body, n) => {
    if (isObject(body) && body.text && body.toolCallIds?.length > 0) {
      indexer.registerSummaryBody(body.toolCallIds, body.text);
    } else {
      indexer.summaryBodies.push(body);
      direct.push(`summaryBodies[${n}]: registerSummaryBody drops it`);
    }
  });
  for (const entry of listOf(state, 'chains')) indexer.registerChain(entry);
  return { indexer, direct };
}

// The state the indexer holds, read from its tables (as a host that keeps
// pi-condense's indexer would hand it to the state-based API).
function stateOfIndexer(indexer) {
  return {
    records: Object.fromEntries(indexer.index),
    dedupAliases: Object.fromEntries(indexer.dedupAliasToOriginal),
    shortRefs: Object.fromEntries(indexer.toolCallIdToAlias),
    refAliases: Object.fromEntries(indexer.aliasToToolCallId),
    chains: [...indexer.chainRegistry.values()],
    summaryBodies: indexer.summaryBodies,
  };
}

/**
 * The arguments after `messages` of a release's pruneMessages (the
 * reference's, the drop-ins', the oracles' pruneWithIndexer), in its own
 * order: 2.4.3 ends with the boundary, 2.9.1 with the diagnostics sink.
 */
function releaseArgs(dialect, indexer, config, boundary, sink) {
  return dialect === '2.9.1'
    ? [indexer, config.chainCompression, config.errorPurge, config.protection, config.recoveryGraceTurns, sink]
    : [indexer, config.chainCompression, config.errorPurge, config.thinkingStrip, config.protection, config.recoveryGraceTurns, boundary];
}

// The reference's pruneMessages on a conformance case, with its own
// signature; null config sections are passed as undefined (the README).
function referenceArgs(dialect, c, indexer, sink) {
  const config = c.config ?? {};
  const section = (name) => config[name] ?? undefined;
  const sections = {
    chainCompression: section('chainCompression'),
    errorPurge: section('errorPurge'),
    thinkingStrip: section('thinkingStrip'),
    protection: section('protection'),
    recoveryGraceTurns: config.recoveryGraceTurns,
  };
  return releaseArgs(dialect, indexer, sections, c.thinkingBoundaryTimestamp ?? undefined, sink);
}

module.exports = { loadReference, fillIndexer, referenceArgs, releaseArgs, stateOfIndexer, SKIP_MESSAGE };
