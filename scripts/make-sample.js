#!/usr/bin/env node
'use strict';
// Writes sample/session.jsonl: a pi session file made by pi's own
// SessionManager (the devDependency), with pi-condense's entries where
// pi-condense writes them (SESSIONS.md part C): at the message_end of an
// answer without tool calls, a flush appends dedup aliases, per batch the
// summary custom_message and its context-prune-index entry, a frontier and
// a stats entry, then chain entries and stats again, all before that
// answer's own line; at turn_end an eager spill appends an index entry for
// an oversized result. The session also holds pi's own system prompt and
// tool definitions, a compaction, a branch left with a branch_summary, a
// 47-minute pause (the next call finds the cache expired), a switch from
// Claude Sonnet 4.5 to Claude Opus 4.6 and back, and a cache warm pi sends
// during a long tool run on Opus. Deterministic: pi's clock and id source
// are replaced by a fixed clock and counter before pi is loaded.
//
// The usage on each assistant message (and on the warm) is not measured:
// it is what condense-native's own provider cache model (docs/REPLAY.md,
// "Cost model") bills for the context pi sent, at 3.6 chars a token, priced
// with pi-ai's calculateCost and catalog. The session is written, replayed
// under policy `none`, and written again with those numbers until they no
// longer change (sample/README.md).
//
//   node scripts/make-sample.js [out.jsonl]

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { syncBuiltinESMExports } = require('node:module');
const { pathToFileURL } = require('node:url');

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

const CWD = '/home/dev/ledgerline';
const SESSION_ID = 'sample-ledgerline-0001';
const PI_DIR = path.join(ROOT, 'node_modules', '@earendil-works', 'pi-coding-agent');
// Where a global npm install puts pi: the docs paths of pi's system prompt
// name it, not this checkout's node_modules (the same on every machine).
const PI_SHOWN_AT = '/usr/local/lib/node_modules/@earendil-works/pi-coding-agent';
const SONNET = 'claude-sonnet-4-5';
const OPUS = 'claude-opus-4-6';
// The replay's tokens: characters of the wire JSON per token.
const CHARS_PER_TOKEN = 3.6;
// pi-ai's cache warmer refreshes at 90% of the 5-minute lifetime
// (getCacheWarmingDelayMs); the warm's answer (one token) takes a moment.
const WARM_DELAY_MS = 270_000;
const WARM_REPLY_MS = 1_800;

const compactAt = 8;
const branchAt = 12;
const pauseBefore = 10; // the user comes back 47 minutes later
const opusFrom = 14; // /model claude-opus-4-6 before this request ...
const sonnetFrom = 15; // ... and back to claude-sonnet-4-5 before this one
const benchAt = 14; // Opus reads the report module, then runs a 6.5-minute benchmark: pi warms the cache

/** pi's system prompt and tool definitions for the default tools, built by pi's own code. */
async function piPreamble(ai) {
  const base = pathToFileURL(path.join(PI_DIR, 'dist', 'core')).href;
  const tools = await import(`${base}/tools/index.js`);
  const prompt = await import(`${base}/system-prompt.js`);
  const defs = ['Read', 'Bash', 'Edit', 'Write'].map((n) => tools[`create${n}ToolDefinition`](CWD));
  // pi's own override of where it is installed (config.js getPackageDir).
  const env = process.env.PI_PACKAGE_DIR;
  process.env.PI_PACKAGE_DIR = PI_SHOWN_AT;
  const sections = prompt.buildSystemPromptSections({
    cwd: CWD,
    toolSnippets: Object.fromEntries(defs.map((d) => [d.name, d.promptSnippet])),
    toolGuidelines: Object.fromEntries(defs.map((d) => [d.name, d.promptGuidelines ?? []])),
  });
  if (env === undefined) delete process.env.PI_PACKAGE_DIR;
  else process.env.PI_PACKAGE_DIR = env;
  return { sections, tools: defs.map((d) => ai.toToolDeclaration(d)) };
}

/** The catalog entry of an Anthropic model (pi-ai's providers/data). */
function catalogModel(id) {
  const file = path.join(ROOT, 'node_modules', '@earendil-works', 'pi-ai', 'dist', 'providers', 'data', 'anthropic.json');
  const model = JSON.parse(fs.readFileSync(file, 'utf8'))['anthropic-messages'][`chat:${id}`];
  if (!model) throw new Error(`${id} is not in pi-ai's catalog`);
  return model;
}

/**
 * The usage object pi-ai's Anthropic provider builds from a response
 * (api/anthropic-messages.js): the same keys in the same order, the cost
 * from calculateCost and the catalog's rates.
 */
function piUsage(ai, modelId, tokens, output) {
  const usage = {
    input: tokens.input,
    output,
    cacheRead: tokens.cacheRead,
    cacheWrite: tokens.cacheWrite,
    totalTokens: 0,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
  usage.cacheWrite1h = 0;
  usage.totalTokens = usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
  ai.calculateCost(catalogModel(modelId), usage);
  return usage;
}

/** Output tokens of an answer: its text, thinking and tool calls at the same rate. */
function outputTokens(content) {
  let chars = 0;
  for (const b of content) {
    if (b.type === 'text') chars += b.text.length;
    else if (b.type === 'thinking') chars += b.thinking.length;
    else if (b.type === 'toolCall') chars += b.name.length + JSON.stringify(b.arguments).length + 12;
  }
  return Math.max(1, Math.round(chars / CHARS_PER_TOKEN));
}

const NO_TOKENS = { input: 0, cacheRead: 0, cacheWrite: 0 };

/**
 * Writes the scripted session with pi's SessionManager. `tokens` maps an
 * assistant entry id (and 'warm') to its billed prompt tokens. Returns the
 * file's text, and its text just before the branch is left (the abandoned
 * calls are on that file's active branch).
 */
function writeSession(pi, ai, preamble, tokens) {
  clock = START;
  uuids = 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'make-sample-'));
  const sm = pi.SessionManager.create(CWD, dir, { id: SESSION_ID });
  const rand = lcg(7);
  let model = SONNET;
  let beforeBranch = null;

  const FILES = ['src/ledger.ts', 'src/parse.ts', 'src/report.ts', 'test/ledger.test.ts', 'package.json'];
  const body = (file, n) =>
    Array.from({ length: n }, (_, i) => `${String(i + 1).padStart(4)}  ${i % 7 === 0 ? `export function f${i}(x: number) {` : `  // ${file} line ${i + 1}`}`).join('\n');

  sm.appendMessage({
    role: 'system',
    content: '',
    sections: preamble.sections,
    toolsAdded: preamble.tools,
    timestamp: tick(5),
  });
  sm.appendThinkingLevelChange('medium');
  sm.appendModelChange('anthropic', SONNET);

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
    return { role: 'assistant', content, api: 'anthropic-messages', provider: 'anthropic', model, usage: null, stopReason, timestamp: started };
  };
  // pi appends the assistant entry once the answer is complete; its usage
  // is the one of the call that produced it (keyed by the entry id pi is
  // about to draw: ids are a counter here, so a dry draw would shift them).
  const appendAssistant = (a) => {
    const id = peekId();
    a.usage = piUsage(ai, a.model, tokens.get(id) ?? NO_TOKENS, outputTokens(a.content));
    const got = sm.appendMessage(a);
    if (got !== id) throw new Error(`entry id ${got}, expected ${id}`);
    return got;
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
    // pi-condense 2.4.3's rule at a flush: over the assistants of the
    // branch pi is on (not those of a branch left behind) and the closing
    // answer, clamped by the boundary of the frontier in force there.
    const onBranch = sm.getBranch();
    const times = [...onBranch.filter((e) => e.type === 'message' && e.message.role === 'assistant').map((e) => e.message.timestamp), closing.timestamp];
    const inForce = onBranch.findLast((e) => e.type === 'custom' && e.customType === 'context-prune-frontier');
    boundary = inForce ? inForce.data.thinkingStripBoundaryTimestamp : undefined;
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
    'Benchmark the cache on 100k rows, then document it in the README.',
    'Run the tests one last time.',
  ];
  const revision = new Map(); // file -> edits so far

  let branchFrom = null;
  let lastAnswer = null;
  for (let r = 0; r < requests.length; r++) {
    tick(r === pauseBefore ? 47 * 60_000 : 20_000);
    if (r === opusFrom || r === sonnetFrom) {
      // The user picks another model (/model): pi writes a model_change.
      model = r === opusFrom ? OPUS : SONNET;
      sm.appendModelChange('anthropic', model);
      tick(4_000);
    }
    const userId = sm.appendMessage({ role: 'user', content: requests[r], timestamp: clock });
    const userTime = clock;
    if (r === 3) chainStart = userTime;
    if (r === branchAt - 1) branchFrom = userId;
    const steps = 4 + Math.floor(rand() * 4);
    for (let s = 0; s < steps; s++) {
      const bench = r === benchAt && s === 1;
      const calls = bench
        ? [{ id: `toolu_${String(++callNo).padStart(4, '0')}`, name: 'bash', args: { command: 'npm run bench -- --rows 100000' }, file: 'bench/report.bench.ts' }]
        : Array.from({ length: 1 + Math.floor(rand() * 2) }, (_, k) => {
            // Request 5 opens with the big module (an oversized result),
            // the benchmark request with the report module.
            const big = (r === 4 || r === benchAt) && s === 0 && k === 0;
            const name = big ? 'read' : ['read', 'bash', 'edit'][Math.floor(rand() * 3)];
            const file = big ? (r === 4 ? 'src/ledger.ts' : 'src/report.ts') : FILES[Math.floor(rand() * FILES.length)];
            const args = name === 'read' ? { path: file } : name === 'bash' ? { command: `npm test -- ${file}` } : { path: file, edits: [{ oldText: 'x', newText: 'y' }] };
            callNo += 1;
            return { id: `toolu_${String(callNo).padStart(4, '0')}`, name, args, file };
          });
      const thinking = rand() < 0.5 ? [{ type: 'thinking', thinking: `Step ${s + 1} of request ${r + 1}.`, thinkingSignature: `sig${callNo}` }] : [];
      const say = bench ? 'Benchmarking the report on 100k rows; this takes a few minutes.' : `Looking at ${calls.map((c) => c.file).join(' and ')}.`;
      const a = assistant([...thinking, { type: 'text', text: say }, ...calls.map((c) => ({ type: 'toolCall', id: c.id, name: c.name, arguments: c.args }))], 'toolUse');
      tick(2500);
      appendAssistant(a);
      assistantTimes.push(a.timestamp);
      if (bench) {
        // The benchmark runs 6.5 minutes. pi's cache warmer (streaming
        // phase) re-sends this call's request at 90% of the lifetime and
        // records its usage; the next call reads what the warm kept alive.
        clock = a.timestamp + WARM_DELAY_MS + WARM_REPLY_MS;
        sm.appendUsage('cache_warm', 'anthropic', model, piUsage(ai, model, tokens.get('warm') ?? NO_TOKENS, 1));
        clock = a.timestamp + 390_000;
      }
      const batch = { calls: [], turnIndex: turn, timestamp: a.timestamp };
      turn += 1;
      let spilled = null;
      for (const [k, c] of calls.entries()) {
        if (c.name === 'edit') revision.set(c.file, (revision.get(c.file) || 0) + 1);
        const rev = `// revision ${revision.get(c.file) || 0}\n`;
        const text = bench
          ? 'report x 100000 rows: cold 4,812 ms, cached 611 ms (7.9x)\nTests: 1 passed in 389s'
          : c.name === 'read'
            ? rev + body(c.file, r === 4 && s === 0 ? 900 : r === benchAt && s === 0 && k === 0 ? 450 : 12)
            : c.name === 'bash'
              ? `PASS ${c.file}\nTests: ${3 + (Number(c.id.slice(6)) % 5)} passed in ${c.id.slice(6)}ms`
              : `Edited ${c.file} (revision ${revision.get(c.file)})`;
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
          toolCalls: [{ toolCallId: spilled.c.id, toolName: spilled.c.name, args: spilled.c.args, resultText: '', isError: false, turnIndex: turn, timestamp: clock, spillPath: `/home/dev/.pi/agent/sessions/${SESSION_ID}-blobs/${spilled.c.id}.txt`, spillBytes: Buffer.byteLength(spilled.text), resultPreview: spilled.text.slice(0, 2048).split('\n').slice(0, -1).join('\n'), contentHash: crypto.createHash('sha1').update(spilled.text).digest('hex') }],
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
    appendAssistant(answer);
    lastAnswer = answer;
    assistantTimes.push(answer.timestamp);
    turn += 1;
    if (r === compactAt) {
      const branch = sm.getBranch();
      const firstKept = branch.filter((e) => e.type === 'message' && e.message.role === 'user').at(-2);
      tick(4000);
      // pi's tokensBefore: the last answer's whole usage (nothing follows it).
      sm.appendCompaction('The user fixed refund double-counting, added tests, renamed parseRow and fixed CSV quoting.', firstKept.id, lastAnswer.usage.totalTokens);
    }
    if (r === branchAt && branchFrom) {
      beforeBranch = fs.readFileSync(sm.getSessionFile(), 'utf8');
      tick(1000);
      sm.branchWithSummary(branchFrom, 'Tried rewriting rounding with a decimal library; abandoned as too invasive.');
    }
  }
  const text = fs.readFileSync(sm.getSessionFile(), 'utf8');
  fs.rmSync(dir, { recursive: true, force: true });
  return { text, beforeBranch };
}

// The id pi's generateId will draw next (the counter's next UUID, first 8
// hex digits; the sample never collides).
function peekId() {
  const hex = crypto.createHash('sha256').update(`sample-${uuids + 1}`).digest('hex');
  return hex.slice(0, 8);
}

/**
 * Replays a written session under policy `none` with condense-native's
 * provider cache model: the billed prompt tokens of every model call (by
 * assistant entry id) and of the warm, rounded to whole tokens.
 */
function measure(ai, text, beforeBranch) {
  const { replay } = require('../index.js');
  const options = { policies: ['none'], renders: true, charsPerToken: CHARS_PER_TOKEN };
  const out = new Map();
  const round = (x) => ({ input: Math.round(x.inputTokens), cacheRead: Math.round(x.cacheReadTokens), cacheWrite: Math.round(x.cacheWriteTokens) });
  // The abandoned branch's calls are on the earlier file's active branch.
  for (const x of replay(Buffer.from(beforeBranch), options).policies[0].renders) out.set(x.entryId, round(x));
  const none = replay(Buffer.from(text), options).policies[0];
  for (const x of none.renders) {
    if (out.has(x.entryId) && JSON.stringify(out.get(x.entryId)) !== JSON.stringify(round(x))) throw new Error(`call ${x.entryId}: the two replays disagree`);
    out.set(x.entryId, round(x));
  }
  // The warm re-sends the request of the last call before it, still cached:
  // it reads that request's whole cached prefix and writes nothing.
  if (none.warms.count !== 1) throw new Error(`${none.warms.count} warms simulated, expected 1`);
  const entries = text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const at = entries.findIndex((e) => e.type === 'usage' && e.kind === 'cache_warm');
  const warmed = entries.slice(0, at).findLast((e) => e.type === 'message' && e.message.role === 'assistant');
  const x = none.renders.find((r) => r.entryId === warmed.id);
  const warm = { input: x.inputTokens, cacheRead: x.cacheReadTokens + x.cacheWriteTokens, cacheWrite: 0 };
  // The replay priced the same warm: the same cost, its one output token
  // included.
  const cost = piUsage(ai, warmed.message.model, warm, 1).cost.total;
  if (Math.abs(cost - none.warms.costUsd) > 1e-9) throw new Error(`warm: $${cost} here, $${none.warms.costUsd} in the replay`);
  out.set('warm', { input: Math.round(warm.input), cacheRead: Math.round(warm.cacheRead), cacheWrite: 0 });
  return out;
}

/**
 * The warm is where pi 1.6.0 would send one, and only there: pi-ai replays
 * a thinking request only for adaptive-thinking models (Opus 4.6 here, not
 * Sonnet 4.5), and the cache warmer's economics (evaluateCacheWarming,
 * streaming phase, the last call's prompt size) must say `warm`.
 */
function checkWarms(ai, text) {
  const options = { reasoning: 'medium' };
  if (ai.isCacheWarmingReplayable(catalogModel(SONNET), options)) throw new Error('pi would warm Sonnet 4.5 too');
  if (!ai.isCacheWarmingReplayable(catalogModel(OPUS), options)) throw new Error('pi would not warm Opus 4.6');
  const entries = text.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const at = entries.findIndex((e) => e.type === 'usage' && e.kind === 'cache_warm');
  const before = entries.slice(0, at).findLast((e) => e.type === 'message' && e.message.role === 'assistant').message;
  const prompt = before.usage.input + before.usage.cacheRead + before.usage.cacheWrite;
  const decision = ai.evaluateCacheWarming(catalogModel(before.model), prompt, 'streaming');
  if (decision.action !== 'warm') throw new Error(`pi would not warm a ${prompt}-token prompt: ${JSON.stringify(decision)}`);
}

async function main() {
  const out = path.resolve(process.argv[2] || path.join(ROOT, 'sample', 'session.jsonl'));
  const { importPi } = require('../__test__/helpers/pi-session.js');
  const pi = await importPi();
  const ai = await import('@earendil-works/pi-ai');
  const preamble = await piPreamble(ai);
  // Usage sits on assistant messages, which later calls send again: write,
  // replay, and write again with the replay's numbers until they hold.
  let tokens = new Map();
  for (let pass = 1; ; pass++) {
    const { text, beforeBranch } = writeSession(pi, ai, preamble, tokens);
    const next = measure(ai, text, beforeBranch);
    if (JSON.stringify([...next]) === JSON.stringify([...tokens])) {
      checkWarms(ai, text);
      fs.mkdirSync(path.dirname(out), { recursive: true });
      fs.writeFileSync(out, text);
      console.log(`${out}: ${text.split('\n').length - 1} lines, usage stable after ${pass} passes`);
      return;
    }
    if (pass === 5) throw new Error('the usage does not settle');
    tokens = next;
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
