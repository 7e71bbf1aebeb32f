'use strict';

// A drop-in refuses nothing pi-condense accepts (issue 42): an indexer method
// is required only where the release's render calls it for the input at
// hand. For every public vector of both releases, the reference and the
// drop-in render with indexers reduced to each subset of the methods the
// reference calls on that vector, and to the full list less one method
// (helpers/indexer-subsets.js): the same render, or both fail, and where the
// reference fails calling a method the indexer lacks, the drop-in's error is
// ERR_CONDENSE_INVALID_ARGUMENT naming it. Both backends: the native one in
// this process, the pure-JS fallback in a child with it forced. A call that
// throws leaves the kept conversation as it was, and the 2.4.3 boundary
// argument is taken as the release takes it. Skips without ../shared.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const { backend } = require('..');
const { loadReference, fillIndexer, referenceArgs, SKIP_MESSAGE } = require('./helpers/indexer.js');
const { loadVectors } = require('./helpers/vectors.js');
const { runSubsets, reducedIndexer, compare, outcome } = require('./helpers/indexer-subsets.js');

const FIXTURES = path.join(__dirname, 'fixtures');
const VECTORS = { '2.4.3': path.join(FIXTURES, 'vectors.json'), '2.9.1': path.join(FIXTURES, 'vectors-2.9.json') };
const METHODS = { '2.4.3': require('../js/pure/v2.4.js').INDEXER_METHODS, '2.9.1': require('../js/pure/v2.9.js').INDEXER_METHODS };
const DROP_INS = { '2.4.3': require('../js/pi-condense-2.4.js'), '2.9.1': require('../js/pi-condense-2.9.js') };

const referencePresent = require('node:fs').existsSync(path.join(__dirname, '..', '..', 'shared', 'reference'));
const skip = referencePresent ? false : SKIP_MESSAGE;

// What the counts must show besides agreement: the renders exercised every
// method and many failures.
function checkCounts(dialect, counts, where) {
  assert.deepEqual(counts.differences, [], `${dialect} ${where}`);
  assert.ok(counts.renders > 5000, `${dialect} ${where}: ${counts.renders} renders`);
  assert.ok(counts.missingNamed > 1000, `${dialect} ${where}: ${counts.missingNamed} reference failures on a missing method`);
  for (const name of METHODS[dialect]) {
    const vectors = Object.values(counts.touched[name]).reduce((a, b) => a + b, 0);
    assert.ok(vectors >= 10, `${dialect}: the reference calls ${name} on ${vectors} vectors`);
  }
}

for (const dialect of ['2.4.3', '2.9.1']) {
  test(`${dialect}: the native drop-in asks the indexer only what the reference asks`, { skip: skip || (backend !== 'native' && 'the native binding is not loaded') }, async (t) => {
    const counts = await runSubsets(dialect);
    checkCounts(dialect, counts, 'native');
    t.diagnostic(`${counts.renders} renders, ${counts.bothFail} failing in both, ${counts.missingNamed} naming a missing method`);
    t.diagnostic(`methods the reference calls, by vector group: ${JSON.stringify(counts.touched)}`);
  });

  test(`${dialect}: the pure-JS fallback asks the indexer only what the reference asks`, { skip }, () => {
    const child = spawnSync(process.execPath, [path.join(__dirname, 'helpers', 'indexer-subsets.js'), dialect], {
      env: { ...process.env, CONDENSE_NATIVE_FORCE_FALLBACK: '1' },
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    });
    assert.equal(child.status, 0, child.stderr);
    checkCounts(dialect, JSON.parse(child.stdout), 'pure-JS fallback');
  });

  test(`${dialect}: a call that fails on a missing method leaves the kept conversation as it was`, { skip }, async () => {
    const reference = await loadReference(dialect);
    const dropIn = DROP_INS[dialect];
    const methods = METHODS[dialect];
    let checked = 0;
    for (const c of loadVectors(VECTORS[dialect])) {
      if (c.group === 'boundary' || c.expected.throws !== undefined) continue;
      const real = fillIndexer(reference, dialect, c.state).indexer;
      const touched = new Set();
      const render = (fn, indexer) => outcome((sink) => fn(structuredClone(c.messages), ...referenceArgs(dialect, c, indexer, sink)));
      const want = render(reference.pruneMessages, reducedIndexer(real, methods, touched));
      for (const name of touched) {
        // The same object throughout: complete, then without `name`, then
        // complete again; and one that starts without it.
        const indexer = reducedIndexer(real, methods);
        const method = indexer[name];
        assert.equal(compare(want, render(dropIn.pruneMessages, indexer)), null, `${c.name}: before`);
        delete indexer[name];
        const failed = render(dropIn.pruneMessages, indexer);
        assert.equal(failed.error?.code, 'ERR_CONDENSE_INVALID_ARGUMENT', `${c.name} without ${name}: ${failed.error?.message}`);
        assert.equal(failed.error.field, `indexer.${name}`);
        assert.match(failed.error.message, new RegExp(`indexer\\.${name} must be a function \\(pi-condense ${dialect.replaceAll('.', '\\.')}'s render calls it for this input; it has none\\)`));
        indexer[name] = method;
        assert.equal(compare(want, render(dropIn.pruneMessages, indexer)), null, `${c.name}: after the failed call without ${name}`);

        const late = reducedIndexer(real, methods.filter((m) => m !== name));
        assert.ok(render(dropIn.pruneMessages, late).error);
        late[name] = method;
        assert.equal(compare(want, render(dropIn.pruneMessages, late)), null, `${c.name}: ${name} added after a failed call`);
        checked++;
      }
    }
    assert.ok(checked > 500, `${checked} method removals checked`);
  });
}

test('2.4.3: a member that is not a function is named with what it is', () => {
  const c = loadVectors(VECTORS['2.4.3']).find((v) => v.group === 'stub' && v.expected.pruned === true);
  const pure = require('../js/pure.js');
  const inner = pure.createIndexer(c.state);
  const indexer = Object.fromEntries(METHODS['2.4.3'].map((m) => [m, (...a) => inner[m](...a)]));
  indexer.getRecord = 42;
  const messages = structuredClone(c.messages);
  const before = JSON.stringify(messages);
  assert.throws(() => DROP_INS['2.4.3'].pruneMessages(messages, indexer, undefined, undefined, undefined, undefined), {
    code: 'ERR_CONDENSE_INVALID_ARGUMENT',
    message: /indexer\.getRecord must be a function .*it is number\)$/,
  });
  assert.equal(JSON.stringify(messages), before, "the caller's array is unchanged");
  // No tool result at all: nothing is asked, not even of a null indexer.
  for (const none of [null, undefined, 'indexer']) {
    const r = DROP_INS['2.4.3'].pruneMessages([{ role: 'user', content: 'hi', timestamp: 1 }], none, undefined, undefined, undefined, undefined);
    assert.equal(r.pruned, false);
  }
  assert.throws(() => DROP_INS['2.9.1'].pruneMessages(structuredClone(c.messages), null, undefined, undefined, undefined), {
    code: 'ERR_CONDENSE_INVALID_ARGUMENT',
    message: /indexer\.isSummarized must be a function .*the indexer is null\)$/,
  });
});

// The boundaries a host may pass pi-condense 2.4.3's render, built from the
// case's own assistant timestamps where one matters.
function boundariesFor(messages) {
  const stamps = messages.filter((m) => m?.role === 'assistant' && typeof m.timestamp === 'number').map((m) => m.timestamp);
  const mid = stamps.length > 0 ? stamps[Math.floor(stamps.length / 2)] : 1;
  return [
    ['a word', 'yesterday'],
    ['a numeric string', String(mid)],
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['-Infinity', Number.NEGATIVE_INFINITY],
    ['true', true],
    ['false', false],
    ['an empty object', {}],
    ['an array of one number', [mid]],
    ['an empty array', []],
    ['a Date', new Date(mid)],
    ['a BigInt', BigInt(Math.trunc(mid))],
    ['an object with valueOf', { valueOf: () => mid }],
    ['an object whose valueOf throws', { valueOf: () => { throw new Error('no value'); } }],
    ['a Symbol', Symbol('boundary')],
  ];
}

test("2.4.3: the boundary argument is taken as the release takes it, on both backends", { skip }, async () => {
  const reference = await loadReference('2.4.3');
  const pure = require('../js/pure/v2.4.js');
  const cases = loadVectors(VECTORS['2.4.3']).filter((c) => c.group !== 'boundary' && c.config?.thinkingStrip?.enabled && c.expected.throws === undefined);
  assert.ok(cases.length >= 20, `${cases.length} cases with the thinking strip on`);
  const seen = { renders: 0, stripped: 0, throws: 0 };
  for (const c of cases) {
    const real = fillIndexer(reference, '2.4.3', c.state).indexer;
    for (const [label, boundary] of boundariesFor(c.messages)) {
      const args = (indexer) => {
        const a = referenceArgs('2.4.3', c, indexer);
        a[a.length - 1] = boundary;
        return a;
      };
      const want = outcome(() => reference.pruneMessages(structuredClone(c.messages), ...args(real)));
      for (const [where, fn] of [
        ['drop-in', DROP_INS['2.4.3'].pruneMessages],
        ['oracle', pure.pruneWithIndexer],
      ]) {
        const got = outcome(() => fn(structuredClone(c.messages), ...args(real)));
        assert.equal(compare(want, got), null, `${c.name}, ${label}, ${where}`);
        if (want.error) assert.equal(got.error.code, 'ERR_CONDENSE_INVALID_ARGUMENT', `${c.name}, ${label}, ${where}: ${got.error.message}`);
      }
      seen.renders++;
      if (want.error) seen.throws++;
      else if (want.value.messages.some((m, i) => JSON.stringify(m) !== JSON.stringify(c.messages[i]))) seen.stripped++;
    }
  }
  // The cases reach both sides: boundaries that strip, and ones that throw.
  assert.ok(seen.stripped > 20 && seen.throws > 20, JSON.stringify(seen));
});
