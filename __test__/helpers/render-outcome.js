'use strict';

// What the tests that hold one render against another share: `outcome`
// runs a render with a diagnostics sink that records every report, and
// keeps its result or its error; `assertSameRender` holds one outcome to
// another (pruned, both sizes, the messages' JSON text, the reports).
// Used by differential-reference, dropin-reference and change-detection.

const assert = require('node:assert/strict');

/** `fn(sink)`'s result or error, with what it reported to `sink`. */
function outcome(fn) {
  const reports = [];
  const sink = { report: (kind, key, detail) => reports.push({ kind, key, detail }) };
  try {
    return { value: fn(sink), reports };
  } catch (error) {
    return { error, reports };
  }
}

/**
 * Asserts that `got` answers as `want` does. `wanted` and `tested` name the
 * two in failure messages; `exactCodes` asks for the same error code (both
 * are this project's), otherwise any ERR_CONDENSE_ code will do;
 * `fullResult` also compares the result's own diagnostics and stats where
 * `got` has them. Returns 'error', 'pruned' or 'unchanged'.
 */
function assertSameRender(got, want, label, options = {}) {
  const { wanted = 'the reference', tested = 'condense-native', exactCodes = false, fullResult = false } = options;
  if (want.error) {
    assert.ok(got.error, `${label}: ${wanted} throws (${want.error.message}), ${tested} answers`);
    if (exactCodes) assert.equal(got.error.code, want.error.code, `${label}: ${got.error.message}`);
    else assert.match(String(got.error.code), /^ERR_CONDENSE_/, `${label}: ${got.error.message}`);
    return 'error';
  }
  assert.ok(!got.error, `${label}: ${tested} throws ${got.error && got.error.stack}`);
  assert.equal(got.value.pruned, want.value.pruned, `${label}: pruned`);
  assert.equal(got.value.beforeChars, want.value.beforeChars, `${label}: beforeChars`);
  assert.equal(got.value.afterChars, want.value.afterChars, `${label}: afterChars`);
  assert.equal(JSON.stringify(got.value.messages), JSON.stringify(want.value.messages), `${label}: messages`);
  assert.deepStrictEqual(got.reports, want.reports, `${label}: diagnostics`);
  if (fullResult) {
    if (got.value.diagnostics) assert.deepStrictEqual(got.value.diagnostics, want.value.diagnostics, `${label}: diagnostics`);
    if (got.value.stats) assert.deepStrictEqual(got.value.stats, want.value.stats, `${label}: stats`);
  }
  return want.value.pruned ? 'pruned' : 'unchanged';
}

module.exports = { outcome, assertSameRender };
