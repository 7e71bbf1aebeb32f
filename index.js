'use strict';

// The public API of condense-native. The binding does the work on bytes; this
// layer turns the host's state and config objects into JSON text (once per
// change with `Pruner`), checks arguments, and gives errors a stable `code`.

const native = require('./loader.js');

const ERR_INVALID_ARGUMENT = 'ERR_CONDENSE_INVALID_ARGUMENT';

function argumentError(message) {
  const err = new TypeError(message);
  err.code = ERR_INVALID_ARGUMENT;
  return err;
}

function asBytes(messages, where) {
  if (messages instanceof Uint8Array) return messages;
  throw argumentError(`${where}: messages must be a Buffer or Uint8Array holding a JSON array`);
}

// JSON text for the native side; null/undefined mean "absent".
function jsonOrNull(value, what) {
  if (value === undefined || value === null) return null;
  try {
    return JSON.stringify(value);
  } catch (cause) {
    const err = argumentError(`${what} cannot be serialized as JSON: ${cause.message}`);
    err.cause = cause;
    throw err;
  }
}

function boundaryOf(options, where) {
  const b = options == null ? undefined : options.thinkingStripBoundaryTimestamp;
  if (b === undefined || b === null) return null;
  if (typeof b !== 'number' || Number.isNaN(b)) {
    throw argumentError(`${where}: thinkingStripBoundaryTimestamp must be a number, null or undefined`);
  }
  return b;
}

/**
 * Prunes a JSON array of pi messages held in a Buffer. The caller's bytes are
 * never modified. `messages` in the result is a new Buffer when something
 * changed, null otherwise.
 */
function prune(messages, options = {}) {
  const bytes = asBytes(messages, 'prune');
  const opts = options || {};
  return native.pruneJson(
    bytes,
    jsonOrNull(opts.state, 'state'),
    jsonOrNull(opts.config, 'config'),
    boundaryOf(opts, 'prune'),
  );
}

/**
 * Keeps the converted config and state between renders, so a host pays for
 * converting the state only when it changes (at flushes).
 */
class Pruner {
  constructor(config) {
    this._native = new native.NativePruner();
    if (config !== undefined && config !== null) this.setConfig(config);
  }

  setConfig(config) {
    this._native.setConfig(jsonOrNull(config, 'config'));
    return this;
  }

  setState(state) {
    this._native.setState(jsonOrNull(state, 'state'));
    return this;
  }

  prune(messages, options = {}) {
    return this._native.prune(asBytes(messages, 'Pruner.prune'), boundaryOf(options, 'Pruner.prune'));
  }
}

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

const { pruneMessages, PruneSession } = require('./js/array.js').makeArrayApi(native, {
  argumentError,
  jsonOrNull,
  boundaryOf,
});

const { pruneMessagesCompat, stateFromIndexer } = require('./js/compat.js').makeCompat(pruneMessages);

const { loadSession, loadSessionAsync } = require('./js/sessionfile.js').makeSessionFileApi(native, {
  argumentError,
});

module.exports = {
  prune,
  pruneMessages,
  pruneMessagesCompat,
  stateFromIndexer,
  PruneSession,
  Pruner,
  computeThinkingBoundary,
  sizeOf,
  loadSession,
  loadSessionAsync,
  /** 'native' when the platform binary loaded, 'js' on the pure-JS fallback. */
  backend: native.backend,
};
