'use strict';

// The `code` of every error condense-native throws, spelled once for all of
// its JavaScript. The native side spells the same codes in src/error.rs;
// __test__/codes.test.js checks that the two lists agree, so a code added on
// one side and not the other fails the tests.

const codes = Object.freeze({
  // Messages given as bytes or text that are not UTF-8 JSON; also state or
  // config text that does not parse.
  INVALID_JSON: 'ERR_CONDENSE_INVALID_JSON',
  // The messages value parsed (or was passed) but is not an array.
  NOT_ARRAY: 'ERR_CONDENSE_NOT_ARRAY',
  // A message field of a type the reference cannot process, at a place where
  // the reference itself throws (a null message, assistant content that is
  // not an array, a null content block, ...). Carries `messageIndex` and
  // `field` where they are known.
  INVALID_MESSAGE: 'ERR_CONDENSE_INVALID_MESSAGE',
  // A message nested deeper than the parser (native) or the engine's stack
  // (JSON.stringify in the pure-JS pruner) can follow.
  TOO_DEEP: 'ERR_CONDENSE_TOO_DEEP',
  // The state (what the host's indexer knows) has a field the render cannot
  // use where the reference would throw: a chain entry's toolRefs that is
  // not an array, a summary that is not a string, a null summary body, ...
  INVALID_STATE: 'ERR_CONDENSE_INVALID_STATE',
  // The config has a field the render cannot use (protection lists that are
  // missing or not lists), or a key the chosen dialect does not know.
  INVALID_CONFIG: 'ERR_CONDENSE_INVALID_CONFIG',
  // An argument of the wrong kind: messages not in a Buffer, a boundary
  // that is not a number, an indexer without a method the render calls, a
  // diagnostics sink without `report`.
  INVALID_ARGUMENT: 'ERR_CONDENSE_INVALID_ARGUMENT',
  // A pi session file pi would refuse, or one with a line the loader cannot
  // use (a parent cycle, a message entry without its message, ...). Carries
  // `line`.
  INVALID_SESSION: 'ERR_CONDENSE_INVALID_SESSION',
  // A PruneSession used after close(). Thrown by the JavaScript layer only
  // (js/session.js), so src/error.rs has no spelling of it.
  SESSION_CLOSED: 'ERR_CONDENSE_SESSION_CLOSED',
});

module.exports = codes;
