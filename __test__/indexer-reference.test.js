'use strict';

// The oracles' state-backed indexers (js/pure/state.js) against
// pi-condense's own ToolCallIndexer (../shared/reference), filled from the
// same state through its methods (helpers/indexer.js), for every vector of
// both dialects:
// - every call the oracle's render makes on its indexer (which method, which
//   argument) gets the same answer from the real indexer, or both throw;
// - the reference's own pruneMessages, given the filled real indexer, gives
//   the vector's expected result (sizes, messages, diagnostics, or a throw),
//   so the fill holds the state the vectors were recorded with.
// Skips with a message when ../shared is absent.

const { describe, test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const v24 = require('../js/pure/v2.4.js');
const v29 = require('../js/pure/v2.9.js');
const { loadVectors } = require('./helpers/vectors.js');
const { loadReference, fillIndexer, referenceArgs, SKIP_MESSAGE } = require('./helpers/indexer.js');

const DIALECTS = {
  '2.4.3': {
    oracle: v24,
    file: path.join(__dirname, 'fixtures', 'vectors.json'),
    // The oracle's own call, with the release's signature.
    run: (c, indexer) =>
      v24.pruneWithIndexer(
        c.messages,
        indexer,
        c.config.chainCompression,
        c.config.errorPurge,
        c.config.thinkingStrip,
        c.config.protection,
        c.config.recoveryGraceTurns,
        c.thinkingBoundaryTimestamp,
      ),
  },
  '2.9.1': {
    oracle: v29,
    file: path.join(__dirname, 'fixtures', 'vectors-2.9.json'),
    run: (c, indexer) =>
      v29.pruneWithIndexer(
        c.messages,
        indexer,
        c.config.chainCompression,
        c.config.errorPurge,
        c.config.protection,
        c.config.recoveryGraceTurns,
      ),
  },
};

const REFERENCE_DIR = path.join(__dirname, '..', '..', 'shared', 'reference');
const referencePresent = fs.existsSync(REFERENCE_DIR);

// The fields of a record the render reads. 2.4.3's addBatch copies a record,
// so there the answer is compared by these; 2.9's indexRecord keeps it.
const RECORD_FIELDS = ['toolName', 'args', 'spillPath', 'spillBytes', 'resultPreview'];

// Wraps an indexer so that every call and its answer (or error) is kept.
function recording(indexer, methods) {
  const calls = [];
  const proxy = {};
  for (const name of methods) {
    proxy[name] = (arg) => {
      try {
        const result = indexer[name](arg);
        calls.push({ name, arg, result });
        return result;
      } catch (error) {
        calls.push({ name, arg, error });
        throw error;
      }
    };
  }
  return { proxy, calls };
}

function assertSameAnswer(dialect, call, real, label) {
  let got;
  try {
    got = { result: real[call.name](call.arg) };
  } catch (error) {
    got = { error };
  }
  const where = `${label}: ${call.name}(${String(JSON.stringify(call.arg)).slice(0, 80)})`;
  if (call.error) {
    assert.ok(got.error, `${where}: the oracle's indexer throws (${call.error.message}), the real one answers`);
    return;
  }
  assert.ok(!got.error, `${where}: the real indexer throws ${got.error && got.error.message}`);
  const want = call.result;
  if (call.name === 'getChainEntries') {
    assert.equal(got.result.length, want.length, where);
    want.forEach((entry, i) => assert.equal(got.result[i], entry, `${where}: entry ${i}`));
  } else if (call.name === 'getRecord' && dialect === '2.4.3' && want !== null && typeof want === 'object') {
    assert.ok(got.result !== null && typeof got.result === 'object', `${where}: no record`);
    for (const field of RECORD_FIELDS) assert.equal(got.result[field], want[field], `${where}: ${field}`);
  } else {
    assert.equal(got.result, want, where);
  }
}

function groups(cases) {
  const byGroup = new Map();
  for (const c of cases) {
    if (c.group === 'boundary') continue;
    if (!byGroup.has(c.group)) byGroup.set(c.group, []);
    byGroup.get(c.group).push(c);
  }
  return byGroup;
}

for (const [dialect, { oracle, file, run }] of Object.entries(DIALECTS)) {
  const cases = loadVectors(file);
  const counts = { calls: {}, direct: 0 };

  describe(`${dialect}: the real ToolCallIndexer filled from each vector's state`, () => {
    for (const [group, members] of groups(cases)) {
      describe(group, () => {
        for (const c of members) {
          test(c.name, { skip: referencePresent ? false : SKIP_MESSAGE }, async () => {
            const reference = await loadReference(dialect);
            const { indexer: real, direct } = fillIndexer(reference, dialect, c.state);
            counts.direct += direct.length > 0 ? 1 : 0;

            // 1. Every call the oracle's render makes, answered alike.
            const { proxy, calls } = recording(oracle.createIndexer(c.state), oracle.INDEXER_METHODS);
            try {
              run(c, proxy);
            } catch {
              // A throwing case still made its calls up to the throw.
            }
            for (const call of calls) {
              assertSameAnswer(dialect, call, real, c.name);
              counts.calls[call.name] = (counts.calls[call.name] ?? 0) + 1;
            }

            // 2. The reference's own render on the filled indexer.
            const reports = [];
            const sink = { report: (kind, key, detail) => reports.push({ kind, key, detail }) };
            let result;
            try {
              result = { value: reference.pruneMessages(c.messages, ...referenceArgs(dialect, c, real, sink)) };
            } catch (error) {
              result = { error };
            }
            const expected = c.expected;
            if (expected.throws !== undefined) {
              assert.ok(result.error, 'the reference answers where the vector records a throw');
              return;
            }
            assert.ok(!result.error, `the reference throws: ${result.error && result.error.message}`);
            assert.equal(result.value.pruned, expected.pruned, 'pruned');
            assert.equal(result.value.beforeChars, expected.beforeChars, 'beforeChars');
            assert.equal(result.value.afterChars, expected.afterChars, 'afterChars');
            assert.equal(JSON.stringify(result.value.messages), JSON.stringify(expected.messages), 'messages');
            if (dialect === '2.9.1') assert.deepStrictEqual(reports, expected.diagnostics, 'diagnostics');
          });
        }
      });
    }

    test('the renders called every indexer method', { skip: referencePresent ? false : SKIP_MESSAGE }, () => {
      // Runs after the cases above: each method was compared many times.
      for (const name of oracle.INDEXER_METHODS) {
        assert.ok((counts.calls[name] ?? 0) >= 20, `${name}: ${JSON.stringify(counts.calls)}`);
      }
    });
  });
}
