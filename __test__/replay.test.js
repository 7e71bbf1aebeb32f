'use strict';
// The replay (issue 15 items 2-4): a hand-computed session whose renders,
// breaks, chars and costs are worked out below from the messages
// themselves; every replay render equal to a stateless pruneMessages of the
// same context, state and boundary (sample, a fixture, generated
// sessions), with breaks and hashes recomputed here from the rendered
// arrays; the flush-gated invariant broken by error purge's live cooldown
// count; replayAsync and typed errors. Runs under `node --test` and
// `bun test`.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { xxh3 } = require('@node-rs/xxhash');

const { replay, replayAsync, loadSession, pruneMessages, backend } = require('..');
const { generate } = require('./helpers/session-gen.js');
const { handSession, purgeSession, rewindSession, T0, STUB_T1 } = require('./helpers/replay-sessions.js');

const skip = backend !== 'native' && 'the replay needs the native binding';
const ROOT = path.join(__dirname, '..');
const SAMPLE = fs.readFileSync(path.join(ROOT, 'sample', 'session.jsonl'));
const FLUSHES = fs.readFileSync(path.join(__dirname, 'fixtures', 'sessionfile', 'flushes.jsonl'));

const L = (m) => JSON.stringify(m).length;
const arrayChars = (ms) => 2 + Math.max(0, ms.length - 1) + ms.reduce((n, m) => n + L(m), 0);

// The hash definitions of src/replay/mod.rs, computed independently.
function digest(m) {
  return xxh3.xxh64(Buffer.from(JSON.stringify(m), 'utf8'));
}
function hashOf(messages) {
  const bytes = Buffer.alloc(8 * messages.length);
  messages.forEach((m, i) => bytes.writeBigUInt64LE(digest(m), 8 * i));
  return xxh3.xxh64(bytes).toString(16).padStart(16, '0');
}

test('a hand-computed session: renders, breaks, chars and costs', { skip }, () => {
  const { text, m } = handSession();
  // The prefix rule's chars and costs are under `prefix` (cacheModel 'prefix' only).
  const r = replay(Buffer.from(text), { renders: true, policies: ['config'], cacheModel: 'prefix' });
  assert.equal(r.modelCalls, 3);
  assert.deepEqual(
    r.policies.map((p) => p.policy),
    ['none', 'config'],
  );
  const [none, config] = r.policies;
  // Call 0 saw [u1]; call 1 [u1, a1, r1] (the flush entries written at a2's
  // message_end were not in force); call 2 the summary and the stub.
  const stub = { role: 'toolResult', toolCallId: 'c1', toolName: 'read', content: [{ type: 'text', text: STUB_T1 }], isError: false, timestamp: T0 + 3000 };
  const contexts = [[m.u1], [m.u1, m.a1, m.r1], [m.u1, m.a1, m.r1, m.s1, m.a2, m.u2]];
  const outputs = [contexts[0], contexts[1], [m.u1, m.a1, stub, m.s1, m.a2, m.u2]];
  const expect = (policy, outs, breaks) => {
    policy.renders.forEach((got, k) => {
      const before = arrayChars(contexts[k]);
      const after = arrayChars(outs[k]);
      // Chars before the break: "[" and each earlier message with its ",".
      const read = breaks[k] === 0 ? 0 : 1 + outs[k].slice(0, breaks[k]).reduce((n, x) => n + L(x) + 1, 0);
      assert.equal(got.charsBefore, before, `call ${k} before`);
      assert.equal(got.charsAfter, after, `call ${k} after`);
      assert.equal(got.breakIndex, breaks[k], `call ${k} break`);
      assert.equal(got.prefix.cacheReadChars, read, `call ${k} read`);
      assert.equal(got.prefix.cacheWriteChars, after - read, `call ${k} write`);
      assert.equal(got.prefixHash, hashOf(outs[k].slice(0, breaks[k])), `call ${k} prefix hash`);
      assert.equal(got.outputHash, hashOf(outs[k]), `call ${k} output hash`);
    });
  };
  expect(none, contexts, [0, 1, 3]);
  expect(config, outputs, [0, 1, 2]);
  assert.deepEqual(
    config.renders.map((x) => [x.entryId, x.leafId]),
    [
      ['a1', 'u1'],
      ['a2', 'r1'],
      ['a3', 'u2'],
    ],
  );
  assert.equal(config.renders[2].stats.stubbed, 1);
  // Totals and prices: 4 chars per token, write x1.25, read x0.1.
  for (const p of [none, config]) {
    const sent = p.renders.reduce((n, x) => n + x.charsAfter, 0);
    const read = p.renders.reduce((n, x) => n + x.prefix.cacheReadChars, 0);
    const write = sent - read;
    assert.equal(p.charsSent, sent);
    assert.deepEqual(Object.keys(p.prefix), ['inputTokens', 'cacheReadTokens', 'cacheWriteTokens', 'cacheReadChars', 'cacheWriteChars', 'cost', 'costVsNone']);
    assert.equal(p.prefix.inputTokens, sent / 4);
    assert.equal(p.prefix.cacheReadTokens, read / 4);
    assert.equal(p.prefix.cacheWriteTokens, write / 4);
    assert.equal(p.prefix.cacheReadChars, read);
    assert.equal(p.prefix.cacheWriteChars, write);
    assert.ok(Math.abs(p.prefix.cost - ((write / 4) * 1.25 + (read / 4) * 0.1)) < 1e-9);
    // The plain names are the catalog-priced figures of the same rule.
    assert.equal(p.cacheReadTokens, p.renders.reduce((n, x) => n + x.cacheReadTokens, 0));
  }
  assert.ok(Math.abs(config.prefix.costVsNone - config.prefix.cost / none.prefix.cost) < 1e-12);
  assert.equal(none.prefix.costVsNone, 1);
  // Call 1 is the only one between two flush states: checked, and it held.
  assert.deepEqual(config.invariant, { flushGated: true, checked: 1, broken: 0, violations: [] });

  // A 5 s cache lifetime: call 2 came 6 s after call 1, so it writes all.
  const short = replay(Buffer.from(text), { renders: true, policies: ['config'], cacheModel: 'prefix', cacheTtlSeconds: 5, charsPerToken: 2, inputPrice: 3, cacheWriteMultiplier: 2, cacheReadMultiplier: 0.5 });
  const x = short.policies[1].renders[2];
  assert.equal(x.prefix.cacheExpired, true);
  assert.equal(x.prefix.cacheReadChars, 0);
  assert.equal(x.prefix.cacheWriteChars, arrayChars(outputs[2]));
  assert.equal(x.breakIndex, 2);
  const p = short.policies[1];
  assert.ok(Math.abs(p.prefix.cost - 3 * ((p.prefix.cacheWriteChars / 2) * 2 + (p.prefix.cacheReadChars / 2) * 0.5)) < 1e-9);
  assert.deepEqual(short.prefix, { charsPerToken: 2, inputPrice: 3, cacheWriteMultiplier: 2, cacheReadMultiplier: 0.5, cacheTtlSeconds: 5 });
});

test("the flush-gated invariant: error purge's live cooldown count breaks it between flushes", { skip }, () => {
  const r = replay(Buffer.from(purgeSession()), { renders: true });
  assert.equal(r.modelCalls, 4);
  for (const p of r.policies) {
    if (p.policy === 'none') {
      assert.equal(p.invariant.broken, 0);
      continue;
    }
    // No flush: every call after the first is checked. At the fourth, three
    // assistant messages are in context: 3 - 1 >= cooldown 2, so a1's
    // failed call loses its 600-char arguments, deep in history.
    assert.equal(p.invariant.checked, 3, p.policy);
    assert.equal(p.invariant.broken, 1, p.policy);
    assert.deepEqual(p.invariant.violations[0], {
      render: 3,
      outputIndex: 1,
      inputIndex: 1,
      phase: 'errorPurge',
      detail:
        'assistant message 1: failed tool-call arguments purged once the live count of assistant messages passed the cooldown (entry a1)',
    });
    assert.equal(p.renders[3].breakIndex, 1);
    assert.equal(p.renders[3].stats.purgedArgs, 1);
  }
});

/**
 * The replay against stateless pruneMessages, render by render, with the
 * boundary of the frontier in force (`thinkingBoundary: 'recorded'`).
 */
function checkAgainstPruneMessages(bytes, options, label) {
  const r = replay(bytes, { ...options, renders: true, thinkingBoundary: 'recorded' });
  for (const p of r.policies) {
    const dialect = p.policy === '2.9.1' ? '2.9.1' : '2.4.3';
    let previous = null;
    p.renders.forEach((got, k) => {
      const where = `${label} ${p.policy} call ${k}`;
      const loaded = got.leafId === null ? { messages: [], state: null, frontier: null } : loadSession(bytes, { leafId: got.leafId, dialect });
      let out = loaded.messages;
      if (p.policy !== 'none') {
        const boundary = p.policy === 'config' && loaded.frontier ? loaded.frontier.thinkingStripBoundaryTimestamp : undefined;
        out = pruneMessages(loaded.messages, { state: loaded.state, config: p.config, thinkingStripBoundaryTimestamp: boundary ?? undefined, dialect }).messages;
      }
      assert.equal(got.charsBefore, arrayChars(loaded.messages), `${where}: chars before`);
      assert.equal(got.charsAfter, arrayChars(out), `${where}: chars after`);
      assert.equal(got.messagesAfter, out.length, `${where}: messages after`);
      assert.equal(got.outputHash, hashOf(out), `${where}: output`);
      let brk = 0;
      if (previous !== null) {
        const common = Math.min(previous.length, out.length);
        while (brk < common && JSON.stringify(previous[brk]) === JSON.stringify(out[brk])) brk++;
      }
      assert.equal(got.breakIndex, brk, `${where}: break`);
      assert.equal(got.prefixHash, hashOf(out.slice(0, brk)), `${where}: prefix hash`);
      previous = out;
    });
  }
  return r;
}

test('every render equals stateless pruneMessages on the same context, state and boundary', { skip }, () => {
  const r = checkAgainstPruneMessages(SAMPLE, {}, 'sample');
  assert.equal(r.modelCalls, 94);
  // The documented defaults of pi-condense 2.4.3 (README, Replay).
  assert.deepEqual(r.policies.find((p) => p.policy === 'config').config, {
    chainCompression: { enabled: true, rollingWindow: 3, stripFinalAssistantThinking: true, fuseRangeSummary: true },
    errorPurge: { enabled: true, cooldownTurns: 2, minArgChars: 500 },
    thinkingStrip: { enabled: true, keepLastTurns: 16 },
    protection: { protectedTools: [], protectedPaths: ['**/skills/**/*.md'] },
    recoveryGraceTurns: 3,
  });
  const settings = { theme: 'dark', contextPrune: { purgeErrors: { enabled: true, cooldownTurns: 1, minArgChars: 10 }, recoveryGraceTurns: 1, protectedTools: ['bash'] } };
  checkAgainstPruneMessages(FLUSHES, { config: settings }, 'flushes');
  // Protected paths keep the reads of parse.ts whole (the replay hands the
  // engine records reduced to what the render reads: args.path).
  const protectedPaths = { contextPrune: { protectedPaths: ['**/parse.ts'] } };
  const kept = checkAgainstPruneMessages(SAMPLE, { config: protectedPaths, policies: ['config'] }, 'protected');
  assert.ok(kept.policies[1].charsSent > r.policies[1].charsSent);
  checkAgainstPruneMessages(Buffer.from(handSession().text), {}, 'hand');
  checkAgainstPruneMessages(Buffer.from(purgeSession()), {}, 'purge');
  const rewound = checkAgainstPruneMessages(Buffer.from(rewindSession()), {}, 'rewind');
  assert.deepEqual(
    rewound.policies[1].renders.map((x) => x.leafId),
    ['u1', 'r1', 'u2', 'u1', 'u3'],
  );
});

test('generated sessions: every render equals pruneMessages, or the replay fails typed', { skip }, () => {
  let replayed = 0;
  let autoRecorded = 0;
  let autoConfig = 0;
  for (let seed = 0; seed < 80; seed++) {
    const g = generate(seed);
    const bytes = Buffer.from(g.text ?? g);
    let first;
    try {
      first = replay(bytes, { renders: true });
    } catch (e) {
      // A file pi cannot load, or a render the reference throws on: a
      // typed error naming the line.
      assert.match(e.code, /^ERR_CONDENSE_(INVALID_SESSION|INVALID_MESSAGE|TOO_DEEP)$/, `seed ${seed}: ${e.message}`);
      assert.ok(Number.isInteger(e.line), `seed ${seed}: ${e.message}`);
      continue;
    }
    // A version-1 file's ids are minted while loading: no leafId names them.
    if (first.policies[0].renders.some((x) => /^\(id minted/.test(x.leafId ?? ''))) continue;
    const r = checkAgainstPruneMessages(bytes, {}, `seed ${seed}`);
    replayed += r.modelCalls > 0 ? 1 : 0;
    // The default ('auto') says the recorded rule only where the renders
    // are those of the recorded frontier, render for render.
    const auto = first.policies.find((p) => p.policy === 'config');
    const recorded = r.policies.find((p) => p.policy === 'config');
    assert.deepEqual(recorded.thinkingBoundary, { rule: 'recorded', reason: 'as asked' });
    assert.ok(['recorded', 'config'].includes(auto.thinkingBoundary.rule), `seed ${seed}`);
    if (auto.thinkingBoundary.rule === 'recorded') {
      autoRecorded++;
      assert.deepEqual(auto.renders.map((x) => x.outputHash), recorded.renders.map((x) => x.outputHash), `seed ${seed}`);
      assert.equal(auto.costUsd, recorded.costUsd, `seed ${seed}`);
    } else {
      autoConfig++;
      assert.match(auto.thinkingBoundary.reason, /^the session(?: holds no pi-condense 2\.4 frontier entries|'s frontier entries differ from this config's keepLastTurns at \d+ of \d+ renders)/, `seed ${seed}`);
    }
    for (const p of first.policies) if (p.policy !== 'config') assert.equal(p.thinkingBoundary, null, `seed ${seed} ${p.policy}`);
  }
  assert.ok(replayed >= 30, `${replayed} generated sessions replayed`);
  assert.ok(autoRecorded > 0 && autoConfig > 0, `auto: ${autoRecorded} recorded, ${autoConfig} config`);
});

test('replayAsync gives what replay gives, with progress', { skip }, async () => {
  const calls = [];
  const got = await replayAsync(SAMPLE, { renders: true, onProgress: (done, total) => calls.push([done, total]) });
  assert.deepEqual(got, replay(SAMPLE, { renders: true }));
  // Five policies and the calibration pass of the recorded policy.
  assert.deepEqual(calls.at(-1), [94 * 6, 94 * 6]);
  const fromPath = await replayAsync(path.join(ROOT, 'sample', 'session.jsonl'), { policies: ['2.9.1'] });
  assert.deepEqual(
    fromPath.policies.map((p) => p.policy),
    ['none', '2.9.1'],
  );
  assert.equal(fromPath.policies[0].renders, undefined);
});

test('typed errors name the file and line', { skip }, async () => {
  const missing = path.join(ROOT, 'no-such-session.jsonl');
  for (const run of [() => replay(missing), () => replayAsync(missing)]) {
    await assert.rejects(async () => run(), (e) => e.code === 'ERR_CONDENSE_IO' && e.file === missing && e.message.startsWith(`${missing}: `));
  }
  const bad = `${handSession().text.trimEnd()}\n{"type":"custom","customType":"context-prune-index","data":{"toolCalls":[null]},"id":"x","parentId":"a3","timestamp":"2026-01-01T00:00:20.000Z"}\n{"type":"message","id":"a4","parentId":"x","timestamp":"2026-01-01T00:00:21.000Z","message":{"role":"assistant","content":[],"timestamp":${T0 + 21000}}}\n`;
  assert.throws(
    () => replay(Buffer.from(bad)),
    (e) => e.code === 'ERR_CONDENSE_INVALID_SESSION' && e.line === 11 && e.file === '<buffer>' && /toolCalls\[0\] is null/.test(e.message),
  );
  for (const [options, what] of [
    [{ policies: ['bogus'] }, /policies/],
    [{ policies: [] }, /policies/],
    [{ charsPerToken: 0 }, /charsPerToken/],
    [{ cacheTtlSeconds: -1 }, /cacheTtlSeconds/],
    [{ renders: 'yes' }, /renders/],
    [{ config: [1] }, /config/],
    [{ config: { errorPurge: { enabled: true, cooldownTurns: 2, minArgChars: 500 }, bogus: true } }, /bogus/],
  ]) {
    assert.throws(() => replay(SAMPLE, options), (e) => /^ERR_CONDENSE_INVALID_(ARGUMENT|CONFIG)$/.test(e.code) && what.test(e.message), JSON.stringify(options));
  }
  const before = Buffer.from(SAMPLE);
  replay(SAMPLE);
  assert.ok(before.equals(SAMPLE), 'the caller buffer is not modified');
});

test('provider cache model: an append reads what the previous call read and wrote; every rewrite has a cause', { skip }, () => {
  const r = replay(SAMPLE, { renders: true });
  assert.equal(r.cacheModel, 'provider');
  for (const p of r.policies) {
    const classes = Object.values(p.callClasses).reduce((a, b) => a + b, 0);
    assert.equal(classes, r.modelCalls, p.policy);
    const costs = p.renders.reduce((a, x) => a + x.costUsd, 0);
    assert.ok(Math.abs(costs + p.warms.costUsd + p.compactionCostUsd - p.costUsd) < 1e-9, p.policy);
    p.renders.forEach((x, k) => {
      if (x.callClass === 'append') {
        const prev = p.renders[k - 1];
        assert.ok(Math.abs(x.cacheReadTokens - (prev.cacheReadTokens + prev.cacheWriteTokens)) < 1e-6, `${p.policy} call ${k}`);
        assert.equal(x.rewriteCause, null);
      }
      if (x.callClass === 'rewrite' || x.callClass === 'partial') assert.notEqual(x.rewriteCause, null, `${p.policy} call ${k}`);
    });
    const written = p.causes.reduce((a, c) => a + c.calls, 0);
    assert.ok(written <= r.modelCalls);
  }
  // The sample holds what a user's session holds (sample/README.md): a
  // compaction, a 47-minute pause (expired), a switch to Claude Opus 4.6 (its
  // first call) and back to Sonnet 4.5 (expired), one cache warm pi sent
  // during a 6.5-minute tool run on Opus. Its recorded usage is the model's own.
  const none = r.policies[0];
  assert.deepEqual(r.models.map((m) => [m.model, m.inCatalog]), [['anthropic/claude-sonnet-4-5', true], ['anthropic/claude-opus-4-6', true]]);
  assert.deepEqual(none.callClasses, { first: 2, append: 84, partial: 1, rewrite: 5, expired: 2 });
  assert.deepEqual(none.causes.map((c) => `${c.cause}:${c.calls}`), ['thinkingDropped:5', 'expired:2', 'compaction:1', 'modelSwitch:1']);
  assert.deepEqual(none.warms.count, 1);
  assert.equal(r.recorded.status, 'matched');
  assert.equal(r.recorded.calls, 94);
  assert.equal(Math.round(r.recorded.classMatch * 94), 94);
  assert.ok(Math.abs(r.recorded.costError) < 1e-4, String(r.recorded.costError));
  // pi's warmer, simulated for the recorded policy, sends the warm the file
  // recorded: 270 s after the request before the tool run, recorded when its
  // answer came (within the warmer's slack).
  assert.deepEqual(r.recorded.warms, { recorded: 1, simulated: 1, matched: 1 });
  const recordedWarm = Date.parse(JSON.parse(SAMPLE.toString('utf8').split('\n').find((l) => l.includes('"kind":"cache_warm"'))).timestamp);
  const warm = none.renders.findIndex((x) => x.timestamp > recordedWarm);
  assert.equal(none.renders[warm].warms.length, 1);
  assert.equal(none.renders[warm].warms[0], none.renders[warm - 1].timestamp + 270_000);
  assert.ok(recordedWarm - none.renders[warm].warms[0] >= 0 && recordedWarm - none.renders[warm].warms[0] < 15_000);
  // The warm kept the cache alive: without pi's warmer the call after the
  // tool run finds it expired and writes the whole prompt again.
  assert.equal(none.renders[warm].callClass, 'append');
  const cold = replay(SAMPLE, { policies: ['none'], renders: true, cacheWarming: 'off' });
  assert.equal(cold.cacheWarming, 'off');
  assert.deepEqual(cold.policies[0].warms, { count: 0, costUsd: 0 });
  assert.equal(cold.policies[0].renders[warm].callClass, 'expired');
  assert.ok(cold.policies[0].costUsd > none.costUsd);
  // The 'prefix' rule is today's: its reads are the chars before the break.
  const prefix = replay(SAMPLE, { cacheModel: 'prefix', policies: ['none'], renders: true });
  const prefixNone = prefix.policies[0];
  prefixNone.renders.forEach((x) => assert.ok(Math.abs(x.cacheReadTokens - x.prefix.cacheReadChars / 4) < 1e-9));
  assert.equal(prefix.prefix.charsPerToken, 4);
  // The provider model's result has no prefix-rule fields, at any level.
  assert.equal('prefix' in r, false);
  assert.equal('cost' in r, false);
  for (const p of r.policies) {
    for (const old of ['prefix', 'cost', 'costVsNone', 'cacheWriteChars', 'cacheReadChars', 'billedInputTokens', 'billedCacheReadTokens', 'billedCacheWriteTokens']) assert.equal(old in p, false, `${p.policy}.${old}`);
    assert.ok(p.renders.every((x) => !('prefix' in x) && !('cacheWriteChars' in x) && !('cacheExpired' in x)));
  }
});

test('recorded usage that does not describe the contexts is reported unreconciled, under either cache model', { skip }, () => {
  // The sample with every recorded prompt size cut 200-fold: the sizes still
  // follow the contexts, but at some 700 chars a token, which no tokenizer
  // gives. The sample's own usage is matched under both models.
  const shrunk = SAMPLE.toString('utf8')
    .split('\n')
    .map((line) => {
      if (!line.includes('"usage"')) return line;
      const e = JSON.parse(line);
      const u = e.message && e.message.usage;
      if (!u) return line;
      for (const k of ['input', 'cacheRead', 'cacheWrite']) u[k] = Math.round(u[k] / 200);
      return JSON.stringify(e);
    })
    .join('\n');
  for (const cacheModel of ['provider', 'prefix']) {
    const own = replay(SAMPLE, { cacheModel, policies: ['none'] }).recorded;
    assert.equal(own.status, 'matched', cacheModel);
    assert.equal(own.reason, null, cacheModel);
    const r = replay(Buffer.from(shrunk), { cacheModel, policies: ['none'] });
    assert.equal(r.recorded.status, 'unreconciled', cacheModel);
    assert.match(r.recorded.reason, /fit only at \d+ chars a token, outside what tokenizers give .*; priced at 4 chars a token$/, cacheModel);
    assert.equal(r.recorded.calls, 94, cacheModel);
  }
  // Under the prefix rule a fixed size is the price, and the reason says so.
  const fixed = replay(Buffer.from(shrunk), { cacheModel: 'prefix', charsPerToken: 3, policies: ['none'] }).recorded;
  assert.match(fixed.reason, /; priced at 3 chars a token$/);
});

test('skipped lines are counted, the first five listed; an empty file is an error', { skip }, () => {
  assert.deepEqual(replay(SAMPLE, { policies: ['none'] }).skippedLines, { count: 0, lines: [] });
  const text = SAMPLE.toString('utf8');
  const n = text.split('\n').length - 1; // lines, the last ending in LF
  const lines = text.split('\n');
  // A garbage line in the middle, an entry of a type pi does not write, a
  // blank line (not counted) and a truncated last line.
  lines.splice(10, 0, 'garbage');
  lines.splice(20, 0, '{"type":"frobnicate","id":"zz","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"}');
  lines.splice(30, 0, '   ');
  const damaged = `${lines.join('\n')}{"type":"message","id":"tr`;
  const r = replay(Buffer.from(damaged), { policies: ['none'] });
  assert.deepEqual(r.skippedLines, { count: 3, lines: [11, 21, n + 4] });
  // The figures are those of the file without them.
  assert.equal(r.policies[0].costUsd, replay(SAMPLE, { policies: ['none'] }).policies[0].costUsd);
  const many = `${text}${'x\n'.repeat(7)}`;
  assert.deepEqual(replay(Buffer.from(many), { policies: ['none'] }).skippedLines, { count: 7, lines: [n + 1, n + 2, n + 3, n + 4, n + 5] });
  for (const empty of ['', ' \n\t\r\n']) {
    assert.throws(() => replay(Buffer.from(empty)), (e) => e.code === 'ERR_CONDENSE_INVALID_SESSION' && e.message.endsWith('empty file: not a pi session') && e.line === undefined);
  }
});

// Issue 45: pi's cache warmer per policy, and what a saving rests on.
test("pi's warmer warms each policy's own requests; --contexts writes the warms; the parts of a saving add up to it", { skip }, () => {
  const all = ['none', 'config', 'no-thinking-strip', 'live-thinking-strip', '2.9.1', 'config+gate', '2.9.1+gate'];
  const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'replay-warms-'));
  try {
    const r = replay(SAMPLE, { policies: all, renders: true, contextsDir: dir, gate: { enabled: true } });
    const by = (name) => r.policies.find((p) => p.policy === name);
    const none = by('none');
    // Each policy re-sends its own request: the same warm, at the same
    // time, costs what that policy's context costs to read.
    for (const p of r.policies) {
      assert.equal(p.warms.count, 1, p.policy);
      const at = p.renders.findIndex((x) => x.warms.length > 0);
      assert.deepEqual(p.renders[at].warms, none.renders[at].warms, p.policy);
    }
    assert.ok(by('2.9.1').warms.costUsd < none.warms.costUsd && by('config').warms.costUsd < none.warms.costUsd);
    // The warm's line: the previous call's messages, sent again at its time,
    // between that call's line and the next.
    const lines = fs.readFileSync(path.join(dir, 'config.jsonl'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    const w = lines.findIndex((l) => l.kind === 'warm');
    const at = by('config').renders.findIndex((x) => x.warms.length > 0);
    assert.equal(lines[w].k, at);
    assert.equal(lines[w].timestamp, by('config').renders[at].warms[0]);
    assert.equal(lines[w].model, 'anthropic/claude-opus-4-6');
    assert.deepEqual(lines[w - 1].kind === 'call' && lines[w - 1].k, at - 1);
    assert.deepEqual(lines[w].messages, lines[w - 1].messages);
    assert.equal(lines[w + 1].k, at);
    // The parts of each saving sum to its difference from no pruning, to
    // the cent; the gate's holds and the strip are parts of their own.
    for (const p of r.policies) {
      if (p.policy === 'none') {
        assert.deepEqual(p.parts, []);
        continue;
      }
      const sum = p.parts.reduce((a, x) => a + x.costUsd, 0);
      assert.ok(Math.abs(sum - (none.costUsd - p.costUsd)) < 0.005, `${p.policy}: ${sum} against ${none.costUsd - p.costUsd}`);
      assert.ok(Math.abs(sum - (none.costUsd - p.costUsd)) < 1e-9, p.policy);
    }
    const names = (p) => by(p).parts.map((x) => x.part);
    assert.deepEqual(names('config'), ['pruning', 'thinkingStrip', 'compactions', 'warms']);
    assert.deepEqual(names('no-thinking-strip'), ['pruning', 'compactions', 'warms']);
    assert.deepEqual(names('2.9.1+gate'), ['pruning', 'gate', 'compactions', 'warms']);
    assert.deepEqual(names('config+gate'), ['pruning', 'thinkingStrip', 'gate', 'compactions', 'warms']);
    // The gate's part is the gated policy against the release, request for request.
    const requests = (p) => p.costUsd - p.compactionCostUsd - p.warms.costUsd;
    assert.ok(Math.abs(by('2.9.1+gate').parts[1].costUsd - (requests(by('2.9.1')) - requests(by('2.9.1+gate')))) < 1e-12);
    // Asked for alone, a policy's parts are the same (its stages walked unseen).
    const alone = replay(SAMPLE, { policies: ['config+gate'], gate: { enabled: true } }).policies.find((p) => p.policy === 'config+gate');
    assert.deepEqual(alone.parts, by('config+gate').parts);
    assert.deepEqual(replay(SAMPLE, { policies: ['config+gate'], gate: { enabled: true } }).policies.map((p) => p.policy), ['none', 'config+gate']);
    // Which models keep earlier turns' thinking, what the strip rests on.
    assert.deepEqual(r.models.map((m) => [m.model, m.keepsThinking]), [['anthropic/claude-sonnet-4-5', false], ['anthropic/claude-opus-4-6', true]]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
