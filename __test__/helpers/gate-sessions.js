'use strict';
// Session files for the live-against-replay gate test (issue 45): turns on
// Claude Opus 5 (whose requests pi's cache warmer re-sends) with one turn
// on Claude Sonnet 4.5 (budget thinking: never warmed), tools that run for
// minutes (warms while the agent runs), users who come back after the
// cache expired, 2.4.3 flushes that summarize and compress chains, and
// usage recorded as a provider would: each call's prompt its context's
// characters over a tokens-per-character of its own, read from the cache
// up to the previous call and written past it. Seeded.

const { TuneSessionBuilder } = require('./tune-sessions.js');
const { rng } = require('./session-gen.js');
const { fileText } = require('./probe-sessions.js');

const WORDS = ['ledger', 'refund', 'report', 'month', 'total', 'entry', 'amount', 'parse', 'row', 'check', 'sum', 'the', 'a', 'of', 'in', 'and'];
const prose = (r, chars) => {
  let out = '';
  while (out.length < chars) out += r.pick(WORDS) + (r.chance(0.1) ? '.\n' : ' ');
  return out.slice(0, chars);
};

// pi-ai's models with `compat.supportsMidConvoEffort` (its catalog).
const EFFORT_MODELS = new Set(['claude-opus-5', 'claude-opus-5-5', 'claude-fable-5-1', 'claude-fable-5-2', 'claude-sonnet-5-5', 'claude-haiku-5-5']);

class GateSessionBuilder extends TuneSessionBuilder {
  constructor(options) {
    super(options);
    this.model = 'claude-opus-5';
    // The characters of the context so far (the system prompt's and every
    // message's), and the previous call's prompt tokens.
    this.contextChars = JSON.stringify(this.entries.get('sys').message).length;
    this.previousPrompt = 0;
  }

  message(id, message, at) {
    super.message(id, message, at);
    this.contextChars += JSON.stringify(message).length;
  }

  switchModel(model, { after = 2_000 } = {}) {
    this.model = model;
    this.add('model_change', { provider: 'anthropic', modelId: model }, `mc-${this.clock}`, this.clock + after);
    this.previousPrompt = 0;
  }

  call(id, options) {
    const out = super.call(id, options);
    const m = this.entries.get(id).message;
    m.model = this.model;
    // pi-ai records the effort an effort-managed model answered at.
    if (EFFORT_MODELS.has(this.model)) m.providerThinkingLevel = 'high';
    // What the provider would have counted of the request: about 3.4
    // characters a token, give or take 3%.
    const prompt = Math.round((this.contextChars / 3.4) * (0.97 + 0.06 * this.r.next()));
    const read = Math.min(this.previousPrompt, prompt);
    m.usage = { input: 3, output: 250, cacheRead: read, cacheWrite: prompt - read - 3, totalTokens: prompt + 250, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
    this.previousPrompt = prompt;
    // The call's entry is the last line: written again with its model and
    // usage.
    this.lines[this.lines.length - 1] = JSON.stringify(this.entries.get(id));
    return out;
  }
}

/**
 * A session of `turns` user turns, seeded by `seed`: the third on Claude
 * Sonnet 4.5, a user who comes back after `pause` ms before the fourth, and
 * in the last a tool that runs `longTool` ms (while the context is large
 * enough, pruned too, that pi's warmer pays).
 */
function gateSession(seed, { turns = 5, calls = 7, longTool = 400_000, pause = 420_000 } = {}) {
  const r = rng(seed);
  const s = new GateSessionBuilder({ id: `gate-${seed}`, start: Date.UTC(2026, 8, 1, 9, 0, 0) + seed * 86_400_000 });
  s.r = r;
  s.switchModel('claude-opus-5', { after: 0 });
  let boundary;
  let n = 0;
  for (let t = 0; t < turns; t++) {
    if (t === 2) s.switchModel('claude-sonnet-4-5');
    if (t === 3) s.switchModel('claude-opus-5');
    const u = `u${t}`;
    const userAt = s.clock + (t === 3 ? pause : 20_000 + r.int(40_000));
    s.message(u, { role: 'user', content: `Turn ${t}: ${prose(r, 600 + r.int(900))}`, timestamp: userAt }, userAt);
    let pending = [];
    const ids = [];
    for (let k = 0; k < calls; k++) {
      const id = `a${n++}`;
      const plan = [{ name: 'read', arguments: { path: `src/m${t}-${k}.ts` } }];
      if (k % 3 === 2) plan.push({ name: 'bash', arguments: { command: `npm test -- ${prose(r, 60)}` } });
      const { start, blocks } = s.call(id, { thinking: prose(r, 500 + r.int(2000)), calls: plan, gap: 3_000 + r.int(9_000) });
      blocks.forEach((block, i) => {
        const long = t === turns - 1 && k === 2 && i === 0;
        const text = block.name === 'read' ? fileText(seed * 100 + n, 6000 + r.int(16000)) : prose(r, 800 + r.int(1200));
        const at = s.result(`${id}-r${i}`, block, text, false, { after: long ? longTool : 300 });
        ids.push(block.id);
        pending.push({ block, text, at, turn: n - 1, start });
      });
      if ((k + 1) % 4 === 0) {
        boundary = s.summarize(`fl${t}m${k}`, pending, { previous: boundary });
        pending = [];
      }
    }
    const fin = s.call(`a${n++}`, { thinking: prose(r, 600 + r.int(1000)), text: `Done with turn ${t}. ${prose(r, 300 + r.int(600))}`, gap: 4_000 + r.int(8_000) });
    const userTimestamp = s.entries.get(u).message.timestamp;
    boundary = s.summarize(`fl${t}e`, pending, {
      previous: boundary,
      chain: { blockId: `b${t}`, startUserTimestamp: userTimestamp, droppedToolCallIds: ids, finalAssistantTimestamp: fin.start },
    });
  }
  return s.text();
}

/**
 * A session on one `model` for preserved thinking (issue 49): `turns` user
 * turns of `calls` calls, each answer thinking and reading a file, a
 * 2.4.3 flush after every third call that stubs the results so far, so a
 * stub precedes answers whose thinking was produced before it.
 */
function thinkingSession(seed, model, { turns = 3, calls = 6 } = {}) {
  const r = rng(seed);
  const s = new GateSessionBuilder({ id: `thinking-${seed}`, start: Date.UTC(2026, 9, 1, 9, 0, 0) + seed * 86_400_000 });
  s.r = r;
  s.switchModel(model, { after: 0 });
  let boundary;
  let n = 0;
  for (let t = 0; t < turns; t++) {
    const u = `u${t}`;
    const userAt = s.clock + 20_000 + r.int(20_000);
    s.message(u, { role: 'user', content: `Turn ${t}: ${prose(r, 500 + r.int(500))}`, timestamp: userAt }, userAt);
    let pending = [];
    const ids = [];
    for (let k = 0; k < calls; k++) {
      const id = `a${n++}`;
      const { start, blocks } = s.call(id, { thinking: prose(r, 800 + r.int(1500)), calls: [{ name: 'read', arguments: { path: `src/t${t}-${k}.ts` } }], gap: 3_000 + r.int(6_000) });
      blocks.forEach((block, i) => {
        const text = fileText(seed * 1000 + n, 3000 + r.int(6000));
        const at = s.result(`${id}-r${i}`, block, text, false);
        ids.push(block.id);
        pending.push({ block, text, at, turn: n - 1, start });
      });
      if ((k + 1) % 3 === 0) {
        boundary = s.summarize(`fl${t}m${k}`, pending, { previous: boundary });
        pending = [];
      }
    }
    const fin = s.call(`a${n++}`, { thinking: prose(r, 600 + r.int(800)), text: `Done with turn ${t}.`, gap: 4_000 });
    boundary = s.summarize(`fl${t}e`, pending, {
      previous: boundary,
      chain: { blockId: `b${t}`, startUserTimestamp: s.entries.get(u).message.timestamp, droppedToolCallIds: ids, finalAssistantTimestamp: fin.start },
    });
  }
  return s.text();
}

module.exports = { gateSession, thinkingSession };
