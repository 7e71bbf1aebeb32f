'use strict';
// pi session files for the tune test (issue 23): long enough that the
// configurations of the tune's grid differ in cost. Built on the probe
// builder (probe-sessions.js) so the request times and the entries in force
// at each call are set on purpose. Each user turn has several model calls,
// each thinking, reading files of several KB, and some running a bash
// command with long arguments that fails (error purge), one calling
// context_tree_query (recovery grace); a 2.4.3 flush mid-turn and at the
// turn's end summarizes the successful calls (summary, index, frontier with
// its thinking boundary, stats: stubs, thinking strip), and the end-of-turn
// flush writes a chain entry for the finished turn (chain compression).
// Seeded: every size and gap follows `seed`.

const { SessionBuilder, thinkingBoundary } = require('./probe-sessions.js');
const { rng } = require('./session-gen.js');

const WORDS = ['ledger', 'refund', 'report', 'month', 'total', 'entry', 'amount', 'parse', 'row', 'check', 'sum', 'the', 'a', 'of', 'in', 'and', 'which', 'when', 'this', 'value'];

function prose(r, chars) {
  const out = [];
  let n = 0;
  while (n < chars) {
    const w = r.pick(WORDS) + (r.chance(0.09) ? '.\n' : ' ');
    out.push(w);
    n += w.length;
  }
  return out.join('').slice(0, chars);
}

function source(r, chars) {
  const lines = [];
  let n = 0;
  for (let i = 1; n < chars; i++) {
    const line = `${String(i).padStart(4)}  ${i % 6 === 1 ? `export function step${r.int(1000)}(row: Row) {` : `  // ${prose(r, 40 + r.int(30))}`}\n`;
    lines.push(line);
    n += line.length;
  }
  return lines.join('').slice(0, chars);
}

class TuneSessionBuilder extends SessionBuilder {
  /** One model call with any tool calls: `calls` [{ name, arguments }]. */
  call(id, { thinking = null, text = null, calls = [], gap = 15_000, answerMs = 4_000 } = {}) {
    const start = this.clock + gap;
    const content = [];
    if (thinking !== null) content.push({ type: 'thinking', thinking, thinkingSignature: `sig-${id}-${'x'.repeat(40)}` });
    if (text !== null) content.push({ type: 'text', text });
    const blocks = calls.map((c, i) => ({ type: 'toolCall', id: `${id}-c${i}`, name: c.name, arguments: c.arguments }));
    content.push(...blocks);
    const message = {
      role: 'assistant',
      content,
      api: 'anthropic-messages',
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      usage: { input: 1, output: 300, cacheRead: 0, cacheWrite: 0, totalTokens: 301, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: blocks.length ? 'toolUse' : 'stop',
      timestamp: start,
    };
    this.assistantTimes.push(start);
    this.message(id, message, start + answerMs);
    return { start, blocks };
  }

  result(id, block, text, isError, { after = 300 } = {}) {
    const at = this.clock + after;
    this.message(id, { role: 'toolResult', toolCallId: block.id, toolName: block.name, content: [{ type: 'text', text }], isError, timestamp: at }, at);
    return at;
  }

  /**
   * A 2.4.3 flush that summarized `calls` ([{ block, text, at, turn,
   * start }]): summary, index, frontier (boundary over the assistants so
   * far with keepLastTurns 16), stats; `chain` adds a chain entry for
   * the turn (its toolRefs: the short ids of every flush since the last
   * chain entry).
   */
  summarize(id, calls, { previous, chain = null, after = 500 } = {}) {
    const at = this.clock + after;
    this.nextShort = this.nextShort ?? 1;
    const refs = calls.map((c) => ({ shortId: `t${this.nextShort++}`, toolCallId: c.block.id, resultTimestamp: c.at }));
    const last = calls.length ? calls[calls.length - 1] : this.lastSummarized;
    this.lastSummarized = last;
    this.turnRefs = [...(this.turnRefs ?? []), ...refs.map((x) => x.shortId)];
    const content = calls.map((c, i) => `${refs[i].shortId} ${c.block.name} ${JSON.stringify(c.block.arguments).slice(0, 60)}: ${c.text.slice(0, 80)}`).join('\n');
    if (calls.length) {
      this.add('custom_message', { customType: 'context-prune-summary', content, display: false, details: { toolCallRefs: refs, toolNames: [...new Set(calls.map((c) => c.block.name))], turnIndex: last.turn, timestamp: last.start } }, `${id}-sum`, at, true);
      const toolCalls = calls.map((c) => ({ toolCallId: c.block.id, toolName: c.block.name, args: c.block.arguments, resultText: c.text, isError: false, turnIndex: c.turn, timestamp: c.start, resultTimestamp: c.at }));
      this.add('custom', { customType: 'context-prune-index', data: { toolCalls } }, `${id}-idx`, at, true);
    }
    const boundary = thinkingBoundary(this.assistantTimes, 16, previous);
    const frontier = {
      lastAttemptedToolCallId: last.block.id,
      lastAttemptedToolName: last.block.name,
      lastAttemptedTurnIndex: last.turn,
      lastAttemptedTimestamp: last.start,
      attemptedBatchCount: 1,
      attemptedToolCallCount: calls.length,
      rawCharCount: calls.reduce((n, c) => n + c.text.length, 0),
      summaryCharCount: content.length,
      outcome: 'summarized',
      ...(boundary !== undefined ? { thinkingStripBoundaryTimestamp: boundary } : {}),
    };
    this.add('custom', { customType: 'context-prune-frontier', data: frontier }, `${id}-f`, at, true);
    this.add('custom', { customType: 'context-prune-stats', data: { totalInputTokens: 0, totalOutputTokens: 0, totalCost: 0, callCount: 1, chainsCompressed: chain ? 1 : 0, rangesSummarized: 1 } }, `${id}-s`, at, true);
    if (chain) {
      this.add('custom', { customType: 'context-prune-chain', data: { ...chain, toolRefs: this.turnRefs, compressedAt: at } }, `${id}-ch`, at, true);
      this.turnRefs = [];
    }
    return boundary;
  }
}

/**
 * A session of user turns of `calls[t]` model calls each (plus the final
 * answer), a flush every `flushEvery` calls and at each turn's end, seeded
 * by `seed`. In a turn of more than `longTurn` calls the mid-turn flushes
 * summarize nothing, so the thinking strip reaches thinking the provider
 * still bills (that of the open tool-use cycle). Returns the file's text.
 */
function tuneSession(seed, { calls: perTurn = [8, 6, 22, 5], flushEvery = 5, longTurn = 12 } = {}) {
  const turns = perTurn.length;
  const r = rng(seed);
  const s = new TuneSessionBuilder({ id: `tune-${seed}`, start: Date.UTC(2026, 7, 5, 9, 0, 0) + seed * 86_400_000 });
  let boundary;
  let n = 0;
  for (let t = 0; t < turns; t++) {
    const u = `u${t}`;
    // The user comes back after a while; once in a while after the cache expired.
    const userAt = s.clock + (t > 0 && r.chance(0.3) ? 360_000 : 20_000 + r.int(60_000));
    s.message(u, { role: 'user', content: `Turn ${t}: ${prose(r, 800 + r.int(1200))}`, timestamp: userAt }, userAt);
    let pending = [];
    const ids = [];
    const calls = perTurn[t];
    for (let k = 0; k < calls; k++) {
      const id = `a${n++}`;
      const plan = [];
      plan.push({ name: 'read', arguments: { path: `src/ledger/m${t}-${k}.ts` } });
      if (k % 3 === 1) plan.push({ name: 'bash', arguments: { command: `npm test -- --grep '${prose(r, r.pick([300, 900, 2600]))}'` }, fails: true });
      if (k === 2 && t < turns - 1) plan.push({ name: 'context_tree_query', arguments: { query: `where is ${prose(r, 40)}` } });
      const { start, blocks } = s.call(id, { thinking: prose(r, 600 + r.int(2400)), text: r.chance(0.3) ? prose(r, 200) : null, calls: plan, gap: 8_000 + r.int(25_000) });
      blocks.forEach((block, i) => {
        const fails = plan[i].fails === true;
        const text = fails ? `Error: exit code 1\n${prose(r, 200 + r.int(300))}` : block.name === 'read' ? source(r, 2500 + r.int(5000)) : prose(r, 1500 + r.int(1500));
        const at = s.result(`${id}-r${i}`, block, text, fails);
        ids.push(block.id);
        if (!fails) pending.push({ block, text, at, turn: n - 1, start });
      });
      if ((k + 1) % flushEvery === 0 && pending.length > 0) {
        // In a long turn the mid-turn flushes only move the frontier: no
        // summary message closes the open cycle, whose thinking the
        // provider bills until the strip reaches it.
        const summarized = calls > longTurn ? [] : pending;
        boundary = s.summarize(`fl${t}m${k}`, summarized, { previous: boundary });
        if (summarized.length) pending = [];
      }
    }
    const fin = s.call(`a${n++}`, { thinking: prose(r, 800 + r.int(1500)), text: `Done with turn ${t}. ${prose(r, 400 + r.int(800))}`, gap: 10_000 + r.int(20_000) });
    const userTimestamp = s.entries.get(u).message.timestamp;
    boundary = s.summarize(`fl${t}e`, pending, {
      previous: boundary,
      chain: { blockId: `b${t}`, startUserTimestamp: userTimestamp, droppedToolCallIds: ids, finalAssistantTimestamp: fin.start },
    });
  }
  return s.text();
}

module.exports = { tuneSession, TuneSessionBuilder };
