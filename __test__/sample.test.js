'use strict';
// The bundled demo session (sample/session.json): reproducible from its
// generator, well-formed, and exercising every pruning phase.
// Runs under `node --test` and `bun test`.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const { generate, OUT_FILE, SEED, GENERATOR } = require('../scripts/gen-sample.js');

const PURE = path.join(__dirname, '..', 'js', 'pure.js');
const committed = fs.readFileSync(OUT_FILE, 'utf8');
const sample = JSON.parse(committed);
const { messages, state } = sample;

test('the committed sample equals a fresh generation', () => {
  const fresh = generate();
  assert.ok(fresh === committed, 'sample/session.json is stale: run node scripts/gen-sample.js');
  assert.ok(generate() === fresh, 'two generations differ');
});

test('the file is exactly JSON.stringify of its parse plus a newline', () => {
  assert.ok(JSON.stringify(sample) + '\n' === committed);
  assert.deepEqual(Object.keys(sample), ['messages', 'state', 'config', 'thinkingBoundaryTimestamp', 'meta']);
  assert.equal(sample.meta.generator, GENERATOR);
  assert.equal(sample.meta.seed, SEED);
});

test('timestamps strictly increase', () => {
  for (let i = 1; i < messages.length; i++) {
    assert.ok(Number.isFinite(messages[i].timestamp), `message ${i} has no numeric timestamp`);
    assert.ok(messages[i].timestamp > messages[i - 1].timestamp, `timestamp of message ${i} does not increase`);
  }
});

test('every toolResult follows the assistant that made its call', () => {
  let lastAssistant = null;
  let results = 0;
  for (const [i, m] of messages.entries()) {
    if (m.role === 'assistant') lastAssistant = m;
    else if (m.role === 'user') lastAssistant = null;
    else if (m.role === 'toolResult') {
      results++;
      assert.ok(lastAssistant, `toolResult ${i} has no preceding assistant in its request`);
      const call = lastAssistant.content.find((b) => b.type === 'toolCall' && b.id === m.toolCallId);
      assert.ok(call, `toolResult ${i} (${m.toolCallId}) does not answer the assistant before it`);
      assert.equal(call.name, m.toolName, `toolResult ${i} names another tool than its call`);
    }
  }
  assert.ok(results > 0);
});

test('every state id occurs in the messages', () => {
  const callIds = new Set();
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    for (const b of m.content) if (b.type === 'toolCall') callIds.add(b.id);
  }
  for (const id of Object.keys(state.records)) assert.ok(callIds.has(id), `record ${id} is not a tool call`);
  for (const [dup, orig] of Object.entries(state.dedupAliases)) {
    assert.ok(callIds.has(dup) && callIds.has(orig), `dedup alias ${dup} -> ${orig}`);
    assert.equal(state.shortRefs[dup], state.shortRefs[orig]);
  }
  for (const [ref, id] of Object.entries(state.refAliases)) assert.equal(state.shortRefs[id], ref);
  for (const body of state.summaryBodies) for (const id of body.toolCallIds) assert.ok(id in state.records);
  for (const chain of state.chains) for (const id of chain.droppedToolCallIds) assert.ok(callIds.has(id));
});

test("every chain's startUserTimestamp is a user message timestamp", () => {
  const userTs = new Set(messages.filter((m) => m.role === 'user').map((m) => m.timestamp));
  assert.ok(state.chains.length >= 2);
  for (const chain of state.chains) {
    assert.ok(userTs.has(chain.startUserTimestamp), `chain ${chain.blockId} does not start at a user message`);
  }
});

test('js/pure.js finds work for every phase', { skip: !fs.existsSync(PURE) && 'js/pure.js is absent' }, () => {
  const { pruneMessages } = require(PURE);
  const result = pruneMessages(messages, {
    state,
    config: sample.config,
    thinkingStripBoundaryTimestamp: sample.thinkingBoundaryTimestamp,
  });
  assert.equal(result.pruned, true);
  assert.ok(result.afterChars < result.beforeChars);
  for (const key of ['stubbed', 'purgedArgs', 'chainDropped', 'chainInserted', 'finalThinkingStripped', 'thinkingStripped']) {
    assert.ok(result.stats[key] > 0, `stats.${key} is ${result.stats[key]}`);
  }
});
