#!/usr/bin/env node
'use strict';
// Converts ../shared/corpus/*.json (messages + a pi-condense state) into pi
// session files for benchmarks: one `message` entry per message, and at
// each per-batch summary the entries pi-condense writes at a flush
// (dedup aliases, the summary custom_message, its context-prune-index
// entry with the full records, a frontier and a stats entry), chain entries
// after the flush that follows their final answer. Entries are written the
// way pi writes them (JSON.stringify of objects in pi's key order, parent
// links by id); their times are the messages' own times. Each frontier
// entry holds the thinking boundary pi-condense 2.4.3 computes at that
// flush (../shared/SPEC.md 6: its thinkingStrip.keepLastTurns, default 16,
// over the assistant messages written so far, never less than before), so
// a replay of the file sees what a recorded session would.
//
//   node scripts/corpus-to-session.js [outDir] [name...]
//
// Default outDir: .tmp/sessions (git-ignored; never commit the output).

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');

/** SPEC 6's computeThinkingBoundary (src/frontier.rs): undefined for none. */
function computeThinkingBoundary(timestamps, keepLastTurns, prev) {
  const k = Math.max(1, keepLastTurns);
  const n = timestamps.length;
  if (n <= k) return prev;
  const candidate = timestamps[n - k];
  return prev === undefined ? candidate : Math.max(prev, candidate);
}
const CORPUS = path.join(ROOT, '..', 'shared', 'corpus');

function convert(corpus) {
  const { messages, state } = corpus;
  const lines = [];
  let parentId = null;
  let n = 0;
  const iso = (ms) => new Date(ms).toISOString();
  const push = (entry) => {
    lines.push(JSON.stringify(entry));
  };
  const nextId = () => (n++).toString(16).padStart(8, '0');
  const entry = (type, fields, time, tail) => {
    const id = nextId();
    const e = tail ? { type, ...fields, id, parentId, timestamp: iso(time) } : { type, id, parentId, timestamp: iso(time), ...fields };
    push(e);
    parentId = id;
  };
  const custom = (customType, data, time) => entry('custom', { customType, data }, time, true);
  const first = messages[0] ? messages[0].timestamp : 0;
  push({ type: 'session', version: 3, id: 'corpus', timestamp: iso(first), cwd: '/app' });
  entry('model_change', { provider: 'anthropic', modelId: 'claude' }, first);

  const results = new Map();
  let turn = 0;
  const turnOf = new Map();
  for (const m of messages) {
    if (m.role === 'assistant') {
      for (const b of m.content || []) if (b.type === 'toolCall') turnOf.set(b.id, { turn, timestamp: m.timestamp });
      turn++;
    }
    if (m.role === 'toolResult') results.set(m.toolCallId, m);
  }
  // The thinking strip of the corpus's config (2.4.3's defaults when absent).
  const strip = { enabled: true, keepLastTurns: 16, ...((corpus.config && corpus.config.thinkingStrip) || {}) };
  const assistantTimes = [];
  let boundary;
  const aliasWritten = new Set();
  const chains = [...(state.chains || [])];
  let lastAssistant = 0;
  for (const m of messages) {
    if (m.role === 'custom' && m.customType === 'context-prune-summary') {
      const refs = (m.details && m.details.toolCallRefs) || [];
      const t = m.timestamp;
      for (const r of refs) {
        const original = state.dedupAliases[r.toolCallId];
        if (original !== undefined && !aliasWritten.has(r.toolCallId)) {
          aliasWritten.add(r.toolCallId);
          custom('context-prune-dedup-alias', { newToolCallId: r.toolCallId, originalToolCallId: original }, t);
        }
      }
      entry('custom_message', { customType: m.customType, content: m.content, display: m.display, details: m.details }, t, true);
      const toolCalls = [];
      for (const r of refs) {
        const rec = state.records[r.toolCallId];
        if (!rec) continue;
        const res = results.get(r.toolCallId);
        const text = res ? (res.content || []).filter((b) => b.type === 'text').map((b) => b.text).join('\n') : '';
        const where = turnOf.get(r.toolCallId) || { turn: 0, timestamp: t };
        const full = { toolCallId: r.toolCallId, toolName: rec.toolName, args: rec.args, resultText: rec.spillPath ? '' : text, isError: !!(res && res.isError), turnIndex: where.turn, timestamp: where.timestamp };
        if (rec.spillPath !== undefined) Object.assign(full, { spillPath: rec.spillPath, spillBytes: rec.spillBytes, resultPreview: rec.resultPreview, contentHash: 'corpus' });
        toolCalls.push(full);
      }
      if (toolCalls.length) custom('context-prune-index', { toolCalls }, t);
      const last = refs[refs.length - 1];
      // A disabled strip carries the previous value over.
      if (strip.enabled) boundary = computeThinkingBoundary(assistantTimes, strip.keepLastTurns ?? 16, boundary);
      custom('context-prune-frontier', {
        lastAttemptedToolCallId: last ? last.toolCallId : 'none',
        lastAttemptedToolName: last && state.records[last.toolCallId] ? state.records[last.toolCallId].toolName : 'unknown',
        lastAttemptedTurnIndex: turn,
        lastAttemptedTimestamp: lastAssistant,
        attemptedBatchCount: 1,
        attemptedToolCallCount: refs.length,
        rawCharCount: 0,
        summaryCharCount: typeof m.content === 'string' ? m.content.length : 0,
        outcome: 'summarized',
        ...(boundary !== undefined ? { thinkingStripBoundaryTimestamp: boundary } : {}),
      }, t);
      custom('context-prune-stats', { totalInputTokens: 0, totalOutputTokens: 0, totalCost: 0, callCount: 1, chainsCompressed: 0, rangesSummarized: 0 }, t);
      while (chains.length && chains[0].finalAssistantTimestamp !== null && chains[0].finalAssistantTimestamp < t) {
        custom('context-prune-chain', chains.shift(), t);
      }
      continue;
    }
    if (m.role === 'assistant') {
      lastAssistant = m.timestamp;
      if (typeof m.timestamp === 'number') assistantTimes.push(m.timestamp);
    }
    entry('message', { message: m }, m.timestamp + 1);
  }
  for (const c of chains) custom('context-prune-chain', c, lastAssistant + 2);
  for (const [dup, original] of Object.entries(state.dedupAliases)) {
    if (!aliasWritten.has(dup)) custom('context-prune-dedup-alias', { newToolCallId: dup, originalToolCallId: original }, lastAssistant + 2);
  }
  return `${lines.join('\n')}\n`;
}

function main() {
  const outDir = path.resolve(process.argv[2] || path.join(ROOT, '.tmp', 'sessions'));
  const names = process.argv.slice(3);
  if (!fs.existsSync(CORPUS)) {
    console.error(`corpus-to-session: ${CORPUS} is absent`);
    process.exit(1);
  }
  fs.mkdirSync(outDir, { recursive: true });
  const files = names.length ? names.map((n) => `${n}.json`) : fs.readdirSync(CORPUS).filter((f) => f.endsWith('.json'));
  for (const f of files) {
    const corpus = JSON.parse(fs.readFileSync(path.join(CORPUS, f), 'utf8'));
    const out = path.join(outDir, f.replace(/\.json$/, '.jsonl'));
    fs.writeFileSync(out, convert(corpus));
    console.log(`${out}: ${fs.statSync(out).size} bytes`);
  }
}

module.exports = { convert, computeThinkingBoundary };
if (require.main === module) main();
