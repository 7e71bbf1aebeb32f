'use strict';

// No export without an importer (issue 43): scripts/exports.js reads every
// module of js/, cli/, pi/ and loader.js, and finds none whose export no
// other file that loads it names. `node scripts/exports.js` lists them.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { unimported } = require('../scripts/exports.js');

test('every export of js/, cli/, pi/ and loader.js has an importer', () => {
  const { missing, scanned, exported } = unimported();
  assert.ok(scanned > 40 && exported > 100, `read ${scanned} modules, ${exported} exports`);
  assert.deepEqual(
    missing.map(({ module: m, name }) => `${m}: ${name}`),
    [],
    'exported, yet no other file that loads the module names it: remove the export (or the code)',
  );
});
