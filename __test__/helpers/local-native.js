'use strict';
// The native binding as loader.js finds it in this checkout, with
// CONDENSE_NATIVE_FORCE_FALLBACK lifted for the load (and put back after),
// or null where no build loads here. For the tests that need the real
// binary (loader.test.js, portability.test.js).

const path = require('node:path');

const LOADER = path.join(__dirname, '..', '..', 'loader.js');

function localNative() {
  const saved = process.env.CONDENSE_NATIVE_FORCE_FALLBACK;
  delete process.env.CONDENSE_NATIVE_FORCE_FALLBACK;
  try {
    const loaded = require(LOADER);
    return loaded.backend === 'native' ? loaded : null;
  } finally {
    if (saved !== undefined) process.env.CONDENSE_NATIVE_FORCE_FALLBACK = saved;
  }
}

module.exports = { localNative };
