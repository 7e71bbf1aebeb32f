'use strict';

// The gate as pi's extension runs it (pi/gate.js over the native
// `NativeGate`, docs/GATE.md), on the growing conversations of
// helpers/conversation.js rendered by the drop-ins on pi-condense's own
// indexer (../shared/reference), with a scripted clock: a hold begins with
// the previous request byte for byte and loses no appended message; the
// first call, a pause past the cache lifetime, another model, `cool()` and
// a context that is not an append apply as cold; a small context window
// applies on the budget; a long horizon pays. Skips without ../shared.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const { localNative } = require('./helpers/local-native.js');
const { loadReference, releaseArgs: args, SKIP_MESSAGE } = require('./helpers/indexer.js');
const { simulate } = require('./helpers/conversation.js');
const { PiGate } = require('../pi/gate.js');

const native = localNative();
const shared = fs.existsSync(path.join(__dirname, '..', '..', 'shared', 'reference'));
const skip = !shared ? SKIP_MESSAGE : native === null ? 'no native binary loads here' : false;
const SEED = 20261204;
const SONNET = Object.freeze({
  provider: 'anthropic',
  api: 'anthropic-messages',
  id: 'claude-sonnet-4-5',
  input: ['text', 'image'],
  cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  contextWindow: 200000,
});
// A system prompt past Sonnet's shortest cacheable prefix.
const SYSTEM = 'You are a careful coding agent. '.repeat(400);

/**
 * Runs `seeds` conversations of `dialect` through the drop-in and a gate
 * made by `makeGate(clock)`; `each(call)` sees every call: `{ k, input,
 * result, sent, previous, gate, decision, inputsBefore }`.
 */
async function run(dialect, seeds, { settings = { enabled: true }, step = () => 20_000, model = () => SONNET, before = () => {}, each }) {
  const { dropIns } = require('../js/dropin.js');
  const ref = await loadReference(dialect);
  const prune = dialect === '2.4.3' ? dropIns.pruneMessages24 : dropIns.pruneMessages29;
  const counts = {};
  for (let s = 0; s < seeds; s++) {
    const indexer = new ref.ToolCallIndexer();
    let config;
    let now = 1_760_000_000_000;
    let k = 0;
    const gate = new PiGate(native, settings, { clock: () => now });
    let previous = null;
    simulate({
      dialect,
      seed: SEED + s,
      indexer,
      onConfig: (c) => (config = c),
      render: (messages, boundary) => {
        now += step(k);
        gate.observe(model(k), SYSTEM, '[]');
        before(gate, k);
        const input = structuredClone(messages);
        const inputsBefore = gate.inputs;
        const result = prune(input, ...args(dialect, indexer, config, boundary, undefined));
        const sent = gate.choose(input, result, dropIns.lastRender(indexer, dialect));
        const decision = gate.last;
        counts[decision.reason] = (counts[decision.reason] ?? 0) + 1;
        each({ k, input, result, sent, previous, gate, decision, inputsBefore, seed: SEED + s });
        previous = sent.messages;
        k++;
      },
    });
  }
  return counts;
}

for (const dialect of ['2.4.3', '2.9.1']) {
  test(`${dialect}: a hold is the previous request, byte for byte, and then every message appended since`, { skip }, async () => {
    const counts = await run(dialect, 30, {
      each: ({ k, input, result, sent, previous, decision, inputsBefore, seed }) => {
        const at = `seed ${seed} call ${k}`;
        if (k === 0) assert.equal(decision.reason, 'cold', at);
        if (decision.sent === 'apply') {
          assert.equal(sent, result, `${at}: an apply is the release's render`);
          return;
        }
        assert.equal(sent.pruned, true, at);
        const text = (list) => list.map((m) => JSON.stringify(m));
        assert.deepEqual(text(sent.messages.slice(0, previous.length)), text(previous), `${at}: the hold's prefix`);
        // Every message appended since, as the release renders it or as it
        // is: none is lost.
        const rendered = new Set(text(result.messages));
        const tail = text(sent.messages.slice(previous.length));
        for (let j = inputsBefore; j < input.length; j++) {
          const raw = JSON.stringify(input[j]);
          const m = input[j];
          const ok = tail.includes(raw) || tail.some((t) => rendered.has(t) && JSON.parse(t).timestamp === m.timestamp && JSON.parse(t).role === m.role);
          assert.ok(ok, `${at}: appended input ${j} (${m.role}) is not in the hold`);
        }
        for (const t of tail) assert.ok(rendered.has(t) || input.some((m) => JSON.stringify(m) === t), `${at}: the hold sends a message neither pi nor the release has`);
      },
    });
    assert.ok(counts.waits > 20 && counts.cold > 0 && counts.same > 0, JSON.stringify(counts));
  });
}

test('cold: the first call, a pause past the lifetime, another model, cool() and a context that is not an append', { skip }, async () => {
  const HAIKU = { ...SONNET, id: 'claude-haiku-4-5', cost: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 } };
  const cold = new Set();
  let dropped = null;
  const counts = await run('2.4.3', 12, {
    // A pause of ten minutes before call 9, Haiku from call 14, cool() at 19.
    step: (k) => (k === 9 ? 600_000 : 20_000),
    model: (k) => (k >= 14 ? HAIKU : SONNET),
    before: (gate, k) => {
      if (k === 19) gate.cool();
      // At call 24 the conversation is not an append: the gate is told
      // the previous call had one more message than it did.
      if (k === 24 && gate.inputs > 0) {
        dropped = gate.inputs;
        gate.inputs += 1;
      }
    },
    each: ({ k, decision, seed }) => {
      if ([0, 9, 14, 19].includes(k) || (k === 24 && dropped !== null)) {
        assert.deepEqual([decision.sent, decision.reason], ['apply', 'cold'], `seed ${seed} call ${k}`);
        cold.add(k);
      }
    },
  });
  assert.deepEqual([...cold].sort((a, b) => a - b), [0, 9, 14, 19, 24], JSON.stringify(counts));
});

test('budget: a hold past the share of a small context window applies; a long horizon pays', { skip }, async () => {
  const small = { ...SONNET, contextWindow: 6_000 };
  const budget = await run('2.4.3', 20, { model: () => small, each: () => {} });
  assert.ok(budget.budget > 0, JSON.stringify(budget));
  const free = await run('2.4.3', 20, { each: () => {} });
  const long = await run('2.4.3', 20, { settings: { enabled: true, horizon: 1e6 }, each: () => {} });
  assert.ok(long.pays > free.pays && long.waits < free.waits, `${JSON.stringify(long)} against ${JSON.stringify(free)}`);
  // A horizon of no calls waits while it can.
  const none = await run('2.4.3', 20, { settings: { enabled: true, horizon: 0 }, each: () => {} });
  assert.ok(none.waits >= free.waits, `${JSON.stringify(none)} against ${JSON.stringify(free)}`);
});

test('settings: a mistake is named with where it is; the gate counts what it did', { skip }, () => {
  for (const [settings, says] of [
    [{ enabled: true, horizon: -1 }, "condenseNative.gate.horizon must be 'auto' or a finite number of calls >= 0"],
    [{ enabled: 'yes' }, 'condenseNative.gate.enabled must be a boolean'],
    [{ enabled: true, budgett: 0.5 }, 'condenseNative.gate.budgett is not a gate setting (enabled, horizon, budget, keepReasoning)'],
    [{ enabled: true, keepReasoning: 'no' }, 'condenseNative.gate.keepReasoning must be a boolean'],
  ]) {
    assert.throws(() => new PiGate(native, settings), (err) => err.code === 'ERR_CONDENSE_INVALID_ARGUMENT' && err.message === says, JSON.stringify(settings));
  }
  const gate = new PiGate(native, { enabled: true, horizon: 12, budget: 0.5 });
  assert.equal(gate.settingsText, 'horizon 12, budget 0.5');
  assert.equal(new PiGate(native, { enabled: true, keepReasoning: false }).settingsText, 'horizon auto, budget 0.8, reasoning not kept');
  assert.deepEqual(gate.totals(), { applies: 0, holds: 0, cold: 0, same: 0, budget: 0, pays: 0, waits: 0, deferredUsd: 0, extraReadUsd: 0 });
});
