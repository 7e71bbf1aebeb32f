#!/usr/bin/env node
'use strict';
// Writes sample/session.jsonl: a pi session file made by pi's own
// SessionManager (the devDependency), with pi-condense's entries where
// pi-condense writes them (SESSIONS.md part C): at the message_end of an
// answer without tool calls, a flush appends dedup aliases, per batch the
// summary custom_message and its context-prune-index entry, a frontier and
// a stats entry, then chain entries and stats again, all before that
// answer's own line; at turn_end an eager spill appends an index entry for
// an oversized result. The session also holds a system prompt, a compaction,
// and a branch left with a branch_summary. Deterministic: pi's clock and id
// source are replaced by a fixed clock and counter before pi is loaded.
//
//   node scripts/make-sample.js [out.jsonl]

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { syncBuiltinESMExports } = require('node:module');

const ROOT = path.join(__dirname, '..');
const START = Date.UTC(2026, 4, 18, 9, 0, 0);

// A fixed clock (pi stamps entries with `new Date()`) and counter ids (pi
// draws entry ids from crypto.randomUUID).
let clock = START;
const RealDate = Date;
class SampleDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(clock);
    else super(...args);
  }
  static now() {
    return clock;
  }
}
globalThis.Date = SampleDate;
let uuids = 0;
crypto.randomUUID = () => {
  uuids += 1;
  const hex = crypto.createHash('sha256').update(`sample-${uuids}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
};
syncBuiltinESMExports();

const tick = (ms) => {
  clock += ms;
  return clock;
};

function lcg(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

async function main() {
  const out = path.resolve(process.argv[2] || path.join(ROOT, 'sample', 'session.jsonl'));
  const { importPi } = require('../__test__/helpers/pi-session.js');
  const pi = await importPi();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'make-sample-'));
  const sm = pi.SessionManager.create('/home/dev/ledgerline', dir, { id: 'sample-ledgerline-0001' });
  const rand = lcg(7);

  const FILES = ['src/ledger.ts', 'src/parse.ts', 'src/report.ts', 'test/ledger.test.ts', 'package.json'];
  const body = (file, n) =>
    Array.from({ length: n }, (_, i) => `${String(i + 1).padStart(4)}  ${i % 7 === 0 ? `export function f${i}(x: number) {` : `  // ${file} line ${i + 1}`}`).join('\n');

  sm.appendMessage({
    role: 'system',
    content: 'You are pi, a coding agent working in /home/dev/ledgerline.',
    toolsAdded: [{ name: 'read' }, { name: 'bash' }, { name: 'edit' }],
    timestamp: tick(5),
  });
  sm.appendThinkingLevelChange('medium');
  sm.appendModelChange('anthropic', 'claude-sonnet-4');

  let callNo = 0;
  let shortRef = 1;
  let turn = 0;
  let block = 1;
  const pending = []; // batches not yet summarized: {calls:[{id,name,args,text}], turnIndex, timestamp}
  const seenOutputs = new Map(); // text -> first call id
  const records = new Map();
  const assistantTimes = [];
  let boundary;
  let chainStart = null;
  const chainCalls = [];

  const assistant = (content, stopReason) => {
    const started = tick(400);
    return { role: 'assistant', content, api: 'anthropic-messages', provider: 'anthropic', model: 'claude-sonnet-4', usage: { input: 1200 + turn * 90, output: 180, cacheRead: turn * 80, cacheWrite: 0, totalTokens: 1380 + turn * 170, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason, timestamp: started };
  };

  // The flush pi-condense runs at message_end of an answer without tool
  // calls: everything it writes precedes the answer's line.
  const flush = (closing) => {
    if (pending.length === 0) return;
    tick(1500);
    const aliases = [];
    for (const batch of pending) {
      for (const c of batch.calls) {
        const original = seenOutputs.get(`${c.name}\0${c.text}`);
        if (original && original !== c.id) aliases.push([c.id, original]);
        else seenOutputs.set(`${c.name}\0${c.text}`, c.id);
      }
    }
    for (const [newId, originalId] of aliases) {
      tick(3);
      sm.appendCustomEntry('context-prune-dedup-alias', { newToolCallId: newId, originalToolCallId: originalId });
    }
    const aliased = new Set(aliases.map(([n]) => n));
    let attempted = 0;
    for (const batch of pending) {
      const kept = batch.calls.filter((c) => !aliased.has(c.id));
      attempted += batch.calls.length;
      if (kept.length === 0) continue;
      const refs = kept.map((c) => ({ shortId: `t${shortRef++}`, toolCallId: c.id }));
      const lines = kept.map((c, i) => `- \`${refs[i].shortId}\` ${c.name} ${JSON.stringify(c.args)}: ${c.text.split('\n')[0].trim()}`);
      tick(3);
      sm.appendCustomMessageEntry('context-prune-summary', `## Tool results (turn ${batch.turnIndex})\n${lines.join('\n')}\n\nRefs: ${refs.map((r) => r.shortId).join(', ')}`, false, {
        toolCallRefs: refs,
        toolNames: [...new Set(kept.map((c) => c.name))],
        turnIndex: batch.turnIndex,
        timestamp: batch.timestamp,
      });
      const recs = kept.map((c) => ({ toolCallId: c.id, toolName: c.name, args: c.args, resultText: c.text, isError: false, turnIndex: batch.turnIndex, timestamp: batch.timestamp }));
      for (const r of recs) records.set(r.toolCallId, r);
      tick(2);
      sm.appendCustomEntry('context-prune-index', { toolCalls: recs });
    }
    const last = pending[pending.length - 1].calls.at(-1);
    const times = [...assistantTimes, closing.timestamp];
    const keep = 16;
    if (times.length > keep) boundary = Math.max(boundary ?? -Infinity, times[times.length - keep]);
    tick(2);
    sm.appendCustomEntry('context-prune-frontier', {
      lastAttemptedToolCallId: last.id,
      lastAttemptedToolName: last.name,
      lastAttemptedTurnIndex: pending[pending.length - 1].turnIndex,
      lastAttemptedTimestamp: pending[pending.length - 1].timestamp,
      attemptedBatchCount: pending.length,
      attemptedToolCallCount: attempted,
      rawCharCount: pending.reduce((n, b) => n + b.calls.reduce((m, c) => m + c.text.length, 0), 0),
      summaryCharCount: 120 * pending.length,
      outcome: 'summarized',
      ...(boundary !== undefined ? { thinkingStripBoundaryTimestamp: boundary } : {}),
    });
    tick(2);
    sm.appendCustomEntry('context-prune-stats', { totalInputTokens: 900 * turn, totalOutputTokens: 120 * turn, totalCost: 0.001 * turn, callCount: turn, chainsCompressed: block - 1, rangesSummarized: 0 });
    pending.length = 0;
  };

  const requests = [
    'The monthly report double-counts refunds. Find out why.',
    'Add a test for refunds that span two months.',
    'Run the whole test suite and fix what fails.',
    'Rename parseRow to parseLedgerRow everywhere.',
    'The CSV parser chokes on quoted commas. Fix it.',
    'Add a --json flag to the report command.',
    'Show me how totals are rounded.',
    'Make rounding use banker\'s rounding and update the tests.',
    'Check the package.json scripts for a lint step.',
    'Write a short CHANGELOG entry for these fixes.',
    'Read the ledger module again and summarize its API.',
    'Tidy up: run the linter and fix warnings.',
    'Profile the report for a ledger of 100k rows.',
    'Cache parsed rows between report runs.',
    'Document the cache in the README.',
    'Run the tests one last time.',
  ];
  const revision = new Map(); // file -> edits so far

  const compactAt = 8;
  const branchAt = 12;
  let branchFrom = null;
  for (let r = 0; r < requests.length; r++) {
    tick(20_000);
    const userId = sm.appendMessage({ role: 'user', content: requests[r], timestamp: clock });
    const userTime = clock;
    if (r === 3) chainStart = userTime;
    if (r === branchAt - 1) branchFrom = userId;
    const steps = 4 + Math.floor(rand() * 4);
    for (let s = 0; s < steps; s++) {
      const calls = Array.from({ length: 1 + Math.floor(rand() * 2) }, (_, k) => {
        // Request 5 opens with the big module: an oversized result.
        const big = r === 4 && s === 0 && k === 0;
        const name = big ? 'read' : ['read', 'bash', 'edit'][Math.floor(rand() * 3)];
        const file = big ? 'src/ledger.ts' : FILES[Math.floor(rand() * FILES.length)];
        const args = name === 'read' ? { path: file } : name === 'bash' ? { command: `npm test -- ${file}` } : { path: file, oldText: 'x', newText: 'y' };
        callNo += 1;
        return { id: `toolu_${String(callNo).padStart(4, '0')}`, name, args, file };
      });
      const thinking = rand() < 0.5 ? [{ type: 'thinking', thinking: `Step ${s + 1} of request ${r + 1}.`, thinkingSignature: `sig${callNo}` }] : [];
      const a = assistant([...thinking, { type: 'text', text: `Looking at ${calls.map((c) => c.file).join(' and ')}.` }, ...calls.map((c) => ({ type: 'toolCall', id: c.id, name: c.name, arguments: c.args }))], 'toolUse');
      tick(2500);
      sm.appendMessage(a);
      assistantTimes.push(a.timestamp);
      const batch = { calls: [], turnIndex: turn, timestamp: a.timestamp };
      turn += 1;
      let spilled = null;
      for (const c of calls) {
        if (c.name === 'edit') revision.set(c.file, (revision.get(c.file) || 0) + 1);
        const rev = `// revision ${revision.get(c.file) || 0}\n`;
        const text = c.name === 'read' ? rev + body(c.file, r === 4 && s === 0 ? 900 : 12) : c.name === 'bash' ? `PASS ${c.file}\nTests: ${3 + (Number(c.id.slice(6)) % 5)} passed in ${c.id.slice(6)}ms` : `Edited ${c.file} (revision ${revision.get(c.file)})`;
        tick(300);
        sm.appendMessage({ role: 'toolResult', toolCallId: c.id, toolName: c.name, content: [{ type: 'text', text }], isError: false, timestamp: clock });
        if (text.length > 20_000) spilled = { c, text };
        else batch.calls.push({ id: c.id, name: c.name, args: c.args, text });
        chainCalls.push(c.id);
      }
      if (spilled) {
        // turn_end: the eager spill's index entry.
        tick(50);
        sm.appendCustomEntry('context-prune-index', {
          toolCalls: [{ toolCallId: spilled.c.id, toolName: spilled.c.name, args: spilled.c.args, resultText: '', isError: false, turnIndex: turn, timestamp: clock, spillPath: `/home/dev/.pi/agent/sessions/sample-ledgerline-0001-blobs/${spilled.c.id}.txt`, spillBytes: Buffer.byteLength(spilled.text), resultPreview: spilled.text.slice(0, 2048).split('\n').slice(0, -1).join('\n'), contentHash: crypto.createHash('sha1').update(spilled.text).digest('hex') }],
        });
      }
      if (batch.calls.length) pending.push(batch);
    }
    // The answer without tool calls: pi-condense flushes at its message_end,
    // before pi appends it.
    const answer = assistant([{ type: 'text', text: `Done with: ${requests[r]}` }], 'stop');
    tick(3000);
    flush(answer);
    if (r === 6 && chainStart !== null) {
      tick(5);
      sm.appendCustomEntry('context-prune-chain', { blockId: `b${block++}`, startUserTimestamp: chainStart, droppedToolCallIds: chainCalls.slice(0, 6), finalAssistantTimestamp: assistantTimes[assistantTimes.length - 1], toolRefs: ['t1', 't2', 't3'], compressedAt: clock });
      sm.appendCustomEntry('context-prune-stats', { totalInputTokens: 900 * turn, totalOutputTokens: 120 * turn, totalCost: 0.001 * turn, callCount: turn, chainsCompressed: block - 1, rangesSummarized: 0 });
    }
    sm.appendMessage(answer);
    assistantTimes.push(answer.timestamp);
    turn += 1;
    if (r === compactAt) {
      const branch = sm.getBranch();
      const firstKept = branch.filter((e) => e.type === 'message' && e.message.role === 'user').at(-2);
      tick(4000);
      sm.appendCompaction('The user fixed refund double-counting, added tests, renamed parseRow and fixed CSV quoting.', firstKept.id, 48_000);
    }
    if (r === branchAt && branchFrom) {
      tick(1000);
      sm.branchWithSummary(branchFrom, 'Tried rewriting rounding with a decimal library; abandoned as too invasive.');
    }
  }
  const file = sm.getSessionFile();
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.copyFileSync(file, out);
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(`${out}: ${fs.readFileSync(out, 'utf8').split('\n').length - 1} lines`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
