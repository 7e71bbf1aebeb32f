'use strict';

// Every conformance vector through the native `prune` (SPEC sections 2-8).
// `*-raw` cases get their exact bytes; the others get JSON.stringify's text.
// Outside the hostile group the result must equal the reference's; in it a
// typed error is also acceptable, and where the reference threw, required.

const { test, describe } = require('node:test');
const assert = require('node:assert/strict');
const { prune, computeThinkingBoundary } = require('..');
const { loadVectors } = require('./helpers/vectors');

const vectors = loadVectors();

function runCase(c, bytes) {
  const before = Buffer.from(bytes);
  const copy = Buffer.from(before);
  let result;
  let error;
  try {
    result = prune(before, { state: c.state, config: c.config, thinkingStripBoundaryTimestamp: c.thinkingBoundaryTimestamp });
  } catch (e) {
    error = e;
  }
  assert.ok(before.equals(copy), 'caller buffer modified');
  return { result, error };
}

function checkResult(c, result) {
  const exp = c.expected;
  assert.equal(result.pruned, exp.pruned, 'pruned');
  assert.equal(result.beforeChars, exp.beforeChars, 'beforeChars');
  assert.equal(result.afterChars, exp.afterChars, 'afterChars');
  if (exp.pruned) {
    assert.ok(Buffer.isBuffer(result.messages), 'messages is a Buffer');
    const out = JSON.stringify(JSON.parse(result.messages.toString('utf8')));
    assert.equal(out, JSON.stringify(exp.messages), 'messages');
    assert.equal(result.afterChars, out.length, 'afterChars equals the output length');
  } else {
    assert.equal(result.messages, null, 'no output on a no-op');
  }
}

const groups = [...new Set(vectors.map((c) => c.group))];
const tally = { exact: 0, typedError: 0 };

for (const group of groups) {
  describe(`conformance: ${group}`, () => {
    for (const c of vectors.filter((v) => v.group === group)) {
      test(c.name, () => {
        if (group === 'boundary') {
          const got = computeThinkingBoundary(c.assistantTimestamps, c.keepLastTurns, c.prev ?? undefined);
          assert.equal(got ?? null, c.expected.value);
          return;
        }
        const inputs = [Buffer.from(JSON.stringify(c.messages) ?? 'null')];
        if (c.name.endsWith('-raw')) inputs.push(Buffer.from(c.rawMessages));
        for (const bytes of inputs) {
          const { result, error } = runCase(c, bytes);
          if (c.expected.throws !== undefined) {
            assert.ok(error, `expected a typed error (reference: ${c.expected.throws})`);
            assert.match(error.code, /^ERR_CONDENSE_/);
            continue;
          }
          if (error) {
            assert.equal(group, 'hostile', `unexpected error: ${error.code} ${error.message}`);
            assert.match(error.code, /^ERR_CONDENSE_/);
            assert.ok(error.message.length > 0);
            tally.typedError++;
            continue;
          }
          checkResult(c, result);
          tally.exact++;
        }
      });
    }
  });
}

test('conformance summary', () => {
  // Printed for the closing note; most hostile cases must be exact too.
  console.log(`conformance: ${tally.exact} exact results, ${tally.typedError} typed errors on hostile inputs`);
  assert.ok(tally.exact >= 370);
});
