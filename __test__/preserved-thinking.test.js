'use strict';

// Preserved thinking (issue 49): on a model whose API runs the prefix
// check (Claude Opus 5.5 here), a thinking block sent back is dropped when
// anything before it differs from the request that produced it, and every
// later thinking block with it; dropped blocks are not billed. The rule is
// restated here on the messages the replay says it sent (its `contexts`),
// independently of its hashes: on a generated session where pi-condense's
// flush stubs results that precede answers with thinking, the replay drops
// exactly those blocks under every policy, prices what is left (the same
// session on Claude Opus 5, which runs no check and has the same sizes,
// bills those tokens), and on Opus 5 drops nothing.

const { test } = require('node:test');
const assert = require('node:assert/strict');

const { replay, backend } = require('..');
const { thinkingSession } = require('./helpers/gate-sessions.js');

const skip = backend !== 'native' && 'the replay needs the native binding';

// What pi-ai sends of an assistant message's thinking (its own model's,
// signed or not blank).
const thinkingBlocks = (m) => (Array.isArray(m.content) ? m.content.filter((b) => b.type === 'thinking' && (b.thinkingSignature || (b.thinking ?? '').trim())) : []);

/** Per call, the thinking blocks the rule drops from what a policy sent. */
function dropsByRule(p) {
  const sentAt = new Map(p.renders.map((x) => [x.timestamp, x.messages]));
  return p.renders.map((x) => {
    let broken = false;
    let dropped = 0;
    x.messages.forEach((m, i) => {
      if (m.role !== 'assistant') return;
      const blocks = thinkingBlocks(m).length;
      if (blocks === 0) return;
      // The request that produced the answer: what was sent before it.
      const produced = sentAt.get(m.timestamp);
      if (!broken && produced !== undefined && JSON.stringify(x.messages.slice(0, i)) !== JSON.stringify(produced)) broken = true;
      if (broken) dropped += blocks;
    });
    return dropped;
  });
}

test('preserved thinking: on Opus 5.5 a rewrite drops the thinking after it, exactly as the rule says, and what is dropped is not billed; on Opus 5 nothing is dropped', { skip }, () => {
  const options = { contexts: true, charsPerToken: 4 };
  const checked = replay(Buffer.from(thinkingSession(1, 'claude-opus-5-5')), options);
  const plain = replay(Buffer.from(thinkingSession(1, 'claude-opus-5')), options);
  let dropping = 0;
  for (const p of checked.policies) {
    const rule = dropsByRule(p);
    assert.deepEqual(p.renders.map((x) => x.thinkingDropped.blocks), rule, p.policy);
    assert.equal(p.thinkingDropped.blocks, rule.reduce((a, b) => a + b, 0), p.policy);
    assert.equal(p.thinkingDropped.calls, rule.filter((n) => n > 0).length, p.policy);
    if (p.policy === 'none') assert.equal(p.thinkingDropped.blocks, 0, 'no pruning rewrites nothing');
    else dropping += p.thinkingDropped.blocks;
    // The same calls on Opus 5 bill the dropped tokens besides the rest.
    const same = plain.policies.find((q) => q.policy === p.policy);
    p.renders.forEach((x, k) => {
      const billed = (y) => y.inputTokens + y.cacheReadTokens + y.cacheWriteTokens;
      assert.ok(Math.abs(billed(x) + x.thinkingDropped.tokens - billed(same.renders[k])) < 1e-6, `${p.policy} call ${k}`);
    });
    assert.deepEqual(same.thinkingDropped, { blocks: 0, tokens: 0, calls: 0 }, `${p.policy} on Opus 5`);
  }
  assert.ok(dropping > 0, 'the flush stubs drop thinking');
  assert.deepEqual(checked.models.map((m) => m.model), ['anthropic/claude-opus-5-5']);
});

test('the gate keeps reasoning by default: it holds where applying would drop thinking the hold keeps, unless the cache is cold', { skip }, () => {
  const text = Buffer.from(thinkingSession(1, 'claude-opus-5-5'));
  const kept = replay(text, { policies: ['config', 'config+gate'], gate: { enabled: true } });
  const let_go = replay(text, { policies: ['config+gate'], gate: { enabled: true, keepReasoning: false } });
  const by = (r, name) => r.policies.find((p) => p.policy === name);
  assert.ok(by(kept, 'config').thinkingDropped.blocks > 0);
  assert.deepEqual(by(kept, 'config+gate').thinkingDropped, { blocks: 0, tokens: 0, calls: 0 });
  assert.ok(by(let_go, 'config+gate').thinkingDropped.blocks > 0);
  assert.equal(by(let_go, 'config+gate').gate.keepReasoning, false);
  assert.equal('keepReasoning' in by(kept, 'config+gate').gate, false);
});
