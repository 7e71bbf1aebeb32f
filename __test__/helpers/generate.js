'use strict';

// Generated pi sessions for property tests: messages in pi's shapes with a
// state and config derived from each (summarized ids, some through dedup
// aliases or spilled to files; short refs and ref aliases; chains that drop
// ids, protect outputs and point at each other with {bN}; per-batch
// summaries; errored calls with big arguments; thinking blocks; a boundary or
// the fallback), and their bytes in several JSON spellings.

const assert = require('node:assert/strict');
const fc = require('fast-check');

const TOOLS = ['read', 'bash', 'edit', 'write', 'grep', 'Task', 'context_tree_query'];
const PATHS = ['src/a.ts', 'src/lib/b.rs', 'docs/notes.md', 'docs\\win\\x.md', 'a/b/c/d.ts', 'x{a,b}.ts', 'src/\u{1F600}.ts', 'README.md', ''];
const GLOBS = ['**/*.md', 'src/?.rs', 'src/**', '*.ts', 'x{a,b}.ts', '**/*\u{1F600}.ts', '***', 'a/**/d.ts', ''];
const WORDS = [
  'Read the file',
  'running the tests',
  'caf\u00e9',
  '\u{1F600} emoji',
  'line\nbreak',
  'quote " and \\ backslash',
  'tab\tand\u0001control',
  '\u2028',
  'see {b1} and {b2}',
  '{b01} $& $1 {b3}',
  '</compressed-chain>',
];

// ---------------------------------------------------------------------------
// Generator (fc.gen: imperative, still shrinkable)

function text(g, max = 3) {
  if (g(fc.nat, 9) === 0) return g(fc.string, { unit: 'binary', maxLength: 12 }); // lone surrogates too
  const n = g(fc.integer, { min: 0, max });
  let s = '';
  for (let i = 0; i < n; i++) s += g(fc.constantFrom, ...WORDS);
  return s;
}

const pct = (g, p) => g(fc.integer, { min: 0, max: 99 }) < p;
const pick = (g, xs) => g(fc.constantFrom, ...xs);
const subset = (g, xs) => xs.filter(() => g(fc.boolean));

function session(g) {
  let ts = 1_760_000_000_000 + g(fc.nat, 1000);
  const tick = () => (ts += pick(g, [0, 1, 1, 2, 7, 1000]));
  const messages = [];
  const calls = [];
  const turns = [];
  const batches = [];
  let callN = 0;
  const nTurns = g(fc.integer, { min: 1, max: 6 });
  for (let t = 0; t < nTurns; t++) {
    const turn = { userTs: tick(), calls: [], finalTs: null };
    turns.push(turn);
    messages.push({ role: 'user', content: pct(g, 50) ? text(g) : [{ type: 'text', text: text(g) }], timestamp: turn.userTs });
    if (pct(g, 8)) {
      // a synthetic block from an earlier render
      messages.push({
        role: 'user',
        content: [{ type: 'text', text: `<compressed-chain id="b${g(fc.nat, 4)}" tools="t1">\nold\n</compressed-chain>` }],
        timestamp: tick(),
      });
    }
    const nBatches = g(fc.integer, { min: 0, max: 3 });
    for (let b = 0; b < nBatches; b++) {
      const batch = [];
      const content = [];
      if (pct(g, 60)) content.push({ type: 'thinking', thinking: text(g), thinkingSignature: 'c2ln' });
      if (pct(g, 30)) content.push({ type: 'text', text: text(g) });
      const nCalls = g(fc.integer, { min: 1, max: 3 });
      for (let c = 0; c < nCalls; c++) {
        const reuse = calls.length > 0 && pct(g, 5);
        const id = reuse ? calls[g(fc.nat, calls.length - 1)].id : `toolu_${callN++}`;
        const name = pick(g, TOOLS);
        const args = {};
        if (pct(g, 70)) args.path = pick(g, PATHS);
        if (pct(g, 40)) args.content = pick(g, ['x', '\u00e9', '\u{1F600}', '"', '\n']).repeat(g(fc.integer, { min: 0, max: 1500 }));
        if (pct(g, 30)) args.command = text(g);
        const call = { id, name, args, turn, errored: pct(g, 25) };
        calls.push(call);
        batch.push(call);
        turn.calls.push(call);
        content.push({ type: 'toolCall', id, name, arguments: args });
      }
      messages.push({
        role: 'assistant',
        content,
        api: 'anthropic-messages',
        provider: 'anthropic',
        model: 'claude-sonnet-4-5',
        usage: { input: g(fc.nat, 90000), output: g(fc.nat, 4000), cost: { total: 0.10121775 } },
        stopReason: 'toolUse',
        timestamp: tick(),
      });
      for (const call of batch) {
        const result = {
          role: 'toolResult',
          toolCallId: call.id,
          toolName: call.name,
          content: [{ type: 'text', text: text(g) }],
          isError: call.errored,
          timestamp: tick(),
        };
        if (pct(g, 10)) result.content.push({ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' });
        if (pct(g, 10)) result.details = { diff: text(g) };
        messages.push(result);
      }
      batches.push(batch);
      if (pct(g, 25)) {
        messages.push({
          role: 'custom',
          customType: 'context-prune-summary',
          content: text(g),
          display: false,
          details: { toolCallRefs: batch.map((c, i) => ({ toolCallId: c.id, shortId: `t${i}` })) },
          timestamp: tick(),
        });
      }
    }
    if (pct(g, 85)) {
      turn.finalTs = tick();
      const content = [];
      if (pct(g, 70)) content.push({ type: 'thinking', thinking: text(g), ...(pct(g, 20) ? { redacted: true } : {}) });
      content.push({ type: 'text', text: text(g) });
      messages.push({ role: 'assistant', content, api: 'anthropic-messages', stopReason: 'stop', timestamp: turn.finalTs });
    }
  }
  return { messages, calls, turns, batches, lastTs: ts };
}

function deriveState(g, s) {
  const state = { records: {}, dedupAliases: {}, shortRefs: {}, refAliases: {}, chains: [], summaryBodies: [] };
  let ref = 0;
  for (const call of s.calls) {
    if (!pct(g, 50)) continue;
    const record = { toolName: pct(g, 90) ? call.name : pick(g, TOOLS), args: pct(g, 90) ? call.args : { path: pick(g, PATHS) } };
    if (pct(g, 20)) {
      record.spillPath = pct(g, 90) ? `/tmp/spill/${call.id}.txt` : '';
      if (pct(g, 80)) record.spillBytes = pct(g, 80) ? g(fc.nat, 1e7) : pick(g, [null, 0, 1e21, 1.5]);
      if (pct(g, 80)) record.resultPreview = text(g);
    }
    state.records[call.id] = record;
    if (pct(g, 80)) {
      const t = `t${ref++}`;
      state.shortRefs[call.id] = t;
      if (pct(g, 60)) state.refAliases[t] = call.id;
    }
  }
  const summarized = Object.keys(state.records);
  for (const call of s.calls) {
    if (summarized.length > 0 && !state.records[call.id] && pct(g, 15)) {
      const original = pct(g, 85) ? pick(g, summarized) : pick(g, ['', 'gone_1']);
      state.dedupAliases[call.id] = original;
      if (state.shortRefs[original] && pct(g, 70)) state.shortRefs[call.id] = state.shortRefs[original];
    }
  }
  for (const batch of s.batches) {
    if (pct(g, 40)) state.summaryBodies.push({ toolCallIds: batch.map((c) => c.id), text: text(g) });
  }
  let block = 1;
  for (const turn of s.turns) {
    if (!pct(g, 35)) continue;
    const dropped = subset(g, turn.calls).map((c) => c.id);
    if (pct(g, 30)) dropped.push(`gone_${g(fc.nat, 3)}`);
    const entry = {
      blockId: `b${block++}`,
      startUserTimestamp: turn.userTs,
      droppedToolCallIds: dropped,
      finalAssistantTimestamp: turn.finalTs !== null && pct(g, 80) ? turn.finalTs : null,
      toolRefs: dropped.map((id) => state.shortRefs[id] || id),
      compressedAt: s.lastTs + g(fc.nat, 100),
    };
    const keep = turn.calls.filter((c) => !dropped.includes(c.id));
    if (keep.length > 0 && pct(g, 50)) entry.protectedToolCallIds = subset(g, keep).map((c) => c.id);
    if (pct(g, 60)) entry.rangeSummaryText = pct(g, 10) ? pick(g, ['', null]) : `${text(g, 2)} {b${g(fc.integer, { min: 1, max: 4 })}} ${text(g, 1)}`;
    state.chains.push(entry);
    if (pct(g, 8)) state.chains.push({ ...entry, blockId: `b${block++}`, rangeSummaryText: 'replacement' });
  }
  if (pct(g, 10)) state.chains.reverse();
  return state;
}

function deriveConfig(g) {
  const config = {};
  if (pct(g, 75)) config.chainCompression = { enabled: pct(g, 85), stripFinalAssistantThinking: g(fc.boolean) };
  if (pct(g, 75)) {
    config.errorPurge = { enabled: pct(g, 85), cooldownTurns: g(fc.integer, { min: 0, max: 3 }), minArgChars: pick(g, [0, 10, 100, 500, 1000]) };
  }
  if (pct(g, 75)) config.thinkingStrip = { enabled: pct(g, 85), keepLastTurns: g(fc.integer, { min: 1, max: 5 }) };
  if (pct(g, 60)) config.protection = { protectedTools: subset(g, TOOLS), protectedPaths: subset(g, GLOBS) };
  config.recoveryGraceTurns = g(fc.integer, { min: 0, max: 3 });
  return config;
}

function boundaryFor(g, s) {
  if (pct(g, 40)) return null;
  const stamps = s.messages.filter((m) => m.role === 'assistant').map((m) => m.timestamp);
  if (stamps.length > 0 && pct(g, 80)) return pick(g, stamps) + pick(g, [0, 0, 1, -1]);
  return pick(g, [0, s.lastTs + 1, Infinity, -Infinity]);
}

function encode(g, messages) {
  // Mostly JSON.stringify's own text; sometimes indented (sizes must still be
  // JSON.stringify's).
  return Buffer.from(pct(g, 15) ? JSON.stringify(messages, null, pick(g, [1, '\t'])) : JSON.stringify(messages));
}

const caseArb = fc.gen().map((g) => {
  const s = session(g);
  const state = deriveState(g, s);
  const config = deriveConfig(g);
  const boundary = boundaryFor(g, s);
  const bytes = encode(g, s.messages);
  return { messages: s.messages, state, config, boundary, bytes };
});


module.exports = { caseArb, session, deriveState, deriveConfig, boundaryFor, encode };
