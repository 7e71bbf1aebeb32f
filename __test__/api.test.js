'use strict';

// The public API around the conformance vectors: Pruner vs prune, error
// codes and places, panics, caller buffers, sizeOf, the frontier, and the
// sample session against the pure-JS implementation.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { prune, Pruner, computeThinkingBoundary, sizeOf } = require('..');
const pure = require('../js/pure.js');
const { loadVectors } = require('./helpers/vectors');

const vectors = loadVectors().filter((c) => c.group !== 'boundary');
const sample = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'sample', 'session.json'), 'utf8'));

function bytesOf(value) {
  return Buffer.from(JSON.stringify(value));
}

function outJson(result) {
  return result.pruned ? JSON.stringify(JSON.parse(result.messages.toString('utf8'))) : null;
}

test('Pruner gives the same answers as prune, across state changes', () => {
  const cases = vectors.filter((c) => !c.expected.throws && c.group !== 'hostile');
  const byConfig = new Map();
  for (const c of cases) {
    const key = JSON.stringify(c.config);
    if (!byConfig.has(key)) byConfig.set(key, []);
    byConfig.get(key).push(c);
  }
  let checked = 0;
  for (const group of byConfig.values()) {
    const pruner = new Pruner(group[0].config);
    for (const c of group) {
      pruner.setState(c.state);
      const bytes = bytesOf(c.messages);
      const opts = { thinkingStripBoundaryTimestamp: c.thinkingBoundaryTimestamp };
      const a = pruner.prune(bytes, opts);
      const b = prune(bytes, { state: c.state, config: c.config, ...opts });
      assert.equal(a.pruned, c.expected.pruned, c.name);
      assert.equal(a.beforeChars, b.beforeChars, c.name);
      assert.equal(a.afterChars, b.afterChars, c.name);
      assert.equal(outJson(a), outJson(b), c.name);
      assert.deepEqual(a.frontier, b.frontier, c.name);
      checked++;
    }
  }
  assert.equal(checked, cases.length);
});

test('the caller buffer is byte-identical after every call, also on errors', () => {
  for (const c of vectors) {
    const bytes = Buffer.from(c.rawMessages);
    const copy = Buffer.from(bytes);
    try {
      prune(bytes, { state: c.state, config: c.config, thinkingStripBoundaryTimestamp: c.thinkingBoundaryTimestamp });
    } catch {
      // errors are checked elsewhere
    }
    try {
      sizeOf(bytes);
    } catch {
      // non-array inputs
    }
    assert.ok(bytes.equals(copy), c.name);
  }
  // A Uint8Array view into a larger buffer is read, not written, too.
  const backing = Buffer.from(`xx${JSON.stringify(sample.messages)}yy`);
  const view = new Uint8Array(backing.buffer, backing.byteOffset + 2, backing.length - 4);
  const before = Buffer.from(backing);
  const r = prune(view, { state: sample.state, config: sample.config });
  assert.ok(r.pruned);
  assert.ok(backing.equals(before));
});

test('typed errors carry a stable code and name the message and field', () => {
  const cases = [
    ['[{"role":"user"},null]', {}, 'ERR_CONDENSE_INVALID_MESSAGE', /message 1/],
    ['{"role":"user"}', {}, 'ERR_CONDENSE_NOT_ARRAY', /array.*object/],
    ['[1,2', {}, 'ERR_CONDENSE_INVALID_JSON', /byte/],
    ['', {}, 'ERR_CONDENSE_INVALID_JSON', /byte/],
    [
      '[{"role":"assistant","content":"text","timestamp":1},{"role":"toolResult","toolCallId":"a","isError":true,"content":[]}]',
      { config: { errorPurge: { enabled: true, cooldownTurns: 0, minArgChars: 0 } } },
      'ERR_CONDENSE_INVALID_MESSAGE',
      /message 0: content/,
    ],
    [`[${'['.repeat(1200)}${']'.repeat(1200)}]`, {}, 'ERR_CONDENSE_TOO_DEEP', /message 0/],
    ['[]', { state: { records: [] } }, 'ERR_CONDENSE_INVALID_STATE', /records/],
    [
      '[{"role":"toolResult","toolCallId":"a","content":[]}]',
      { state: { records: { a: { toolName: 'bash' } } }, config: { protection: { protectedTools: [] } } },
      'ERR_CONDENSE_INVALID_CONFIG',
      /protectedPaths/,
    ],
  ];
  for (const [text, opts, code, message] of cases) {
    assert.throws(() => prune(Buffer.from(text), opts), (e) => e instanceof Error && e.code === code && message.test(e.message), text.slice(0, 40));
  }
  assert.throws(() => prune('[]'), { code: 'ERR_CONDENSE_INVALID_ARGUMENT' });
  assert.throws(() => prune(Buffer.from('[]'), { thinkingStripBoundaryTimestamp: '5' }), { code: 'ERR_CONDENSE_INVALID_ARGUMENT' });
  assert.throws(() => new Pruner().prune([]), { code: 'ERR_CONDENSE_INVALID_ARGUMENT' });
  assert.throws(() => computeThinkingBoundary([1, 'x'], 1), { code: 'ERR_CONDENSE_INVALID_ARGUMENT' });
});

// The production binary has no way to panic on purpose; a build with the
// test-only exports does (Cargo.toml `test-exports`), loaded beside it.
const { testBinding, NO_CARGO } = require('./helpers/test-binding.js');
test('a panic inside the addon becomes a JS error, and the addon keeps working', { skip: NO_CARGO, timeout: 600000 }, () => {
  const binding = testBinding();
  assert.ok(binding, 'the test-exports build loads');
  assert.throws(() => binding.debugPanic(), (e) => e instanceof Error && /panic/.test(e.message));
  // The same binary keeps working after the panic.
  const r = binding.pruneBytes(bytesOf(sample.messages), JSON.stringify(sample.state), JSON.stringify(sample.config), null, null);
  assert.ok(r.pruned);
  const production = require('../loader.js');
  for (const name of ['debugPanic', 'wireToJson', 'replayWirePayload']) {
    assert.equal(typeof production[name], 'undefined', `the production binary has no ${name}`);
  }
});

test('sizeOf equals JSON.stringify(JSON.parse(bytes)).length, raw spellings included', () => {
  for (const c of vectors) {
    if (!Array.isArray(c.messages)) continue;
    const expected = JSON.stringify(JSON.parse(c.rawMessages)).length;
    assert.equal(sizeOf(Buffer.from(c.rawMessages)), expected, c.name);
  }
  const odd = '[ {"b":1, "2":"\\u00e9\\/", "a":[1.0,-0,1E21,1e400], "b":2}, "\\ud800\\ud83d\\ude00" ]';
  assert.equal(sizeOf(Buffer.from(odd)), JSON.stringify(JSON.parse(odd)).length);
});

test('lone surrogates survive exactly', () => {
  const messages = [
    { role: 'toolResult', toolCallId: 'id\ud800', toolName: 'read', content: [{ type: 'text', text: 'x\udfffy' }], isError: false, timestamp: 2 },
    { role: 'assistant', content: [{ type: 'thinking', thinking: '\udbff' }, { type: 'text', text: 'a\ud834b' }], timestamp: 1 },
  ];
  const state = { records: { 'id\ud800': { toolName: 'read', args: { path: 'p\udc00' } } } };
  const config = { thinkingStrip: { enabled: true, keepLastTurns: 1 } };
  const opts = { state, config, thinkingStripBoundaryTimestamp: 5 };
  const r = prune(bytesOf(messages), opts);
  const expected = pure.pruneMessages(messages, opts);
  assert.equal(r.messages.toString('utf8'), JSON.stringify(expected.messages));
  assert.equal(r.beforeChars, expected.beforeChars);
  assert.equal(r.afterChars, expected.afterChars);
  assert.match(r.messages.toString('utf8'), /id\\ud800/);
});

test('frontier: boundary used and the one a flush would compute', () => {
  const messages = [1, 2, 3, 4, 5].map((t) => ({ role: 'assistant', content: [], timestamp: t * 10 }));
  const config = { thinkingStrip: { enabled: true, keepLastTurns: 2 } };
  const r = prune(bytesOf(messages), { config, thinkingStripBoundaryTimestamp: 15 });
  assert.deepEqual(r.frontier, { thinkingStripBoundaryTimestamp: 15, nextThinkingStripBoundaryTimestamp: 40 });
  const later = prune(bytesOf(messages), { config, thinkingStripBoundaryTimestamp: 45 });
  assert.equal(later.frontier.nextThinkingStripBoundaryTimestamp, 45, 'monotonic');
  const off = prune(bytesOf(messages), { config: {} });
  assert.deepEqual(off.frontier, { thinkingStripBoundaryTimestamp: null, nextThinkingStripBoundaryTimestamp: null });
  assert.equal(computeThinkingBoundary([10, 20, 30], 2), 20);
  assert.equal(computeThinkingBoundary([10, 20, 30], 3), undefined);
  assert.equal(computeThinkingBoundary([10, 20, 30], 3, 7), 7);
});

test('the sample session: native equals pure JS, with every phase at work', () => {
  const { messages, state, config, thinkingBoundaryTimestamp } = sample;
  const opts = { state, config, thinkingStripBoundaryTimestamp: thinkingBoundaryTimestamp };
  const r = prune(bytesOf(messages), opts);
  const js = pure.pruneMessages(messages, opts);
  assert.equal(r.pruned, true);
  assert.equal(r.beforeChars, js.beforeChars);
  assert.equal(r.afterChars, js.afterChars);
  assert.equal(r.messages.toString('utf8'), JSON.stringify(js.messages));
  assert.deepEqual(r.stats, js.stats);
  assert.deepEqual(r.frontier, js.frontier);
  for (const [k, v] of Object.entries(r.stats)) assert.ok(v > 0, k);
});

const corpusDir = path.join(__dirname, '..', '..', 'shared', 'corpus');
for (const name of ['small', 'medium', 'large']) {
  const file = path.join(corpusDir, `${name}.json`);
  test(`corpus ${name}: native equals pure JS`, { skip: !fs.existsSync(file) && 'shared corpus absent' }, () => {
    const session = JSON.parse(fs.readFileSync(file, 'utf8'));
    const opts = { state: session.state, config: session.config, thinkingStripBoundaryTimestamp: session.thinkingBoundaryTimestamp };
    const bytes = bytesOf(session.messages);
    const r = prune(bytes, opts);
    const js = pure.pruneMessages(session.messages, opts);
    assert.equal(r.pruned, js.pruned);
    assert.equal(r.beforeChars, js.beforeChars);
    assert.equal(r.afterChars, js.afterChars);
    assert.equal(r.messages.toString('utf8'), JSON.stringify(js.messages));
    assert.deepEqual(r.stats, js.stats);
    assert.deepEqual(r.frontier, js.frontier);
    assert.equal(sizeOf(bytes), JSON.stringify(session.messages).length);
  });
}

// Whatever the addon keeps of the state and config it converted (keyed by
// their text), a host edits its indexer in place between renders:
// every call must answer for the state as it is now, also when a state text
// comes back after another one.
test('prune and pruneMessages follow state and config edited in place between calls', () => {
  const { pruneMessages } = require('..');
  const base = JSON.parse(JSON.stringify(sample));
  const state = base.state;
  const config = base.config;
  const ids = Object.keys(state.records);
  const removed = ids.slice(0, 10).map((id) => [id, state.records[id]]);
  const steps = [
    () => {},
    () => { for (const [id] of removed) delete state.records[id]; },
    () => {},
    () => { for (const [id, r] of removed) state.records[id] = r; },
    () => { config.errorPurge.enabled = false; },
    () => { config.errorPurge.enabled = true; config.thinkingStrip.keepLastTurns = 4; },
    () => { state.chains = []; },
    () => { config.thinkingStrip.keepLastTurns = 16; state.chains = sample.state.chains; },
  ];
  const seen = new Set();
  for (const [i, step] of steps.entries()) {
    step();
    const opts = { state, config, thinkingStripBoundaryTimestamp: base.thinkingBoundaryTimestamp };
    const js = pure.pruneMessages(base.messages, opts);
    seen.add(JSON.stringify(js.stats) + js.afterChars);
    const r = prune(bytesOf(base.messages), opts);
    assert.equal(r.afterChars, js.afterChars, `prune, step ${i}`);
    assert.equal(r.messages.toString('utf8'), JSON.stringify(js.messages), `prune, step ${i}`);
    assert.deepEqual(r.stats, js.stats, `prune, step ${i}`);
    const a = pruneMessages(base.messages, opts);
    assert.equal(a.afterChars, js.afterChars, `pruneMessages, step ${i}`);
    assert.equal(JSON.stringify(a.messages), JSON.stringify(js.messages), `pruneMessages, step ${i}`);
  }
  // The edits changed the result, so a stale conversion would have shown.
  assert.ok(seen.size >= 4, `only ${seen.size} distinct results`);
  // Back where it started: the same answer as a fresh call on the original.
  const again = prune(bytesOf(sample.messages), { state: sample.state, config: sample.config, thinkingStripBoundaryTimestamp: sample.thinkingBoundaryTimestamp });
  const first = pure.pruneMessages(sample.messages, { state: sample.state, config: sample.config, thinkingStripBoundaryTimestamp: sample.thinkingBoundaryTimestamp });
  assert.equal(again.messages.toString('utf8'), JSON.stringify(first.messages));
});
