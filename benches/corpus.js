'use strict';

// The benchmarks' inputs: the shared corpus (real sessions with a pruning
// state, ../shared/corpus), its state in each dialect's shape, pi-condense's
// own ToolCallIndexer filled from it, and a flush like the ones
// pi-condense makes mid-conversation (a batch of pending tool results
// summarized: records, short refs, a summary body), applied to the indexer
// and to the state object alike. Nothing here is timed.

const fs = require('node:fs');
const path = require('node:path');
const { loadReference, fillIndexer } = require('../__test__/helpers/indexer.js');

const CORPUS_DIR = path.join(__dirname, '..', '..', 'shared', 'corpus');
const NAMES = ['small', 'medium', 'large', 'huge'];

function corpusAvailable(name) {
  return fs.existsSync(path.join(CORPUS_DIR, `${name}.json`));
}

function loadCorpus(name) {
  const file = path.join(CORPUS_DIR, `${name}.json`);
  const c = JSON.parse(fs.readFileSync(file, 'utf8'));
  return { name, file, bytes: fs.statSync(file).size, messages: c.messages, state: c.state, config: c.config, boundary: c.thinkingBoundaryTimestamp ?? null };
}

// The timestamp of each tool call's result, for occurrence keys.
function resultTimestamps(messages) {
  const at = new Map();
  for (const m of messages) {
    if (m && m.role === 'toolResult' && typeof m.timestamp === 'number' && !at.has(m.toolCallId)) at.set(m.toolCallId, m.timestamp);
  }
  return at;
}

/**
 * The corpus state in 2.9.1's shape: every key that has a tool result in
 * the conversation becomes its occurrence key `id@resultTimestamp` (records
 * carry `toolCallId` and `resultTimestamp`); ids without one stay bare, as
 * legacy records do.
 */
function stateFor291(state, messages) {
  const at = resultTimestamps(messages);
  const key = (id) => (at.has(id) ? `${id}@${at.get(id)}` : id);
  const mapKeys = (table, mapValue = (v) => v) =>
    Object.fromEntries(Object.entries(table || {}).map(([k, v]) => [key(k), mapValue(v)]));
  const records = {};
  for (const [id, r] of Object.entries(state.records || {})) {
    records[key(id)] = { toolCallId: id, ...(at.has(id) ? { resultTimestamp: at.get(id) } : {}), ...r };
  }
  return {
    records,
    dedupAliases: mapKeys(state.dedupAliases, key),
    shortRefs: mapKeys(state.shortRefs),
    refAliases: Object.fromEntries(Object.entries(state.refAliases || {}).map(([ref, id]) => [ref, key(id)])),
    chains: (state.chains || []).map((e) => ({ ...e, droppedOccurrenceKeys: e.droppedToolCallIds.map(key) })),
    summaryBodies: (state.summaryBodies || []).map((b) => ({ ...b, toolCallIds: b.toolCallIds.map(key) })),
  };
}

function stateOf(corpus, dialect) {
  return dialect === '2.9.1' ? stateFor291(corpus.state, corpus.messages) : corpus.state;
}

function configOf(corpus, dialect) {
  if (dialect === '2.4.3') return corpus.config;
  const { thinkingStrip: _unused, ...rest } = corpus.config;
  return rest;
}

/**
 * The pi-condense drop-in of the package in `pkg` for a corpus: the module,
 * the package's pure oracle (whose `createIndexer` the drop-in is asked
 * with), the corpus state in the dialect's shape, and the arguments that
 * follow `indexer` in the release's own signature (`boundary` is 2.4.3's
 * last one). For the memory test's child and the soak script.
 */
function dropInOf(pkg, corpus, dialect, boundary) {
  const dropIn = require(path.join(pkg, 'js', dialect === '2.9.1' ? 'pi-condense-2.9.js' : 'pi-condense-2.4.js'));
  const oracle = require(path.join(pkg, 'js', 'pure', dialect === '2.9.1' ? 'v2.9.js' : 'v2.4.js'));
  const config = configOf(corpus, dialect);
  const args =
    dialect === '2.9.1'
      ? [config.chainCompression, config.errorPurge, config.protection, config.recoveryGraceTurns]
      : [config.chainCompression, config.errorPurge, config.thinkingStrip, config.protection, config.recoveryGraceTurns, boundary];
  return { dropIn, oracle, state: stateOf(corpus, dialect), args };
}

/** pi-condense's ToolCallIndexer of `dialect` holding `state`, or null without ../shared. */
async function realIndexer(dialect, state) {
  const reference = await loadReference(dialect);
  if (!reference) return null;
  return fillIndexer(reference, dialect, state).indexer;
}

/**
 * A flush: the tool results among `messages` that are not summarized yet
 * (as a host's pending batch), summarized the way pi-condense does it:
 * addBatch, short refs, one summary body. Applied to the real indexer and,
 * in the addon's state shape, to `state` (mutated in place).
 */
function flush(indexer, state, dialect, messages, maxResults = 6) {
  const calls = new Map();
  for (const m of messages) {
    if (m && m.role === 'assistant' && Array.isArray(m.content)) {
      for (const b of m.content) if (b && b.type === 'toolCall') calls.set(b.id, b);
    }
  }
  const v29 = dialect === '2.9.1';
  const keyOf = (m) => (v29 ? `${m.toolCallId}@${m.timestamp}` : m.toolCallId);
  const batch = messages
    .filter((m) => m && m.role === 'toolResult' && !indexer.isSummarized(keyOf(m)))
    .slice(-maxResults);
  if (batch.length === 0) return 0;
  const toolCalls = batch.map((m) => ({
    toolCallId: m.toolCallId,
    toolName: m.toolName,
    args: calls.get(m.toolCallId)?.arguments ?? {},
    resultText: (m.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n'),
    isError: m.isError === true,
    ...(v29 ? { resultTimestamp: m.timestamp } : {}),
  }));
  indexer.addBatch({ toolCalls, turnIndex: 0, timestamp: 0 }, () => {});
  const refs = indexer.allocateSummaryRefs({ toolCalls });
  indexer.registerSummaryRefs(refs);
  const keys = batch.map(keyOf);
  const text = `### Batch summary\n${batch.map((m, i) => `- \`${refs[i].shortId}\` ${m.toolName}`).join('\n')}`;
  indexer.registerSummaryBody(keys, text);
  state.records ??= {};
  state.shortRefs ??= {};
  state.refAliases ??= {};
  state.summaryBodies ??= [];
  batch.forEach((m, i) => {
    const tc = toolCalls[i];
    state.records[keys[i]] = {
      ...(v29 ? { toolCallId: m.toolCallId, resultTimestamp: m.timestamp } : {}),
      toolName: tc.toolName,
      args: tc.args,
    };
    state.shortRefs[keys[i]] = refs[i].shortId;
    state.refAliases[refs[i].shortId] = keys[i];
  });
  state.summaryBodies.push({ toolCallIds: keys, text });
  return batch.length;
}

module.exports = { NAMES, CORPUS_DIR, corpusAvailable, loadCorpus, stateOf, configOf, dropInOf, realIndexer, flush, loadReference };
