'use strict';
// Differential loading tests (SESSIONS.md part D): generated session files
// give exactly the messages pi's SessionManager.open + buildSessionContext
// give (minus system messages), and the state and frontier that
// pi-condense's reference ToolCallIndexer.reconstructFromSession rebuilds
// from the same branch, for both dialects; where pi or the reference
// throw, or pi would hang, loadSession throws a typed error naming the line.
// Runs under `node --test` and `bun test`.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');

const { loadSession, loadSessionAsync, backend } = require('..');
const { importPi, importReference, oracle, REFERENCE } = require('./helpers/pi-session.js');
const { generate, rng } = require('./helpers/session-gen.js');

const native = backend === 'native';
const referenceSkip = !fs.existsSync(REFERENCE) && '../shared/reference absent: states are not compared';
const SEEDS = Number(process.env.SESSFILE_SEEDS || 250);

function expectTyped(fn, what) {
  let error;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  assert.ok(error, `${what}: loadSession should throw`);
  assert.match(error.code, /^ERR_CONDENSE_(INVALID_SESSION|TOO_DEEP)$/, `${what}: ${error.message}`);
  return error;
}

function check(expected, text, options, what, counts) {
  const bytes = Buffer.from(text);
  const copy = Buffer.from(bytes);
  if (expected.openError || expected.cycle) {
    const e = expectTyped(() => loadSession(bytes, options), what);
    if (expected.cycle) assert.equal(typeof e.line, 'number', what);
    counts.refused++;
    return;
  }
  if (expected.contextError) {
    const e = expectTyped(() => loadSession(bytes, options), `${what} (${expected.contextError.message})`);
    assert.equal(typeof e.line, 'number', what);
    counts.contextErrors++;
    return;
  }
  for (const dialect of ['2.4.3', '2.9.1']) {
    const opts = { ...options, dialect };
    const oracleState = expected.states[dialect];
    if (oracleState && oracleState.error) {
      const e = expectTyped(() => loadSession(bytes, opts), `${what} ${dialect} (${oracleState.error.message})`);
      assert.equal(typeof e.line, 'number', what);
      counts.stateErrors++;
      continue;
    }
    if (oracleState === undefined) {
      // Without ../shared/reference nothing says whether pi-condense would
      // rebuild a state from these entries: a typed error naming the line is
      // all that can be checked when the loader refuses them.
      let got;
      try {
        got = loadSession(bytes, opts);
      } catch (e) {
        assert.equal(e.code, 'ERR_CONDENSE_INVALID_SESSION', `${what} ${dialect}: ${e.message}`);
        assert.equal(typeof e.line, 'number', what);
        assert.match(e.message, /pi-condense/, what);
        counts.unverified++;
        continue;
      }
      assert.deepStrictEqual(got.messages, expected.messages, `${what}: messages`);
      continue;
    }
    const got = loadSession(bytes, opts);
    assert.deepStrictEqual(got.messages, expected.messages, `${what}: messages`);
    if (oracleState) {
      assert.deepStrictEqual(got.state, oracleState.state, `${what} ${dialect}: state`);
      assert.deepStrictEqual(got.frontier, oracleState.frontier, `${what} ${dialect}: frontier`);
      counts.states++;
    }
  }
  assert.deepStrictEqual(bytes, copy, `${what}: the caller's buffer changed`);
  counts.loaded++;
}

test('generated sessions load as pi and the reference indexer read them', { skip: !native && 'native binding absent' }, async (t) => {
  const pi = await importPi();
  const reference = await importReference();
  const counts = { loaded: 0, refused: 0, contextErrors: 0, stateErrors: 0, unverified: 0, states: 0, leaves: 0 };
  for (let seed = 1; seed <= SEEDS; seed++) {
    const { text, ids } = generate(seed);
    const expected = await oracle(pi, reference, text);
    check(expected, text, {}, `seed ${seed}`, counts);
    if (expected.entryIds && ids.length) {
      const leafId = rng(seed * 7 + 1).pick(ids);
      const atLeaf = await oracle(pi, reference, text, leafId);
      check(atLeaf, text, { leafId }, `seed ${seed} leaf ${leafId}`, counts);
      counts.leaves++;
    }
  }
  // The generator must reach every outcome, or the test proves less than it says.
  assert.ok(counts.loaded > SEEDS, JSON.stringify(counts));
  assert.ok(counts.contextErrors > 0 && counts.refused > 0, JSON.stringify(counts));
  // State errors are told apart from other refusals only with the reference.
  if (reference) assert.ok(counts.stateErrors > 0 && counts.states > SEEDS, JSON.stringify(counts));
  else assert.ok(counts.unverified > 0, JSON.stringify(counts));
  t.diagnostic?.(JSON.stringify(counts));
});

test('version 1 and 2 files migrate as pi migrates them', { skip: !native && 'native binding absent' }, async () => {
  const pi = await importPi();
  const reference = await importReference();
  const counts = { loaded: 0, refused: 0, contextErrors: 0, stateErrors: 0, unverified: 0, states: 0 };
  for (let seed = 1; seed <= 60; seed++) {
    for (const version of [1, 2]) {
      const { text } = generate(seed * 31 + version, { version });
      check(await oracle(pi, reference, text), text, {}, `v${version} seed ${seed}`, counts);
    }
  }
  assert.ok(counts.loaded > 60, JSON.stringify(counts));
});

test('the state and frontier equal the reference on its own entries', { skip: (!native && 'native binding absent') || referenceSkip }, async () => {
  const pi = await importPi();
  const reference = await importReference();
  const text = fs.readFileSync(require.resolve('./fixtures/sessionfile/flushes.jsonl'), 'utf8');
  const expected = await oracle(pi, reference, text);
  const counts = { loaded: 0, refused: 0, contextErrors: 0, stateErrors: 0, unverified: 0, states: 0 };
  check(expected, text, {}, 'flushes.jsonl', counts);
  assert.equal(counts.states, 2);
  // Hand-checked facts of the fixture, so the test cannot pass on two empty states.
  const got = loadSession(Buffer.from(text));
  assert.deepStrictEqual(Object.keys(got.state.records).sort(), ['c1', 'c2', 'c3']);
  assert.deepStrictEqual(got.state.dedupAliases, { c3: 'c1' });
  assert.deepStrictEqual(got.state.shortRefs, { c1: 't1', c2: 't2', c3: 't1' });
  assert.equal(got.frontier.thinkingStripBoundaryTimestamp, 1704067205000);
  const v291 = loadSession(Buffer.from(text), { dialect: '2.9.1' });
  assert.deepStrictEqual(Object.keys(v291.state.records).sort(), ['c1', 'c2@1704067203000', 'c3']);
  assert.equal('thinkingStripBoundaryTimestamp' in v291.frontier, false);
});

test('loadSessionAsync gives what loadSession gives, from a path and from bytes', { skip: !native && 'native binding absent' }, async () => {
  const file = require.resolve('./fixtures/sessionfile/flushes.jsonl');
  const sync = loadSession(file, { dialect: '2.9.1' });
  assert.deepStrictEqual(await loadSessionAsync(file, { dialect: '2.9.1' }), sync);
  assert.deepStrictEqual(await loadSessionAsync(fs.readFileSync(file), { dialect: '2.9.1' }), sync);
  assert.deepStrictEqual(loadSession(new URL(`file://${file}`), { dialect: '2.9.1' }), sync);
  await assert.rejects(loadSessionAsync(`${file}.missing`), (e) => e.code === 'ERR_CONDENSE_IO' && e.message.includes('.missing'));
  await assert.rejects(loadSessionAsync(Buffer.from('{"type":"x"}\n')), (e) => e.code === 'ERR_CONDENSE_INVALID_SESSION' && e.line === 1);
});

test('arguments are checked', { skip: !native && 'native binding absent' }, () => {
  const bytes = fs.readFileSync(require.resolve('./fixtures/sessionfile/flushes.jsonl'));
  assert.throws(() => loadSession(42), { code: 'ERR_CONDENSE_INVALID_ARGUMENT' });
  assert.throws(() => loadSession(bytes, { dialect: '3.0' }), { code: 'ERR_CONDENSE_INVALID_ARGUMENT' });
  assert.throws(() => loadSession(bytes, { leafId: 5 }), { code: 'ERR_CONDENSE_INVALID_ARGUMENT' });
  assert.throws(() => loadSession(bytes, { leafId: 'nope' }), (e) => e.code === 'ERR_CONDENSE_INVALID_ARGUMENT' && /nope/.test(e.message));
  // A zero-byte file is an empty session, as pi makes it one.
  assert.deepStrictEqual(loadSession(Buffer.alloc(0)), {
    messages: [],
    state: { records: {}, dedupAliases: {}, shortRefs: {}, refAliases: {}, chains: [], summaryBodies: [] },
    frontier: null,
  });
});

test('the bundled sample is what scripts/make-sample.js writes, and loads as pi and the reference read it', { skip: !native && 'native binding absent' }, async () => {
  const path = require('node:path');
  const os = require('node:os');
  const { execFileSync } = require('node:child_process');
  const sample = path.join(__dirname, '..', 'sample', 'session.jsonl');
  const again = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sample-')), 'session.jsonl');
  execFileSync(process.execPath, [path.join(__dirname, '..', 'scripts', 'make-sample.js'), again]);
  assert.ok(fs.readFileSync(again).equals(fs.readFileSync(sample)), 'make-sample.js is not deterministic or sample/session.jsonl is stale');
  const text = fs.readFileSync(sample, 'utf8');
  const pi = await importPi();
  const reference = await importReference();
  const counts = { loaded: 0, refused: 0, contextErrors: 0, stateErrors: 0, unverified: 0, states: 0 };
  check(await oracle(pi, reference, text), text, {}, 'sample', counts);
  assert.equal(counts.loaded, 1);
  // What the sample promises to hold.
  const types = text.trim().split('\n').map((l) => JSON.parse(l)).map((e) => (e.customType ? `${e.type}:${e.customType}` : e.type));
  for (const t of ['compaction', 'branch_summary', 'custom:context-prune-chain', 'custom:context-prune-dedup-alias', 'custom_message:context-prune-summary', 'custom:context-prune-frontier']) {
    assert.ok(types.includes(t), t);
  }
  const got = loadSession(sample);
  assert.ok(got.messages.length > 100);
  assert.ok(Object.values(got.state.records).some((r) => r.spillPath), 'an eager spill');
  assert.equal(typeof got.frontier.thinkingStripBoundaryTimestamp, 'number');
});

test('without the native binding loading is a typed error, not a crash', async () => {
  const { makeSessionFileApi } = require('../js/sessionfile.js');
  const api = makeSessionFileApi({}, { argumentError: (m) => new TypeError(m) });
  assert.throws(() => api.loadSession(Buffer.alloc(0)), { code: 'ERR_CONDENSE_UNSUPPORTED' });
  await assert.rejects(api.loadSessionAsync(Buffer.alloc(0)), { code: 'ERR_CONDENSE_UNSUPPORTED' });
});
