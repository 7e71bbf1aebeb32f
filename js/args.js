'use strict';

// Argument checks shared by every export: each bad argument becomes a
// TypeError with code ERR_CONDENSE_INVALID_ARGUMENT naming the call and
// what was expected; messages that are not an array are the one exception,
// ERR_CONDENSE_NOT_ARRAY, the code every entry point and backend gives that
// fault (the Buffer APIs give it for bytes that parse to a non-array).

const codes = require('./codes.js');
const { stateJson } = require('./state-text.js');

function argumentError(message, cause) {
  const err = new TypeError(message);
  err.code = codes.INVALID_ARGUMENT;
  if (cause !== undefined) err.cause = cause;
  return err;
}

function asBytes(messages, where) {
  if (messages instanceof Uint8Array) return messages;
  throw argumentError(`${where}: messages must be a Buffer or Uint8Array holding a JSON array`);
}

function describeKind(value) {
  if (value === null) return 'null';
  if (typeof value === 'object') return value instanceof Uint8Array ? 'a Buffer' : 'an object';
  return typeof value;
}

function checkArray(messages, where) {
  if (Array.isArray(messages)) return;
  const err = new TypeError(`${where}: messages must be an array, found ${describeKind(messages)}`);
  err.code = codes.NOT_ARRAY;
  err.field = 'messages';
  throw err;
}

// JSON text for the native side; null/undefined mean "absent".
function jsonOrNull(value, what) {
  if (value === undefined || value === null) return null;
  try {
    return JSON.stringify(value);
  } catch (cause) {
    throw argumentError(`${what} cannot be serialized as JSON: ${cause.message}`, cause);
  }
}

// The state's JSON text for the native side (records projected to what the
// render path reads, js/state-text.js); null/undefined mean "absent".
function stateJsonOrNull(state) {
  if (state === undefined || state === null) return null;
  try {
    return stateJson(state);
  } catch (cause) {
    throw argumentError(`state cannot be serialized as JSON: ${cause.message}`, cause);
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

const DIALECTS = ['2.4.3', '2.9.1'];

function dialectOf(options, where) {
  const d = options == null ? undefined : options.dialect;
  if (d === undefined || d === null) return '2.4.3';
  if (!DIALECTS.includes(d)) {
    throw argumentError(`${where}: dialect must be '2.4.3' or '2.9.1', not ${JSON.stringify(d)}`);
  }
  return d;
}

// A diagnostics sink: an object with report(kind, key, detail), or absent.
function sinkOf(diagnostics, where) {
  if (diagnostics === undefined || diagnostics === null) return null;
  if (typeof diagnostics.report !== 'function') {
    throw argumentError(`${where}: diagnostics must have a report(kind, key, detail) method`);
  }
  return diagnostics;
}

function deliver(sink, diagnostics) {
  if (sink) for (const d of diagnostics) sink.report(d.kind, d.key, d.detail);
}

module.exports = { argumentError, asBytes, checkArray, jsonOrNull, stateJsonOrNull, boundaryOf, dialectOf, sinkOf, deliver };

// The config keys each dialect knows, as the oracles list them
// (src/config.rs checks the same on the native side; checking here lets a
// no-op answer without crossing over).
const CONFIG_KEYS = {
  '2.4.3': require('./pure/v2.4.js').CONFIG_KEYS,
  '2.9.1': require('./pure/v2.9.js').CONFIG_KEYS,
};

function checkConfig(config, dialect, where) {
  if (config === undefined || config === null) return;
  if (typeof config !== 'object' || Array.isArray(config)) {
    const err = new TypeError(`${where}: config must be an object`);
    err.code = codes.INVALID_CONFIG;
    throw err;
  }
  for (const key of Object.keys(config)) {
    if (config[key] !== undefined && config[key] !== null && !CONFIG_KEYS[dialect].includes(key)) {
      const err = new TypeError(`${where}: config: ${key} is not a setting of pi-condense ${dialect}`);
      err.code = codes.INVALID_CONFIG;
      throw err;
    }
  }
}

module.exports.checkConfig = checkConfig;
