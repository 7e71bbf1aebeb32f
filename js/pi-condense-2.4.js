'use strict';

// condense-native/pi-condense-2.4: a drop-in for pi-condense 2.4.3's render
// path. Where pi-condense imports `pruneMessages` from its pruner, import it
// from here instead: same signature, same result, kept work between renders
// per indexer (js/dropin.js).

const { dropIns, sizeMessages } = require('./dropin.js');

module.exports = {
  pruneMessages: dropIns.pruneMessages24,
  sizeMessages,
  /** Forgets what was kept for `indexer`; its next render re-reads everything. */
  invalidate: dropIns.invalidate,
};
