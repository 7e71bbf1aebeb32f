'use strict';
// pi 1.6.0 session files for the cache probes of CACHE-MODEL.md section 4:
// the live measurements (Sonnet 4.5) that the replay's provider cache model
// must reproduce. A small builder writes the entries as pi writes them
// (header, `message` entries, `context_edit`, pi-condense's frontier and
// stats entries), with a clock, so each model call's request time and the
// entries in force for it (SESSIONS.md C.3) are set on purpose. Thinking is
// "stripped" at a chosen call by a `context_edit` of the assistant entry
// (SESSIONS.md A.7), so the `none` policy alone shows what a strip does to
// the bill. Texts are deterministic filler of exact lengths: with
// `charsPerToken` fixed by the test, every size is the builder's.

const T0 = Date.UTC(2026, 7, 5, 9, 0, 0);
const MODEL = { api: 'anthropic-messages', provider: 'anthropic', model: 'claude-sonnet-4-5' };
const iso = (ms) => new Date(ms).toISOString();

const WORDS = ['ledger', 'refund', 'report', 'month', 'total', 'entry', 'amount', 'parse', 'row', 'check', 'sum', 'the', 'a', 'of', 'in', 'and', 'which', 'when', 'this', 'value'];

/** Deterministic prose of exactly `chars` characters, varied by `seed`. */
function filler(seed, chars) {
  let x = (seed * 2654435761) >>> 0 || 1;
  const out = [];
  let n = 0;
  while (n < chars) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    const w = WORDS[x % WORDS.length] + (x % 11 === 0 ? '.\n' : ' ');
    out.push(w);
    n += w.length;
  }
  return out.join('').slice(0, chars);
}

/** A file as pi's `read` tool returns it: numbered lines, `chars` long. */
function fileText(seed, chars) {
  const lines = [];
  let n = 0;
  for (let i = 1; n < chars; i++) {
    const line = `${String(i).padStart(4)}  ${i % 7 === 1 ? `export function step${seed}_${i}(row: Row) {` : `  // ${filler(seed * 1000 + i, 48)}`}\n`;
    lines.push(line);
    n += line.length;
  }
  return lines.join('').slice(0, chars);
}

/** 2.4.3's `computeThinkingBoundary` (SPEC.md 6). */
function thinkingBoundary(timestamps, keepLastTurns, previous) {
  const k = Math.max(1, keepLastTurns);
  if (timestamps.length <= k) return previous;
  const candidate = timestamps[timestamps.length - k];
  return previous === undefined ? candidate : Math.max(previous, candidate);
}

/**
 * Writes one session. Times are ms on a clock that only moves forward:
 * an assistant's request starts `gap` ms after the previous event (its
 * message timestamp) and its entry is written `answerMs` later (C.1);
 * everything else is written `after` ms after the previous event.
 */
class SessionBuilder {
  constructor({ id = 'probe', start = T0, cwd = '/home/dev/ledgerline', system = filler(1, 1200) } = {}) {
    this.clock = start;
    this.parentId = null;
    this.entries = new Map();
    this.assistantTimes = [];
    this.lines = [JSON.stringify({ type: 'session', version: 3, id, timestamp: iso(start), cwd })];
    this.add('thinking_level_change', { thinkingLevel: 'medium' }, 'tl');
    this.add('model_change', { provider: MODEL.provider, modelId: MODEL.model }, 'mc');
    if (system !== null) {
      this.message('sys', { role: 'system', content: system, toolsAdded: [{ name: 'read' }, { name: 'bash' }, { name: 'edit' }], timestamp: this.clock });
    }
  }

  /** Appends an entry in pi's key order (custom entries: id fields last). */
  add(type, fields, id, at = this.clock, idsLast = false) {
    this.clock = Math.max(this.clock, at);
    const head = { type, id, parentId: this.parentId, timestamp: iso(this.clock) };
    const entry = idsLast ? { type, ...fields, id, parentId: this.parentId, timestamp: iso(this.clock) } : { ...head, ...fields };
    if (this.entries.has(id)) throw new Error(`duplicate entry id ${id}`);
    this.entries.set(id, entry);
    this.lines.push(JSON.stringify(entry));
    this.parentId = id;
    return id;
  }

  message(id, message, at) {
    return this.add('message', { message }, id, at);
  }

  user(id, text, { after = 10_000 } = {}) {
    const at = this.clock + after;
    return this.message(id, { role: 'user', content: text, timestamp: at }, at);
  }

  /**
   * One model call: `thinking` (text or null), `text`, `reads` (paths read
   * by tool calls, ids `<id>-c<i>`). Returns the tool call ids.
   */
  assistant(id, { thinking = null, text = null, reads = [], gap = 15_000, answerMs = 4_000, usage } = {}) {
    const start = this.clock + gap;
    const content = [];
    if (thinking !== null) content.push({ type: 'thinking', thinking, thinkingSignature: `sig-${id}-${'x'.repeat(40)}` });
    if (text !== null) content.push({ type: 'text', text });
    const calls = reads.map((p, i) => ({ type: 'toolCall', id: `${id}-c${i}`, name: 'read', arguments: { path: p } }));
    content.push(...calls);
    const message = {
      role: 'assistant',
      content,
      ...MODEL,
      usage: usage ?? { input: 1, output: 300, cacheRead: 0, cacheWrite: 0, totalTokens: 301, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
      stopReason: calls.length ? 'toolUse' : 'stop',
      timestamp: start,
    };
    this.assistantTimes.push(start);
    this.message(id, message, start + answerMs);
    return calls.map((c) => c.id);
  }

  toolResult(id, toolCallId, text, { after = 300 } = {}) {
    const at = this.clock + after;
    return this.message(id, { role: 'toolResult', toolCallId, toolName: 'read', content: [{ type: 'text', text }], isError: false, timestamp: at }, at);
  }

  /** A `context_edit` giving assistant `targetId` its content minus thinking. */
  stripThinking(id, targetId, { after = 200 } = {}) {
    const target = this.entries.get(targetId);
    const content = target.message.content.filter((b) => b.type !== 'thinking');
    return this.add('context_edit', { targetId, replacement: { content } }, id, this.clock + after);
  }

  /**
   * What a 2.4.3 flush at a turn's end writes when it summarizes nothing
   * but moves the frontier: the frontier with the boundary
   * `computeThinkingBoundary` gives over the assistants so far, then a
   * stats entry. Returns the boundary.
   */
  flush(id, { keepLastTurns = 16, lastToolCallId, previous, after = 200 } = {}) {
    const boundary = thinkingBoundary(this.assistantTimes, keepLastTurns, previous);
    const at = this.clock + after;
    const data = {
      lastAttemptedToolCallId: lastToolCallId,
      lastAttemptedToolName: 'read',
      lastAttemptedTurnIndex: this.assistantTimes.length - 1,
      lastAttemptedTimestamp: this.assistantTimes[this.assistantTimes.length - 1],
      attemptedBatchCount: 0,
      attemptedToolCallCount: 0,
      rawCharCount: 0,
      summaryCharCount: 0,
      outcome: 'summarized',
      ...(boundary !== undefined ? { thinkingStripBoundaryTimestamp: boundary } : {}),
    };
    this.add('custom', { customType: 'context-prune-frontier', data }, `${id}-f`, at, true);
    this.add('custom', { customType: 'context-prune-stats', data: { totalInputTokens: 0, totalOutputTokens: 0, totalCost: 0, callCount: 0, chainsCompressed: 0, rangesSummarized: 0 } }, `${id}-s`, at, true);
    return boundary;
  }

  text() {
    return `${this.lines.join('\n')}\n`;
  }
}

// The probe sizes follow the live probe (CACHE-MODEL.md 4): request 2
// ~5,000 tokens, a1's and a2's thinking ~3,150 tokens together, request
// 3's tail ~1,600 tokens; request 1 stays under Sonnet 4.5's 1,024-token
// minimum, so request 2 is the prime. At 4 chars a token.
const PROBE = {
  prompt: filler(2, 1600),
  thinking1: filler(3, 9800),
  thinking2: filler(4, 2400),
  result1: fileText(5, 6400),
  result2: fileText(6, 3600),
};

/**
 * The three-call probe: u1; a1 (thinking, read); r1; a2 (thinking, read);
 * r2; a3. Calls: 0 [u1], 1 [u1 a1 r1] (request 2), 2 [... a2 r2]
 * (request 3). `strip`: assistant ids whose thinking a context edit
 * strips just before request 3.
 */
function threeCallProbe({ strip = [] } = {}) {
  const s = new SessionBuilder({ id: `probe-3-${strip.join('-') || 'kept'}` });
  s.user('u1', PROBE.prompt);
  const [c1] = s.assistant('a1', { thinking: PROBE.thinking1, reads: ['src/report.ts'] });
  s.toolResult('r1', c1, PROBE.result1);
  const [c2] = s.assistant('a2', { thinking: PROBE.thinking2, reads: ['src/ledger.ts'], gap: 20_000 });
  s.toolResult('r2', c2, PROBE.result2);
  strip.forEach((target, i) => s.stripThinking(`e${i + 1}`, target));
  s.assistant('a3', { thinking: filler(7, 800), text: 'The refund rows are summed twice.', gap: 25_000 });
  return s.text();
}

/**
 * The moving gap: as the three-call probe, a1's thinking stripped before
 * request 3 (the gap), then a3 reads once more; `moveGap` strips a2's
 * thinking too before request 4.
 */
function movingGapProbe({ moveGap }) {
  const s = new SessionBuilder({ id: `probe-move-${moveGap}` });
  s.user('u1', PROBE.prompt);
  const [c1] = s.assistant('a1', { thinking: PROBE.thinking1, reads: ['src/report.ts'] });
  s.toolResult('r1', c1, PROBE.result1);
  const [c2] = s.assistant('a2', { thinking: PROBE.thinking2, reads: ['src/ledger.ts'], gap: 20_000 });
  s.toolResult('r2', c2, PROBE.result2);
  s.stripThinking('e1', 'a1');
  const [c3] = s.assistant('a3', { thinking: filler(8, 1600), reads: ['src/refund.ts'], gap: 25_000 });
  s.toolResult('r3', c3, fileText(9, 3000));
  if (moveGap) s.stripThinking('e2', 'a2');
  s.assistant('a4', { thinking: filler(10, 800), text: 'The refund rows are summed twice.', gap: 30_000 });
  return s.text();
}

/**
 * Closed-cycle thinking: u1; a1 (thinking, read); r1; a2 (thinking,
 * answer); u2 (a user text turn: the cycle closes); a3 (thinking, read);
 * r3; a4. `thinking: false` writes a1 and a2 without thinking; `stripAt`
 * (2 or 3) strips a1's and a2's thinking by context edits just before
 * that call's request.
 */
function closedCycleProbe({ thinking = true, stripAt = null } = {}) {
  const s = new SessionBuilder({ id: `probe-closed-${thinking}-${stripAt}` });
  s.user('u1', PROBE.prompt);
  const [c1] = s.assistant('a1', { thinking: thinking ? PROBE.thinking1 : null, reads: ['src/report.ts'] });
  s.toolResult('r1', c1, PROBE.result1);
  s.assistant('a2', { thinking: thinking ? PROBE.thinking2 : null, text: `Refunds are counted in two places. ${filler(11, 1200)}`, gap: 20_000 });
  s.user('u2', `Fix it, then check the totals module. ${filler(12, 400)}`, { after: 40_000 });
  if (stripAt === 2) ['a1', 'a2'].forEach((t, i) => s.stripThinking(`e${i + 1}`, t));
  const [c3] = s.assistant('a3', { thinking: filler(13, 2000), reads: ['src/totals.ts'], gap: 10_000 });
  s.toolResult('r3', c3, fileText(14, 4000));
  if (stripAt === 3) ['a1', 'a2'].forEach((t, i) => s.stripThinking(`e${i + 1}`, t));
  s.assistant('a4', { thinking: filler(15, 800), text: 'Fixed.', gap: 20_000 });
  return s.text();
}

/**
 * The A/B of CACHE-MODEL.md 4: one prompt, then 24 calls, each thinking
 * and reading a file of 11-15 KB that the next call sees (about 3,700
 * tokens a turn, as in the live A/B, whose bare run wrote 89,449). When
 * the 17th assistant turn has ended, a 2.4.3 flush (budget trigger, at
 * turn_end) writes a frontier: in force from the 18th request on (C.2,
 * C.3). Its boundary is `timestamps[n - K]` (SPEC.md 6): the second
 * assistant's time, so `timestamp < boundary` strips a1 alone.
 */
function fileReadSession({ calls = 24, keepLastTurns = 16, flushAfter = 17 } = {}) {
  const s = new SessionBuilder({ id: 'probe-ab-24' });
  s.user('u1', `Read the ledger modules one by one and find where refunds are counted twice. ${filler(20, 1400)}`);
  let boundary;
  for (let i = 1; i <= calls; i++) {
    const [c] = s.assistant(`a${i}`, { thinking: filler(100 + i, 1000 + ((i * 373) % 900)), text: i % 3 === 0 ? `Next: module ${i}.` : null, reads: [`src/ledger/module${i}.ts`], gap: 12_000 + ((i * 7919) % 20_000) });
    s.toolResult(`r${i}`, c, fileText(200 + i, 11_000 + ((i * 1237) % 4000)));
    if (i === flushAfter) boundary = s.flush(`fl${i}`, { keepLastTurns, lastToolCallId: c, previous: boundary });
  }
  return { text: s.text(), boundary, assistantTimes: s.assistantTimes };
}

module.exports = { SessionBuilder, threeCallProbe, movingGapProbe, closedCycleProbe, fileReadSession, thinkingBoundary, fileText };
