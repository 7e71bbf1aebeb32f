'use strict';

// Runs every 2.9 conformance vector (fixtures/vectors-2.9.json, vendored
// from ../shared/conformance-2.9) through the pure-JS 2.9.1 oracle, both
// entries: the state-based pruneMessages and pruneWithIndexer with the
// release's signature over the same state. pruned, both sizes, the messages
// (JSON.stringify of each) and the diagnostics (kind, key with its type,
// detail, in order) must equal the expected ones; where the reference threw,
// a typed error. A no-op hands back the caller's array, kept messages are
// the caller's own objects, and nothing passed in is modified. A `-raw`
// case's messages are parsed from its own text, which JSON.stringify would
// spell differently.

const { describe, test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const v29 = require('../js/pure/v2.9.js');
const codes = require('../js/codes.js');
const { loadVectors } = require('./helpers/vectors.js');

const FILE = path.join(__dirname, 'fixtures', 'vectors-2.9.json');
const SHARED = path.join(__dirname, '..', '..', 'shared', 'conformance-2.9', 'vectors.json');
const vectors = loadVectors(FILE);

const STUB_PREFIXES = ['[Summarized in pruner summary, ref `', '[Oversized output spilled to file \u2014 '];

function messagesOf(c) {
  if (!c.name.endsWith('-raw')) return c.messages;
  const parsed = JSON.parse(c.rawMessages);
  assert.notEqual(c.rawMessages, JSON.stringify(parsed), 'the raw case is spelled as JSON.stringify would');
  return parsed;
}

function collecting() {
  const reports = [];
  return { reports, sink: { report: (kind, key, detail) => reports.push({ kind, key, detail }) } };
}

function runBoth(c, messages) {
  const viaState = collecting();
  const viaIndexer = collecting();
  const outcome = (fn) => {
    try {
      return { value: fn() };
    } catch (error) {
      return { error };
    }
  };
  const config = c.config;
  const a = outcome(() => v29.pruneMessages(messages, { state: c.state, config }, viaState.sink));
  const b = outcome(() =>
    v29.pruneWithIndexer(
      messages,
      v29.createIndexer(c.state),
      config.chainCompression,
      config.errorPurge,
      config.protection,
      config.recoveryGraceTurns,
      viaIndexer.sink,
    ),
  );
  return [
    { ...a, reports: viaState.reports, label: 'pruneMessages' },
    { ...b, reports: viaIndexer.reports, label: 'pruneWithIndexer' },
  ];
}

// A new object in the output is something the pruner made: a stub, a
// synthetic block, or an assistant it edited (purged args, stripped
// thinking), which then differs from every input message.
function assertIdentityKept(input, output) {
  const inputRefs = new Set(input.filter((m) => m !== null && typeof m === 'object'));
  const inputJson = new Set(input.map((m) => JSON.stringify(m)));
  let last = -1;
  for (const msg of output) {
    if (inputRefs.has(msg)) {
      const at = input.indexOf(msg, last + 1);
      assert.ok(at > last, 'kept messages stay in order');
      last = at;
    } else if (msg !== null && typeof msg === 'object') {
      const first = Array.isArray(msg.content) ? msg.content[0] : undefined;
      const text = typeof first?.text === 'string' ? first.text : '';
      if (msg.role === 'toolResult') assert.ok(STUB_PREFIXES.some((p) => text.startsWith(p)), 'a new toolResult is a stub');
      else if (msg.role === 'user') assert.ok(text.startsWith('<compressed-chain id="'), 'a new user message is a block');
      else {
        assert.equal(msg.role, 'assistant', `an unexpected new message: ${JSON.stringify(msg).slice(0, 100)}`);
        assert.ok(!inputJson.has(JSON.stringify(msg)), 'an assistant copied unchanged');
      }
    } else {
      assert.ok(input.includes(msg), 'primitives pass through');
    }
  }
}

function checkCase(c) {
  const messages = messagesOf(c);
  const before = structuredClone({ messages, state: c.state, config: c.config });
  const expected = c.expected;
  for (const got of runBoth(c, messages)) {
    const label = got.label;
    if (expected.throws !== undefined) {
      assert.ok(got.error, `${label}: answers where the reference throws (${expected.throws.slice(0, 80)})`);
      assert.ok(got.error instanceof TypeError, `${label}: ${got.error}`);
      assert.ok(Object.values(codes).includes(got.error.code), `${label}: code ${got.error.code}`);
      if (!Array.isArray(messages)) assert.equal(got.error.code, codes.NOT_ARRAY, label);
      if (got.error.code === codes.INVALID_MESSAGE) assert.equal(typeof got.error.messageIndex, 'number', label);
      continue;
    }
    assert.ok(!got.error, `${label}: throws ${got.error && got.error.message}`);
    const result = got.value;
    assert.equal(result.pruned, expected.pruned, `${label}: pruned`);
    assert.equal(result.beforeChars, expected.beforeChars, `${label}: beforeChars`);
    assert.equal(result.afterChars, expected.afterChars, `${label}: afterChars`);
    assert.ok(JSON.stringify(result.messages) === JSON.stringify(expected.messages), `${label}: messages`);
    assert.deepStrictEqual(got.reports, expected.diagnostics, `${label}: diagnostics`);
    if (!result.pruned) {
      assert.equal(result.messages, messages, `${label}: a no-op returns the caller's array`);
    } else {
      assert.notEqual(result.messages, messages, `${label}: a change returns a new array`);
      assertIdentityKept(messages, result.messages);
    }
  }
  assert.deepStrictEqual({ messages, state: c.state, config: c.config }, before, 'an input was modified');
}

describe('2.9 conformance vectors (pure JS 2.9.1 oracle)', () => {
  test('the vendored file is ../shared/conformance-2.9/vectors.json, byte for byte', { skip: !fs.existsSync(SHARED) && '../shared is absent' }, () => {
    assert.ok(fs.readFileSync(FILE).equals(fs.readFileSync(SHARED)));
  });

  test('all 400 vectors are present, in 11 groups, some spelled raw', () => {
    assert.equal(vectors.length, 400);
    assert.equal(new Set(vectors.map((c) => c.group)).size, 11);
    assert.ok(vectors.filter((c) => c.name.endsWith('-raw')).length >= 10);
  });

  const groups = new Map();
  for (const c of vectors) {
    if (!groups.has(c.group)) groups.set(c.group, []);
    groups.get(c.group).push(c);
  }
  for (const [group, cases] of groups) {
    describe(group, () => {
      for (const c of cases) test(c.name, () => checkCase(c));
    });
  }
});

describe('pure JS 2.9.1 surface', () => {
  const toolResult = (id, timestamp) => ({ role: 'toolResult', toolCallId: id, toolName: 'bash', content: [{ type: 'text', text: 'x' }], isError: false, timestamp });
  const assistant = (timestamp, ids) => ({ role: 'assistant', content: ids.map((id) => ({ type: 'toolCall', id, name: 'bash', arguments: {} })), timestamp });

  test('occurrence keys and bare ids (SPEC-2.9 2.2)', () => {
    assert.equal(v29.occKey('a', undefined), 'a');
    assert.equal(v29.occKey('a', 1e21), 'a@1e+21');
    assert.equal(v29.occKey('a', -0), 'a@0');
    assert.equal(v29.occKey(5, 1.5), '5@1.5');
    assert.equal(v29.occKey(undefined, 7), 'undefined@7');
    assert.equal(v29.occKey('a', null), 'a@null');
    assert.deepEqual(['a@12', 'a@1@2', 'a@x', 'a@', '@12', 'a'].map(v29.bare), ['a', 'a@1', 'a@x', 'a@', '@12', 'a']);
    assert.throws(() => v29.bare(5), { code: codes.INVALID_STATE });
  });

  test('the state-backed indexer follows SPEC-2.9 2.4', () => {
    const indexer = v29.createIndexer(
      JSON.parse(`{
        "records": {
          "legacy": {"toolCallId": "legacy", "toolName": "read"},
          "mixed": {"toolCallId": "mixed", "toolName": "bare"},
          "mixed@5": {"toolCallId": "mixed", "resultTimestamp": 5, "toolName": "occ"},
          "only@7": {"toolCallId": "only", "resultTimestamp": 7, "toolName": "one"},
          "__proto__": {"toolCallId": "__proto__", "toolName": "proto"},
          "": {"toolCallId": "", "toolName": "empty"}
        },
        "dedupAliases": {"d@1": "only@7", "e@1": "", "g@1": "gone@1"},
        "shortRefs": {"only@7": "t1", "d@1": "t1", "z": ""},
        "refAliases": {"e@1": "mixed@5", "t1": "only@7"}
      }`),
    );
    assert.equal(indexer.isSummarized('only@7'), true);
    assert.equal(indexer.isSummarized('only'), false, 'no bare-id fallback');
    assert.equal(indexer.isSummarized('d@1'), true);
    assert.equal(indexer.hasLegacyBareRecord('legacy'), true);
    assert.equal(indexer.hasLegacyBareRecord('mixed'), false, 'a legacy record with an occurrence sibling');
    assert.equal(indexer.hasLegacyBareRecord('only'), false, 'no legacy record');
    assert.equal(indexer.hasLegacyBareRecord('__proto__'), true, '__proto__ is an ordinary key');
    assert.equal(indexer.getRecord('d@1').toolName, 'one', 'rung 2: the dedup target');
    assert.equal(indexer.getRecord('e@1').toolName, 'occ', 'an empty dedup target falls to rung 3');
    assert.equal(indexer.getRecord('g@1'), undefined, 'a missing target is no record, no later rung');
    assert.equal(indexer.getRecord('only').toolName, 'one', 'rung 4: the only key of the id');
    assert.equal(indexer.getRecord('mixed').toolName, 'bare', 'rung 1 first');
    assert.equal(indexer.getRecord(''), undefined, 'a record keyed "" is never returned');
    assert.equal(indexer.getRecord(5), undefined, 'a number never finds a string key');
    assert.equal(indexer.getShortRefForToolCallId('d@1'), 't1');
    assert.equal(indexer.getShortRefForToolCallId('z'), '');
  });

  test('diagnostics come through the sink, even on a no-op; without a sink nothing is reported', () => {
    const messages = [{ role: 'user', content: 'go', timestamp: 1 }, assistant(2, ['c']), toolResult('c', 3)];
    const state = { chains: [{ blockId: 'b1', startUserTimestamp: 1, droppedToolCallIds: ['c'], finalAssistantTimestamp: 99, toolRefs: [], compressedAt: 5 }] };
    const config = { chainCompression: { enabled: true } };
    const reports = [];
    const r = v29.pruneMessages(messages, { state, config }, { report: (...args) => reports.push(args) });
    assert.equal(r.pruned, false);
    assert.equal(r.messages, messages);
    assert.deepEqual(reports, [['unresolved-range', 'b1', 'blockId=b1 start=1 final=99']]);
    assert.equal(v29.pruneMessages(messages, { state, config }).pruned, false);
    assert.throws(() => v29.pruneMessages(messages, { state, config }, {}), { code: codes.INVALID_ARGUMENT, field: 'diagnostics.report' });
  });

  test('stats count each phase', () => {
    const messages = [
      { role: 'user', content: 'go', timestamp: 1 },
      assistant(2, ['a', 'b']),
      toolResult('a', 3),
      toolResult('b', 4),
      toolResult('b', 5),
      { role: 'custom', customType: 'note', content: 'x', timestamp: 6 },
      toolResult('a', 7),
    ];
    const state = { records: { 'a@3': { toolCallId: 'a', resultTimestamp: 3, toolName: 'bash', args: {} } } };
    const r = v29.pruneMessages(messages, { state, config: {} });
    assert.deepEqual(r.stats, { stubbed: 1, purgedArgs: 0, chainDropped: 0, chainInserted: 0, finalThinkingStripped: 0, orphansSwept: 2 });
    assert.deepEqual(r.messages.map((m) => m.timestamp), [1, 2, 3, 4, 6]);
  });

  test('a key of 2.4.3 config or a wrong-typed config is a typed config error', () => {
    const config = { thinkingStrip: { enabled: true, keepLastTurns: 1 } };
    assert.throws(() => v29.pruneMessages([], { state: {}, config }), { code: codes.INVALID_CONFIG, field: 'thinkingStrip' });
    assert.throws(() => v29.pruneMessages([], { state: {}, config: [] }), { code: codes.INVALID_CONFIG });
    assert.equal(v29.pruneMessages([], { state: {}, config: null }).pruned, false);
  });
});
