'use strict';

// What pi would have done (issue 44): its compaction under every policy,
// against pi 1.6.0's own code in node_modules (core/compaction/): the call
// at which pi compacts a generated session that passes the threshold
// unpruned and never under pi-condense 2.4.3, the size of the summarization
// request pi sends (its system prompt, prompt and serialized conversation),
// the sample's compaction (asked for, below the threshold) made under every
// policy, and on the corpus no priced request above the model's window.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const { replay, backend } = require('..');
const { tuneSession } = require('./helpers/tune-sessions.js');
const { loadCatalog } = require('../js/catalog.js');

const skip = backend !== 'native' && 'the replay needs the native binding';
const PI = path.join(__dirname, '..', 'node_modules', '@earendil-works', 'pi-coding-agent', 'dist', 'core');
const noPi = fs.existsSync(path.join(PI, 'compaction', 'compaction.js')) ? false : 'pi-coding-agent is not installed';
const SAMPLE = path.join(__dirname, '..', 'sample', 'session.jsonl');
const CORPUS = path.join(__dirname, '..', '..', 'shared', 'corpus');

const pi = () =>
  Promise.all(['compaction/compaction.js', 'compaction/utils.js', 'messages.js'].map((f) => import(pathToFileURL(path.join(PI, f)).href))).then(
    ([compaction, utils, messages]) => ({ ...compaction, ...utils, ...messages }),
  );

// A session unpruned passes 50,000 tokens (pi compacts where the window,
// 200,000 for claude-sonnet-4-5, less reserveTokens is under that), and
// pi-condense 2.4.3's context stays near 11,000.
const COMPACTION = { reserveTokens: 150_000 };
const OPTIONS = { renders: true, policies: ['none', 'config'], config: { contextPrune: { enabled: true } }, compaction: COMPACTION };

function generated() {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'condense-compaction-')), 'session.jsonl');
  fs.writeFileSync(file, tuneSession(7, { calls: [8, 8, 10, 8, 8] }));
  return file;
}

test('pi compacts the unpruned context at the call its own rule names, and never under 2.4.3', { skip: skip || noPi }, async () => {
  const { estimateTokens } = await pi();
  const file = generated();
  const r = replay(file, OPTIONS);
  const [none, config] = r.policies;
  assert.equal(config.compactions, 0);
  assert.ok(config.renders.every((x) => x.compactions === 0));
  assert.equal(none.compactions, 1, 'the unpruned context compacts once');
  // pi's rule, call by call (agent-session.js _checkCompaction and
  // _compactBeforeNextAssistantResponse, compaction.js shouldCompact): the
  // usage the previous answer recorded (the request as sent and the answer)
  // plus pi's estimate of the messages appended since the answer, unless a
  // new prompt was appended (then pi checked before it), against the window
  // less reserveTokens.
  const entries = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.type !== 'session');
  const window = loadCatalog()['anthropic/claude-sonnet-4-5'].contextWindow;
  const threshold = window - COMPACTION.reserveTokens;
  const answers = entries.map((e, i) => (e.type === 'message' && e.message.role === 'assistant' ? i : -1)).filter((i) => i >= 0);
  let expected = null;
  for (let k = 1; k < answers.length && expected === null; k++) {
    const prev = none.renders[k - 1];
    const usage = prev.inputTokens + prev.cacheReadTokens + prev.cacheWriteTokens + entries[answers[k - 1]].message.usage.output;
    const between = entries.slice(answers[k - 1] + 1, answers[k]);
    const prompt = between.some((e) => e.type === 'message' && e.message.role === 'user');
    const trailing = prompt
      ? 0
      : between.reduce((n, e) => n + (e.type === 'message' ? estimateTokens(e.message) : e.type === 'custom_message' ? estimateTokens({ role: 'custom', content: e.content }) : 0), 0);
    if (usage + trailing > threshold) expected = k;
  }
  assert.notEqual(expected, null, 'the session passes the threshold unpruned');
  assert.deepEqual(
    none.renders.map((x, k) => (x.compactions > 0 ? k : null)).filter((k) => k !== null),
    [expected],
  );
  // The summarization request is billed, besides the calls.
  assert.ok(none.compactionCostUsd > 0);
  const calls = none.renders.reduce((n, x) => n + x.costUsd, 0);
  assert.ok(Math.abs(calls + none.warms.costUsd + none.compactionCostUsd - none.costUsd) < 1e-9);
  // After it the context starts from the summary: smaller than before.
  assert.ok(none.renders[expected].charsAfter < none.renders[expected - 1].charsAfter);
  assert.ok(none.renders.every((x) => !x.overWindow));
});

test('the summarization request is the size pi sends, and --contexts says what it summarizes', { skip: skip || noPi }, async () => {
  const { generateSummaryWithUsage, convertToLlm } = await pi();
  const file = generated();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-compaction-contexts-'));
  replay(file, { ...OPTIONS, contextsDir: dir });
  const lines = fs.readFileSync(path.join(dir, 'none.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  assert.deepEqual([...new Set(lines.map((l) => l.kind))].sort(), ['call', 'compaction']);
  const first = lines.findIndex((l) => l.kind === 'compaction');
  const requests = [];
  for (let i = first; lines[i].kind === 'compaction'; i++) requests.push(lines[i]);
  const next = lines[first + requests.length];
  assert.equal(next.kind, 'call', 'the compaction comes before the call it precedes');
  assert.ok(requests.every((c) => c.k === next.k));
  // pi's own request for those messages: captured from its summarizer
  // (the history's; a cut inside a turn adds the turn prefix's, which
  // compact() sends second).
  const sent = [];
  const streamFn = async (model, context) => {
    sent.push(context);
    const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
    return { result: async () => ({ role: 'assistant', content: [{ type: 'text', text: 'summary' }], stopReason: 'stop', usage }) };
  };
  const model = { provider: 'anthropic', id: 'claude-sonnet-4-5', api: 'anthropic-messages' };
  const chars = (context) => context.messages.reduce((n, m) => n + (typeof m.content === 'string' ? m.content.length : m.content.reduce((k, b) => k + b.text.length, 0)), 0);
  const [history, prefix] = requests;
  await generateSummaryWithUsage(history.messages, model, undefined, 'key', {}, undefined, undefined, undefined, undefined, streamFn);
  assert.equal(history.inputChars, chars(sent[0]));
  assert.ok(convertToLlm(history.messages).length > 10, 'it summarizes the history');
  if (prefix !== undefined) {
    const { compact } = await pi();
    sent.length = 0;
    const fileOps = { read: new Set(), written: new Set(), edited: new Set() };
    await compact({ firstKeptEntryId: 'x', messagesToSummarize: history.messages, turnPrefixMessages: prefix.messages, isSplitTurn: true, tokensBefore: 0, fileOps }, model, 'key', {}, undefined, undefined, undefined, streamFn);
    assert.equal(prefix.inputChars, chars(sent[1]));
  }
});

test("the sample's compaction, asked for below the threshold, is made under every policy where the file made it", { skip }, () => {
  const r = replay(SAMPLE, { renders: true });
  const lines = fs.readFileSync(SAMPLE, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const at = Date.parse(lines.find((e) => e.type === 'compaction').timestamp);
  const after = r.policies[0].renders.findIndex((x) => x.timestamp > at);
  for (const p of r.policies) {
    assert.equal(p.compactions, 1, p.policy);
    assert.equal(p.renders[after].compactions, 1, p.policy);
    assert.ok(p.compactionCostUsd > 0, p.policy);
    assert.equal(p.overWindow, 0, p.policy);
  }
  // With compaction off in pi's settings, the compaction asked for is
  // still made (pi's switch is for the automatic one).
  const off = replay(SAMPLE, { policies: ['none'], compaction: { enabled: false } });
  assert.equal(off.policies[0].compactions, 1);
});

test('the corpus: no priced request above the window, compactions and requests over it said', { skip: skip || (!fs.existsSync(CORPUS) && `no corpus at ${CORPUS}`), timeout: 600_000 }, () => {
  const { convert } = require('../scripts/corpus-to-session.js');
  const catalog = loadCatalog();
  for (const name of ['small', 'medium', 'large']) {
    const corpus = JSON.parse(fs.readFileSync(path.join(CORPUS, `${name}.json`), 'utf8'));
    const r = replay(Buffer.from(convert(corpus)), { renders: true });
    for (const p of r.policies) {
      assert.equal(typeof p.compactions, 'number');
      assert.equal(typeof p.overWindow, 'number');
      for (const [k, x] of p.renders.entries()) {
        const window = catalog[r.models[0].model]?.contextWindow ?? 200_000;
        if (!x.overWindow) assert.ok(x.inputTokens + x.cacheReadTokens + x.cacheWriteTokens <= window, `${name} ${p.policy} call ${k}`);
      }
    }
    if (name === 'large') {
      // Unpruned, the large session passes claude-opus-5's window: pi
      // compacts, and sends nothing it could not.
      const none = r.policies.find((p) => p.policy === 'none');
      assert.ok(none.compactions >= 1, `${none.compactions}`);
      assert.equal(none.overWindow, 0);
    }
  }
});
