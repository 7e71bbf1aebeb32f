'use strict';

// The native binding's byte-level surface (pruneBytes, NativePruner,
// computeThinkingBoundary, sizeOf) over the pure-JS oracles, for platforms
// where no native binary loads. Same arguments, same result shapes
// (messages as a Buffer of JSON text, or null on a no-op; diagnostics as
// JSON text), errors with the same codes (js/codes.js). The array APIs need
// no binding surface without a binary: they call the oracles themselves.

const pure = { '2.4.3': require('./pure/v2.4.js'), '2.9.1': require('./pure/v2.9.js') };

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function codedError(code, message, cause) {
  const err = new Error(message);
  err.code = code;
  if (cause !== undefined) err.cause = cause;
  return err;
}

function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

function parseBytes(bytes, what) {
  if (!(bytes instanceof Uint8Array)) {
    throw codedError('ERR_CONDENSE_INVALID_ARGUMENT', `${what} must be a Buffer or Uint8Array`);
  }
  let text;
  try {
    text = decoder.decode(bytes);
  } catch (cause) {
    throw codedError('ERR_CONDENSE_INVALID_JSON', `invalid JSON: ${what} are not valid UTF-8`, cause);
  }
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw codedError('ERR_CONDENSE_INVALID_JSON', `invalid JSON: ${cause.message}`, cause);
  }
}

function parseMessages(bytes) {
  const messages = parseBytes(bytes, 'messages');
  if (!Array.isArray(messages)) {
    throw codedError('ERR_CONDENSE_NOT_ARRAY', `messages must be a JSON array, found ${describe(messages)}`);
  }
  return messages;
}

// State and config arrive as JSON text (or null for "absent").
function parseObject(json, what, code) {
  if (json === undefined || json === null) return null;
  if (typeof json !== 'string') {
    throw codedError('ERR_CONDENSE_INVALID_ARGUMENT', `${what} must be JSON text, null or undefined`);
  }
  let value;
  try {
    value = JSON.parse(json);
  } catch (cause) {
    throw codedError('ERR_CONDENSE_INVALID_JSON', `${what}: invalid JSON: ${cause.message}`, cause);
  }
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw codedError(code, `${what}: must be an object`);
  }
  return value;
}

function checkBoundary(boundary) {
  if (boundary === undefined || boundary === null) return null;
  if (typeof boundary !== 'number' || Number.isNaN(boundary)) {
    throw codedError(
      'ERR_CONDENSE_INVALID_ARGUMENT',
      `thinkingStripBoundaryTimestamp must be a number, null or undefined (got ${Number.isNaN(boundary) ? 'NaN' : typeof boundary})`,
    );
  }
  return boundary;
}

function numberOrNull(value) {
  return typeof value === 'number' && !Number.isNaN(value) ? value : null;
}

function runPrune(bytes, state, config, boundary, dialect) {
  const messages = parseMessages(bytes);
  // The pure pruner's errors already carry the codes the native binding uses
  // for the same failures (js/codes.js), with the message index and field.
  const diagnostics = [];
  const sink = { report: (kind, key, detail) => diagnostics.push({ kind, key, detail }) };
  const result = pure[dialectName(dialect)].pruneMessages(
    messages,
    { state: state || {}, config: config || {}, thinkingStripBoundaryTimestamp: boundary },
    sink,
  );
  const frontier = result.frontier || {};
  return {
    pruned: result.pruned,
    beforeChars: result.beforeChars,
    afterChars: result.afterChars,
    messages: result.pruned ? Buffer.from(JSON.stringify(result.messages), 'utf8') : null,
    frontier: {
      thinkingStripBoundaryTimestamp: numberOrNull(frontier.thinkingStripBoundaryTimestamp),
      nextThinkingStripBoundaryTimestamp: numberOrNull(frontier.nextThinkingStripBoundaryTimestamp),
    },
    stats: { ...result.stats },
    // As the binding: the key only when there is something to report.
    ...(diagnostics.length > 0 ? { diagnostics: JSON.stringify(diagnostics) } : {}),
  };
}

function dialectName(dialect) {
  if (dialect === undefined || dialect === null) return '2.4.3';
  if (dialect !== '2.4.3' && dialect !== '2.9.1') {
    throw codedError('ERR_CONDENSE_INVALID_ARGUMENT', `dialect must be '2.4.3' or '2.9.1', not ${JSON.stringify(dialect)}`);
  }
  return dialect;
}

/** Stateless prune over JSON texts and the messages' bytes. */
function pruneBytes(messages, stateJson, configJson, thinkingStripBoundaryTimestamp, dialect) {
  const state = parseObject(stateJson, 'state', 'ERR_CONDENSE_INVALID_STATE');
  const config = parseObject(configJson, 'config', 'ERR_CONDENSE_INVALID_CONFIG');
  const boundary = checkBoundary(thinkingStripBoundaryTimestamp);
  return runPrune(messages, state, config, boundary, dialect);
}

/** Holds parsed state and config between renders. */
class NativePruner {
  constructor(dialect) {
    this._dialect = dialectName(dialect);
    this._state = null;
    this._config = null;
  }

  setState(stateJson) {
    this._state = parseObject(stateJson, 'state', 'ERR_CONDENSE_INVALID_STATE');
  }

  setConfig(configJson) {
    this._config = parseObject(configJson, 'config', 'ERR_CONDENSE_INVALID_CONFIG');
  }

  prune(messages, thinkingStripBoundaryTimestamp) {
    const boundary = checkBoundary(thinkingStripBoundaryTimestamp);
    return runPrune(messages, this._state, this._config, boundary, this._dialect);
  }
}

/** SPEC 6; null stands for `undefined`. */
function computeThinkingBoundary(assistantTimestamps, keepLastTurns, prev) {
  if (!Array.isArray(assistantTimestamps)) {
    throw codedError('ERR_CONDENSE_INVALID_ARGUMENT', 'assistantTimestamps must be an array of numbers');
  }
  return numberOrNull(pure['2.4.3'].computeThinkingBoundary(assistantTimestamps, keepLastTurns, prev ?? undefined));
}

/**
 * `JSON.stringify(JSON.parse(bytes)).length` of a messages array: like the
 * binding, any other JSON value is ERR_CONDENSE_NOT_ARRAY.
 */
function sizeOf(messages) {
  const value = parseMessages(messages);
  try {
    return JSON.stringify(value).length;
  } catch (cause) {
    throw codedError('ERR_CONDENSE_TOO_DEEP', `messages cannot be serialized: ${cause.message}`, cause);
  }
}

module.exports = { pruneBytes, NativePruner, computeThinkingBoundary, sizeOf };
