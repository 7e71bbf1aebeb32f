'use strict';

// The public API of condense-native. The binding does the work; this layer
// checks arguments, turns the host's state and config into what the binding
// takes, and applies edit scripts to the caller's arrays (js/). Where no
// native binary loads, the same API runs on the pure-JS oracle (js/pure/).

const native = require('./loader.js');
const pure = { v24: require('./js/pure/v2.4.js'), v29: require('./js/pure/v2.9.js') };
const { Conversation } = require('./js/conversation.js');
const { mayChange, noOp } = require('./js/noop.js');
const { makeSession } = require('./js/session.js');
const { dropIns, stateFromIndexer } = require('./js/dropin.js');
const {
  argumentError,
  asBytes,
  boundaryOf,
  checkArray,
  checkConfig,
  deliver,
  dialectOf,
  jsonOrNull,
  stateJsonOrNull,
  sinkOf,
} = require('./js/args.js');

const hasEngine = typeof native.NativeEngine === 'function';

function withDiagnostics(r, sink) {
  const diagnostics = r.diagnostics ? JSON.parse(r.diagnostics) : [];
  deliver(sink, diagnostics);
  return { ...r, diagnostics };
}

/**
 * Prunes the JSON array of pi messages in a Buffer (never modified).
 * Reads the bytes once on the calling thread; converts `state` and `config`
 * (JSON.stringify, then natively, no cache) on every call: a host pruning
 * render after render should hold a `Pruner`. `messages` in the result is a new Buffer, or null when
 * nothing changed.
 */
function prune(messages, options = {}) {
  const bytes = asBytes(messages, 'prune');
  const o = options || {};
  const dialect = dialectOf(o, 'prune');
  const sink = sinkOf(o.diagnostics, 'prune');
  const r = native.pruneBytes(
    bytes,
    stateJsonOrNull(o.state),
    jsonOrNull(o.config, 'config'),
    boundaryOf(o, 'prune'),
    dialect,
  );
  return withDiagnostics(r, sink);
}

/**
 * Holds the converted config and state, so a host pays for converting the
 * state only when it changes (at flushes); `prune` then costs one read of
 * the bytes and one write of the output.
 */
class Pruner {
  constructor(config, options = {}) {
    const o = options || {};
    this._dialect = dialectOf(o, 'Pruner');
    this._native = new native.NativePruner(this._dialect);
    if (config !== undefined && config !== null) this.setConfig(config);
  }

  setConfig(config) {
    this._native.setConfig(jsonOrNull(config, 'config'));
    return this;
  }

  setState(state) {
    this._native.setState(stateJsonOrNull(state));
    return this;
  }

  prune(messages, options = {}) {
    const o = options || {};
    const sink = sinkOf(o.diagnostics, 'Pruner.prune');
    const r = this._native.prune(asBytes(messages, 'Pruner.prune'), boundaryOf(o, 'Pruner.prune'));
    return withDiagnostics(r, sink);
  }
}

/**
 * Prunes a JS array (stateless). The messages are sent once (Conversation
 * `sync`: long runs in slices, as v8.serialize bytes in Node, read on a
 * background thread); the state is not serialized (the ids present are
 * looked up in it); a no-op is answered without serializing anything.
 * Untouched messages in the result are the caller's own objects; a no-op
 * returns the caller's array. For renders of a growing conversation, a
 * PruneSession or a drop-in keeps the work between calls.
 */
// One engine per dialect serves the stateless calls, emptied after each:
// an engine's own memory is freed only when the JS engine finalizes it,
// after the event loop turns, so one per call would pile up in a loop that
// does not yield. A call made while another is running (from an indexer or
// a diagnostics sink) gets its own.
const spare = { '2.4.3': null, '2.9.1': null };

function spareConversation(dialect) {
  const conv = spare[dialect];
  spare[dialect] = null;
  return conv ?? new Conversation(native, dialect, true);
}

function pruneMessages(messages, options = {}) {
  checkArray(messages, 'pruneMessages');
  const o = options || {};
  const dialect = dialectOf(o, 'pruneMessages');
  const boundary = boundaryOf(o, 'pruneMessages');
  const sink = sinkOf(o.diagnostics, 'pruneMessages');
  checkConfig(o.config, dialect, 'pruneMessages');
  const oracle = dialect === '2.9.1' ? pure.v29 : pure.v24;
  if (!hasEngine) {
    return oracle.pruneMessages(messages, { state: o.state, config: o.config, thinkingStripBoundaryTimestamp: boundary }, sink ?? undefined);
  }
  if (!mayChange(messages, o.state, o.config, dialect)) return noOp(messages, o.config, boundary, dialect);
  const conv = spareConversation(dialect);
  try {
    const indexer = oracle.createIndexer(o.state);
    conv.setConfig(o.config);
    conv.setBoundary(boundary);
    conv.sync(messages, false);
    conv.answer(indexer);
    if (o.config && o.config.chainCompression && o.config.chainCompression.enabled) conv.chains(indexer);
    const r = conv.render(messages);
    deliver(sink, r.diagnostics);
    return r;
  } finally {
    conv.close();
    spare[dialect] = conv;
  }
}

const PruneSession = makeSession(native, pure);

/**
 * SPEC 6: the boundary a flush computes. Returns undefined where the
 * reference does (too few turns and no previous boundary).
 */
function computeThinkingBoundary(assistantTimestamps, keepLastTurns, prev) {
  if (!Array.isArray(assistantTimestamps) || assistantTimestamps.some((t) => typeof t !== 'number')) {
    throw argumentError('computeThinkingBoundary: assistantTimestamps must be an array of numbers');
  }
  if (typeof keepLastTurns !== 'number') {
    throw argumentError('computeThinkingBoundary: keepLastTurns must be a number');
  }
  if (prev !== undefined && prev !== null && typeof prev !== 'number') {
    throw argumentError('computeThinkingBoundary: prev must be a number, null or undefined');
  }
  const value = native.computeThinkingBoundary(assistantTimestamps, keepLastTurns, prev ?? null);
  return value === null ? undefined : value;
}

/** `JSON.stringify(JSON.parse(bytes)).length`, computed natively. */
function sizeOf(messages) {
  return native.sizeOf(asBytes(messages, 'sizeOf'));
}

const { loadSession, loadSessionAsync } = require('./js/sessionfile.js').makeSessionFileApi(native, {
  argumentError,
});

const replayApi = require('./js/replay.js').makeReplayApi(native, { argumentError });
const { replay, replayAsync, gateSettings } = replayApi;
const { tune, tuneAsync } = require('./js/tune.js').makeTuneApi(native, { argumentError, replayApi });

module.exports = {
  prune,
  Pruner,
  pruneMessages,
  PruneSession,
  /** pi-condense 2.4.3's pruneMessages (also `condense-native/pi-condense-2.4`). */
  pruneMessagesCompat: dropIns.pruneMessages24,
  stateFromIndexer,
  computeThinkingBoundary,
  sizeOf,
  loadSession,
  loadSessionAsync,
  replay,
  replayAsync,
  gateSettings,
  tune,
  tuneAsync,
  /** 'native' when the platform binary loaded, 'js' on the pure-JS fallback. */
  backend: native.backend,
};
