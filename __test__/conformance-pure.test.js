'use strict';

// Runs every conformance vector through the pure-JS implementation.
// Uses only node:test and node:assert/strict so that the same file runs under
// `node --test __test__/` and `bun test`. A `-raw` case's messages are parsed
// from the case's own text (helpers/vectors.js), and that text must differ
// from JSON.stringify's, so the raw spellings are what the pruner sees.

const { describe, test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');

const pure = require('../js/pure.js');
const codes = require('../js/codes.js');
const { loadVectors } = require('./helpers/vectors.js');

const vectors = loadVectors(path.join(__dirname, 'fixtures', 'vectors.json'));

const STUB_PREFIXES = ['[Summarized in pruner summary, ref `', '[Oversized output spilled to file \u2014 '];

function groupCases() {
  const groups = new Map();
  for (const c of vectors) {
    if (!groups.has(c.group)) groups.set(c.group, []);
    groups.get(c.group).push(c);
  }
  return groups;
}

// The messages as JSON.parse reads the case's text: for a `-raw` case, its
// own spelling (which JSON.stringify would not write).
function messagesOf(c) {
  if (!c.name.endsWith('-raw')) return c.messages;
  const parsed = JSON.parse(c.rawMessages);
  assert.notEqual(c.rawMessages, JSON.stringify(parsed), 'the raw case is spelled as JSON.stringify would');
  return parsed;
}

function runCase(c, messages = c.messages) {
  return pure.pruneMessages(messages, {
    state: c.state,
    config: c.config,
    thinkingStripBoundaryTimestamp: c.thinkingBoundaryTimestamp,
  });
}

// A message the pruner made itself: a stub, a synthetic chain block, or an
// edited copy (purged args, stripped thinking) of an input message.
function isProducedMessage(msg) {
  const first = Array.isArray(msg.content) ? msg.content[0] : undefined;
  const text = first && typeof first.text === 'string' ? first.text : '';
  if (msg.role === 'toolResult') return STUB_PREFIXES.some((p) => text.startsWith(p));
  if (msg.role === 'user') return text.startsWith('<compressed-chain id="');
  return msg.role === 'assistant';
}

function assertIdentityKept(input, output) {
  const inputRefs = new Set(input.filter((m) => m !== null && typeof m === 'object'));
  const inputJson = new Set(input.map((m) => JSON.stringify(m)));
  let lastIndex = -1;
  for (const msg of output) {
    if (inputRefs.has(msg)) {
      // Kept messages are the caller's own objects, in the caller's order.
      const index = input.indexOf(msg, lastIndex + 1);
      assert.ok(index > lastIndex, 'kept messages stay in order');
      lastIndex = index;
    } else if (msg !== null && typeof msg === 'object') {
      // A new object is either an edit that changed something or a message
      // the pruner produced; an unchanged copy of an input would lose identity.
      assert.ok(
        isProducedMessage(msg) || !inputJson.has(JSON.stringify(msg)),
        `untouched message was copied: ${JSON.stringify(msg).slice(0, 120)}`,
      );
      if (msg.role === 'assistant') assert.ok(!inputJson.has(JSON.stringify(msg)), 'assistant copied unchanged');
    } else {
      // Primitives pass through as they are.
      assert.ok(input.includes(msg));
    }
  }
}

// Where the reference throws: a TypeError with a code, NOT_ARRAY for a
// top level that is not an array, else INVALID_MESSAGE naming the message.
function assertReferenceThrow(err, messages) {
  assert.ok(err instanceof TypeError, 'throws a TypeError');
  if (!Array.isArray(messages)) {
    assert.equal(err.code, codes.NOT_ARRAY);
  } else {
    assert.equal(err.code, codes.INVALID_MESSAGE, err.message);
    assert.equal(typeof err.messageIndex, 'number');
    assert.match(err.message, new RegExp(`^messages\\[${err.messageIndex}\\]`));
  }
  return true;
}

function checkPruneCase(c) {
  const messages = messagesOf(c);
  const messagesBefore = structuredClone(messages);
  const stateBefore = structuredClone(c.state);
  const expected = c.expected;

  if (expected.throws !== undefined) {
    assert.throws(() => runCase(c, messages), (err) => assertReferenceThrow(err, messages));
    assert.deepStrictEqual(messages, messagesBefore, 'input not mutated');
    return;
  }

  const result = runCase(c, messages);
  assert.deepStrictEqual(messages, messagesBefore, 'input not mutated');
  assert.deepStrictEqual(c.state, stateBefore, 'state not mutated');

  assert.equal(result.pruned, expected.pruned, 'pruned');
  assert.equal(result.beforeChars, expected.beforeChars, 'beforeChars');
  assert.equal(result.afterChars, expected.afterChars, 'afterChars');
  assert.ok(
    JSON.stringify(result.messages) === JSON.stringify(expected.messages),
    'messages serialize exactly as expected',
  );

  if (!result.pruned) {
    assert.equal(result.messages, messages, 'no-op returns the caller array');
  } else {
    assert.notEqual(result.messages, messages, 'a change returns a new array');
    assertIdentityKept(messages, result.messages);
  }

  assert.equal(typeof result.stats, 'object');
  assert.equal(result.frontier.thinkingStripBoundaryTimestamp, c.thinkingBoundaryTimestamp);
}

function checkBoundaryCase(c) {
  const value = pure.computeThinkingBoundary(c.assistantTimestamps, c.keepLastTurns, c.prev ?? undefined);
  assert.equal(value ?? null, c.expected.value);
  if (c.expected.value === null) assert.equal(value, undefined);
}

describe('conformance vectors (pure JS)', () => {
  test('all 400 vectors are present', () => {
    assert.equal(vectors.length, 400);
    assert.ok(vectors.filter((c) => c.name.endsWith('-raw')).length > 0, 'some cases are spelled raw');
  });
  for (const [group, cases] of groupCases()) {
    describe(group, () => {
      for (const c of cases) {
        test(c.name, () => (group === 'boundary' ? checkBoundaryCase(c) : checkPruneCase(c)));
      }
    });
  }
});

describe('pure JS surface', () => {
  const assistant = (timestamp, content) => ({ role: 'assistant', content, timestamp });
  const thinking = { type: 'thinking', thinking: 'hmm' };
  const text = { type: 'text', text: 'ok' };

  test('frontier reports the boundary used and the next one', () => {
    const messages = [assistant(1, [thinking, text]), assistant(2, [thinking, text]), assistant(3, [text])];
    const config = { thinkingStrip: { enabled: true, keepLastTurns: 2 } };
    const r = pure.pruneMessages(messages, { state: {}, config, thinkingStripBoundaryTimestamp: 2 });
    assert.deepEqual(r.frontier, { thinkingStripBoundaryTimestamp: 2, nextThinkingStripBoundaryTimestamp: 2 });
    assert.equal(r.stats.thinkingStripped, 1);
    assert.equal(r.messages[1], messages[1]);
    assert.equal(r.messages[2], messages[2]);

    const fallback = pure.pruneMessages(messages, { state: {}, config });
    assert.deepEqual(fallback.frontier, {
      thinkingStripBoundaryTimestamp: null,
      nextThinkingStripBoundaryTimestamp: 2,
    });
    const off = pure.pruneMessages(messages, { state: {}, config: {} });
    assert.equal(off.pruned, false);
    assert.equal(off.messages, messages);
    assert.deepEqual(off.frontier, { thinkingStripBoundaryTimestamp: null, nextThinkingStripBoundaryTimestamp: null });
  });

  test('stats count every phase', () => {
    const state = {
      records: { a: { toolName: 'read', args: {} } },
      chains: [
        {
          blockId: 'b1',
          startUserTimestamp: 10,
          droppedToolCallIds: ['c'],
          finalAssistantTimestamp: 14,
          toolRefs: ['t2'],
          compressedAt: 99,
        },
      ],
      summaryBodies: [{ toolCallIds: ['c'], text: 'summary' }],
    };
    const big = 'x'.repeat(50);
    const messages = [
      { role: 'user', content: 'go', timestamp: 10 },
      assistant(11, [{ type: 'toolCall', id: 'c', name: 'bash', arguments: {} }]),
      { role: 'toolResult', toolCallId: 'c', toolName: 'bash', content: [text], isError: false, timestamp: 12 },
      assistant(13, [thinking, { type: 'toolCall', id: 'e', name: 'write', arguments: { big } }]),
      { role: 'toolResult', toolCallId: 'e', toolName: 'write', content: [text], isError: true, timestamp: 14 },
      assistant(14, [thinking, { type: 'toolCall', id: 'a', name: 'read', arguments: {} }]),
      { role: 'toolResult', toolCallId: 'a', toolName: 'read', content: [text], isError: false, timestamp: 15 },
      assistant(16, [thinking, text]),
      assistant(17, [thinking, text]),
    ];
    const config = {
      chainCompression: { enabled: true, stripFinalAssistantThinking: true },
      errorPurge: { enabled: true, cooldownTurns: 0, minArgChars: 10 },
      thinkingStrip: { enabled: true, keepLastTurns: 1 },
      recoveryGraceTurns: 0,
    };
    const r = pure.pruneMessages(messages, { state, config });
    assert.deepEqual(r.stats, {
      stubbed: 1,
      purgedArgs: 1,
      chainDropped: 2,
      chainInserted: 1,
      finalThinkingStripped: 1,
      thinkingStripped: 2,
    });
    assert.equal(r.messages[1].content[0].text, '<compressed-chain id="b1" tools="t2">\nsummary\n</compressed-chain>');
  });

  test('indexer look-ups follow SPEC 2.2', () => {
    const indexer = pure.createIndexer({
      records: { a: { toolName: 'read' }, __proto__x: { toolName: 'p' } },
      dedupAliases: { d: 'a', empty: '', gone: 'missing' },
      shortRefs: { a: 't1', d: 't1' },
      refAliases: { empty: 'a' },
      chains: [
        { blockId: 'b1', startUserTimestamp: 5, droppedToolCallIds: ['a'] },
        { blockId: 'b2', startUserTimestamp: 1, droppedToolCallIds: [] },
        { blockId: 'b3', startUserTimestamp: 5, droppedToolCallIds: ['x'], rangeSummaryText: 'r' },
      ],
      summaryBodies: [
        { toolCallIds: ['a'], text: 'one' },
        { toolCallIds: ['x', 'a'], text: 'one' },
        { toolCallIds: ['x'], text: 'two' },
      ],
    });
    assert.equal(indexer.isSummarized('d'), true);
    assert.equal(indexer.isSummarized(5), false);
    assert.equal(indexer.getRecord('d').toolName, 'read');
    assert.equal(indexer.getRecord('empty').toolName, 'read');
    assert.equal(indexer.getRecord('gone'), undefined);
    assert.equal(indexer.getShortRefForToolCallId('d'), 't1');
    assert.deepEqual(indexer.getChainEntries().map((e) => e.blockId), ['b2', 'b3']);
    assert.equal(indexer.getPerBatchSummaryTextForToolCallIds(['a', 'x']), 'one\n\ntwo');
    assert.equal(indexer.findChainEntryByBlockId('b1'), undefined);
    assert.equal(indexer.findChainEntryByBlockId('b3').rangeSummaryText, 'r');
  });

  test('bad input gives a typed error', () => {
    for (const bad of [null, {}, 5, 'x']) {
      assert.throws(() => pure.pruneMessages(bad, { state: {}, config: {} }), {
        name: 'TypeError',
        code: codes.NOT_ARRAY,
      });
    }
    assert.throws(() => pure.pruneMessages([{ role: 'user', content: 'x' }, null], { state: {}, config: {} }), {
      code: codes.INVALID_MESSAGE,
      messageIndex: 1,
      message: /messages\[1\]/,
    });
    assert.equal(pure.ERR_CODE, codes.INVALID_MESSAGE);
  });

  test('globs are anchored JS regexes over UTF-16 units', () => {
    const re = (g) => pure.globToRegExp(g);
    assert.ok(re('**/*.md').test('README.md'));
    assert.ok(re('**/*.md').test('a/b/README.md'));
    assert.ok(!re('*.md').test('a/README.md'));
    assert.ok(re('src/**').test('src/a/b.ts'));
    assert.ok(!re('src/**').test('src/a\nb.ts'));
    assert.ok(re('?.ts').test('\n.ts'));
    assert.ok(!re('*.ts').test('a.ts\n'));
    assert.ok(!re('?.ts').test('\u{1F600}.ts'));
    assert.ok(re('??.ts').test('\u{1F600}.ts'));
    assert.ok(re('a[1](x)+{y}|$^.ts').test('a[1](x)+{y}|$^.ts'));
    assert.ok(!re('a.ts').test('abts'));
  });
});
