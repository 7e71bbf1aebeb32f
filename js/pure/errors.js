'use strict';

// The typed error of the pure-JS pruners (both dialects) and the guards that
// raise it. The reference throws a bare TypeError wherever a value has the
// wrong shape; the pruners throw at the same places, but with a stable `code`
// from js/codes.js and the place as properties (`messageIndex`, `field`), so
// a host can branch on data instead of on text. Rust counterpart:
// src/error.rs (PruneError), which puts the same place into its message.

const codes = require('../codes.js');

class CondenseInputError extends TypeError {
  constructor(code, message, { messageIndex, field, cause } = {}) {
    super(message);
    this.code = code;
    if (messageIndex !== undefined) this.messageIndex = messageIndex;
    if (field !== undefined) this.field = field;
    if (cause !== undefined) this.cause = cause;
  }
}
// The reference's failures are TypeErrors; callers that test the name keep
// working.
CondenseInputError.prototype.name = 'TypeError';

function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

// A message (or a part of one) the reference cannot process.
function messageError(messageIndex, field, expectation, value) {
  const where = `messages[${messageIndex}]${field ? '.' + field : ''}`;
  throw new CondenseInputError(codes.INVALID_MESSAGE, `${where}: expected ${expectation}, got ${describe(value)}`, {
    messageIndex,
    field: field || undefined,
  });
}

// Something the indexer answered (a chain entry, a summary body) that the
// reference cannot process.
function fieldError(code, prefix, field, expectation, value) {
  throw new CondenseInputError(code, `${prefix}${field}: expected ${expectation}, got ${describe(value)}`, { field });
}

function stateError(field, expectation, value) {
  fieldError(codes.INVALID_STATE, 'state: ', field, expectation, value);
}

function configError(field, expectation, value) {
  fieldError(codes.INVALID_CONFIG, 'config: ', field, expectation, value);
}

function argumentError(field, expectation, value) {
  fieldError(codes.INVALID_ARGUMENT, '', field, expectation, value);
}

function assertMessageArray(messages) {
  if (!Array.isArray(messages)) {
    throw new CondenseInputError(codes.NOT_ARRAY, `messages: expected an array, got ${describe(messages)}`, {
      field: 'messages',
    });
  }
}

// JSON.stringify failed on a value: nesting too deep for the engine's stack
// (a RangeError) or a value JSON cannot hold (BigInt, a cycle).
function serializationError(cause, messageIndex, field) {
  const code = cause instanceof RangeError ? codes.TOO_DEEP : codes.INVALID_MESSAGE;
  const where = messageIndex === undefined ? field : `messages[${messageIndex}]${field ? '.' + field : ''}`;
  return new CondenseInputError(code, `${where}: cannot be serialized as JSON (${cause.message})`, {
    messageIndex,
    field,
    cause,
  });
}

// JSON.stringify(value), as the reference calls it on one message part.
function stringifyPart(value, messageIndex, field) {
  try {
    return JSON.stringify(value);
  } catch (cause) {
    throw serializationError(cause, messageIndex, field);
  }
}

// `JSON.stringify(messages).length`: SPEC §4's size. On failure the error
// names the first message that cannot be serialized on its own.
function sizeOf(messages) {
  try {
    return JSON.stringify(messages).length;
  } catch (cause) {
    const at = messages.findIndex((msg) => {
      try {
        JSON.stringify(msg);
        return false;
      } catch {
        return true;
      }
    });
    throw serializationError(cause, at < 0 ? undefined : at, at < 0 ? 'messages' : undefined);
  }
}

module.exports = {
  CondenseInputError,
  messageError,
  stateError,
  configError,
  argumentError,
  assertMessageArray,
  stringifyPart,
  serializationError,
  sizeOf,
};
