'use strict';

// The array APIs (pruneMessages, PruneSession) against the reference
// vectors and the pure-JS implementation: same results, caller's objects
// kept, caller's array never modified, sessions over growing and re-synced
// conversations.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { pruneMessages, PruneSession } = require('..');
const pure = require('../js/pure.js');
const { loadVectors } = require('./helpers/vectors');

const vectors = loadVectors().filter((c) => c.group !== 'boundary');
const sample = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'sample', 'session.json'), 'utf8'));

function optsOf(c) {
  return { state: c.state, config: c.config, thinkingStripBoundaryTimestamp: c.thinkingBoundaryTimestamp ?? c.thinkingStripBoundaryTimestamp };
}

function checkAgainst(expected, got, input, label) {
  assert.equal(got.pruned, expected.pruned, `${label}: pruned`);
  assert.equal(got.beforeChars, expected.beforeChars, `${label}: beforeChars`);
  assert.equal(got.afterChars, expected.afterChars, `${label}: afterChars`);
  assert.equal(JSON.stringify(got.messages), JSON.stringify(expected.messages), `${label}: messages`);
  if (!got.pruned) assert.equal(got.messages, input, `${label}: a no-op returns the caller's array`);
}

// Every output message that JSON-equals an input message at the same place
// in the kept order must be the caller's own object when it is untouched.
function checkIdentity(input, output, label) {
  const inputs = new Set(input);
  const byJson = new Map(input.map((m) => [JSON.stringify(m), m]));
  for (const m of output) {
    if (inputs.has(m)) continue;
    const twin = byJson.get(JSON.stringify(m));
    assert.ok(twin === undefined || typeof twin !== 'object' || twin === null, `${label}: an untouched message was copied`);
  }
}

test('pruneMessages reproduces every vector, keeping untouched messages by reference', () => {
  for (const c of vectors) {
    if (!Array.isArray(c.messages)) {
      assert.throws(() => pruneMessages(c.messages, optsOf(c)), { code: 'ERR_CONDENSE_NOT_ARRAY' });
      continue;
    }
    const input = structuredClone(c.messages);
    const snapshot = JSON.stringify(input);
    let got;
    try {
      got = pruneMessages(input, optsOf(c));
    } catch (e) {
      assert.ok(c.expected.throws !== undefined || c.group === 'hostile', `${c.name}: ${e.message}`);
      assert.match(e.code, /^ERR_CONDENSE_/);
      continue;
    }
    assert.equal(c.expected.throws, undefined, `${c.name} should throw`);
    checkAgainst(c.expected, got, input, c.name);
    assert.equal(JSON.stringify(input), snapshot, `${c.name}: caller's array modified`);
    checkIdentity(input, got.messages, c.name);
  }
});

test('a fresh PruneSession renders every vector like the reference', () => {
  for (const c of vectors) {
    if (!Array.isArray(c.messages) || c.expected.throws !== undefined) continue;
    const session = new PruneSession(optsOf(c));
    const input = structuredClone(c.messages);
    const got = session.render(input);
    checkAgainst(c.expected, got, input, c.name);
    // A second render of a fresh clone reuses the kept log and must agree.
    const again = session.render(structuredClone(c.messages));
    assert.equal(JSON.stringify(again.messages), JSON.stringify(c.expected.messages), `${c.name}: second render`);
    assert.equal(again.afterChars, c.expected.afterChars, `${c.name}: second render afterChars`);
  }
});

test('a session over a growing conversation with re-syncs equals pruneMessages at every step', () => {
  const { messages, state, config, thinkingBoundaryTimestamp } = sample;
  const opts = { state, config, thinkingStripBoundaryTimestamp: thinkingBoundaryTimestamp };
  const session = new PruneSession(opts);
  let steps = 0;
  for (let n = 0; n <= messages.length; n += 5) {
    let input = structuredClone(messages.slice(0, n));
    if (n % 35 === 0 && n > 20) {
      // Another extension edits an older message: the session must re-sync.
      input[n - 20] = { ...input[n - 20], injected: 'x'.repeat(n) };
    }
    if (n % 50 === 0 && n > 60) input = input.slice(0, n - 30); // a branch switch: shorter array
    const got = session.render(input);
    const expected = pure.pruneMessages(input, opts);
    checkAgainst(expected, got, input, `n=${n}`);
    assert.deepEqual(got.frontier, expected.frontier, `n=${n}: frontier`);
    steps++;
  }
  assert.ok(steps > 60);
});

test('setState and flush: the boundary advances and renders follow it', () => {
  const { messages, state, config } = sample;
  const session = new PruneSession({ config, state: {} });
  const first = session.render(structuredClone(messages));
  assert.equal(first.frontier.thinkingStripBoundaryTimestamp, null);
  session.setState(state);
  const withState = session.render(structuredClone(messages));
  checkAgainst(pure.pruneMessages(messages, { state, config }), withState, messages, 'after setState');
  const closing = { role: 'assistant', content: [{ type: 'text', text: 'done' }], timestamp: messages.at(-1).timestamp + 1000 };
  const snap = session.flush(closing);
  const stamps = [...messages, closing].filter((m) => m.role === 'assistant').map((m) => m.timestamp);
  const expectedBoundary = pure.computeThinkingBoundary(stamps, config.thinkingStrip.keepLastTurns);
  assert.deepEqual(snap, { thinkingStripBoundaryTimestamp: expectedBoundary });
  const after = session.render(structuredClone(messages));
  const expected = pure.pruneMessages(messages, { state, config, thinkingStripBoundaryTimestamp: expectedBoundary });
  checkAgainst(expected, after, messages, 'after flush');
  assert.equal(after.frontier.thinkingStripBoundaryTimestamp, expectedBoundary);
  // A flush never moves the boundary back.
  assert.equal(session.flush().thinkingStripBoundaryTimestamp, expectedBoundary);
});

test('session errors are typed, and a failed sync leaves the session usable', () => {
  const session = new PruneSession({ config: sample.config, state: sample.state });
  assert.throws(() => session.render('nope'), { code: 'ERR_CONDENSE_NOT_ARRAY', name: 'TypeError', field: 'messages' });
  const cyclic = { role: 'user', content: 'x', timestamp: 1 };
  cyclic.self = cyclic;
  assert.throws(() => session.render([cyclic]), { code: 'ERR_CONDENSE_INVALID_MESSAGE', messageIndex: 0 });
  assert.throws(() => session.render([{ role: 'user' }, null]), { code: 'ERR_CONDENSE_INVALID_MESSAGE' });
  const input = structuredClone(sample.messages);
  const expected = pure.pruneMessages(input, { state: sample.state, config: sample.config });
  checkAgainst(expected, session.render(input), input, 'after errors');
});

test('close() ends a session: later calls throw a typed error, closing again is a no-op', () => {
  const opts = { config: sample.config, state: sample.state, thinkingStripBoundaryTimestamp: sample.thinkingBoundaryTimestamp };
  const input = structuredClone(sample.messages);
  const expected = pure.pruneMessages(input, opts);
  const session = new PruneSession(opts);
  checkAgainst(expected, session.render(input), input, 'before close');
  assert.equal(session.close(), undefined);
  const closed = { code: 'ERR_CONDENSE_SESSION_CLOSED', message: /PruneSession\.(render|flush|setState): the session is closed/ };
  assert.throws(() => session.render(input), closed);
  assert.throws(() => session.flush(), closed);
  assert.throws(() => session.setState(sample.state), closed);
  session.close();
  assert.throws(() => session.render(input), closed);
  // Another session is not affected, and the closed one kept nothing alive
  // that a new one would see.
  const other = new PruneSession(opts);
  checkAgainst(expected, other.render(input), input, 'another session');
  if (typeof Symbol.dispose === 'symbol') {
    assert.equal(PruneSession.prototype[Symbol.dispose], PruneSession.prototype.close);
    other[Symbol.dispose]();
    assert.throws(() => other.render(input), closed);
  }
  assert.deepEqual(input, structuredClone(sample.messages));
});

const corpusDir = path.join(__dirname, '..', '..', 'shared', 'corpus');
for (const name of ['small', 'medium']) {
  const file = path.join(corpusDir, `${name}.json`);
  test(`corpus ${name}: pruneMessages and a session append equal pure JS`, { skip: !fs.existsSync(file) && 'shared corpus absent' }, () => {
    const s = JSON.parse(fs.readFileSync(file, 'utf8'));
    const opts = { state: s.state, config: s.config, thinkingStripBoundaryTimestamp: s.thinkingBoundaryTimestamp };
    const expected = pure.pruneMessages(s.messages, opts);
    checkAgainst(expected, pruneMessages(structuredClone(s.messages), opts), s.messages, name);
    const session = new PruneSession(opts);
    session.render(structuredClone(s.messages.slice(0, -1)));
    const input = structuredClone(s.messages);
    checkAgainst(expected, session.render(input), input, `${name} session`);
  });
}
