'use strict';

// The pure-JavaScript pruner for pi-condense 2.4.3 (SPEC.md), as the rest of
// the package imports it: the fallback behind js/fallback.js and the oracle
// of the tests. The implementation lives in js/pure/ (v2.4.js; the 2.9.1
// dialect is js/pure/v2.9.js, and what both share is in rules.js, purge.js,
// state.js and errors.js); this file keeps the exports stable.

const codes = require('./codes.js');
const v24 = require('./pure/v2.4.js');
const { globToRegExp } = require('./pure/rules.js');

module.exports = {
  pruneMessages: v24.pruneMessages,
  pruneWithIndexer: v24.pruneWithIndexer,
  computeThinkingBoundary: v24.computeThinkingBoundary,
  createIndexer: v24.createIndexer,
  globToRegExp,
  // The code of the errors thrown where a message has a shape the reference
  // cannot process (others carry codes.NOT_ARRAY, INVALID_STATE, ...).
  ERR_CODE: codes.INVALID_MESSAGE,
};
