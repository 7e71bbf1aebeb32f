'use strict';
// The replay's provider cache model against the live measurements it was
// built from (CACHE-MODEL.md section 4; issue 21 item 7). Small session
// files, one per probe (a prime, a strip that opens a gap, a strip that
// moves an existing gap, thinking in a closed cycle), must give the hit or
// miss the live API gave, with the token equalities the model's rule makes
// exact; a 24-call file-read session must give the A/B's ordering (bare
// and strip-off within a few percent, strip-on clearly more, its extra
// cost the thinking strip at a flush); and the corpus sessions converted
// to pi files must be appends that read what the previous call read and
// wrote, as 95.9% of real Claude Code calls are. Sizes are fixed at 4
// chars a token. Runs under `node --test` and `bun test`.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const { replay, backend } = require('../index.js');
const { threeCallProbe, movingGapProbe, closedCycleProbe, fileReadSession } = require('./helpers/probe-sessions.js');

const ROOT = path.join(__dirname, '..');
const CORPUS = path.join(ROOT, '..', 'shared', 'corpus');
const CPT = 4;
// Sonnet 4.5's minimum cacheable prefix (CACHE-MODEL.md 2).
const MIN_TOKENS = 1024;

/** Why the file cannot run here, or false. */
function skipReason() {
  if (backend !== 'native' || typeof replay !== 'function') return 'the replay needs the native binding';
  try {
    const r = replay(Buffer.from(threeCallProbe()), { policies: ['none'], renders: true, charsPerToken: CPT });
    if (r.policies[0].renders[0].callClass === undefined) return 'the built addon predates the provider cache model';
  } catch (e) {
    return `the native replay is unusable: ${e.message}`;
  }
  return false;
}
const skip = skipReason();

/** Policy `none`'s renders of a session text. */
function calls(text) {
  return replay(Buffer.from(text), { policies: ['none'], renders: true, charsPerToken: CPT }).policies[0].renders;
}
const total = (x) => x.inputTokens + x.cacheReadTokens + x.cacheWriteTokens;
const tokens = (x) => ({ read: x.cacheReadTokens, write: x.cacheWriteTokens, input: x.inputTokens });

/** Tokens of the wire thinking blocks of the named assistant entries. */
function thinkingTokens(text, ids) {
  let chars = 0;
  for (const line of text.split('\n')) {
    if (!line) continue;
    const e = JSON.parse(line);
    if (e.type !== 'message' || !ids.includes(e.id)) continue;
    for (const b of e.message.content) {
      // pi-ai's convertMessages: the block as Anthropic receives it.
      if (b.type === 'thinking') chars += JSON.stringify({ type: 'thinking', thinking: b.thinking, signature: b.thinkingSignature }).length;
    }
  }
  return chars / CPT;
}

test('prime: request 2 with a1 thinking kept writes everything and reads nothing', { skip }, () => {
  const r = calls(threeCallProbe());
  assert.equal(r.length, 3);
  // Request 1 ([u1]) is under the 1,024-token minimum: nothing cached.
  assert.ok(total(r[0]) < MIN_TOKENS, `request 1 is ${total(r[0])} tokens`);
  assert.deepEqual(tokens(r[0]), { read: 0, write: 0, input: total(r[0]) });
  // Request 2: the marker is on r1, the last block: all of it written.
  assert.ok(total(r[1]) > 4000 && total(r[1]) < 6000, `request 2 is ${total(r[1])} tokens (the live prime: 5,004)`);
  assert.deepEqual(tokens(r[1]), { read: 0, write: total(r[1]), input: 0 });
});

test('both kept: request 3 reads request 2 whole and writes only the new tail', { skip }, () => {
  const r = calls(threeCallProbe());
  assert.equal(r[2].callClass, 'append');
  assert.equal(r[2].rewriteCause, null);
  assert.equal(r[2].cacheReadTokens, r[1].cacheReadTokens + r[1].cacheWriteTokens);
  assert.equal(r[2].cacheWriteTokens, total(r[2]) - total(r[1]));
  assert.equal(r[2].inputTokens, 0);
});

test('a gap: a1 thinking stripped, a2 kept, before request 3 is a full miss that writes less than the prime', { skip }, () => {
  const keptText = threeCallProbe();
  const gapText = threeCallProbe({ strip: ['a1'] });
  const kept = calls(keptText);
  const gap = calls(gapText);
  // Requests 1 and 2 are the same in both files.
  assert.deepEqual(gap.slice(0, 2).map(tokens), kept.slice(0, 2).map(tokens));
  assert.equal(gap[2].cacheReadTokens, 0);
  assert.equal(gap[2].inputTokens, 0);
  assert.equal(gap[2].cacheWriteTokens, total(gap[2]));
  assert.equal(gap[2].callClass, 'rewrite');
  assert.notEqual(gap[2].rewriteCause, null);
  // Live: write 3,485 < prime 5,004. The stripped a1 breaks the open
  // cycle's run of thinking, so a2's thinking is not billed either: the
  // request is request 3 kept minus both thinking blocks, exactly.
  assert.ok(gap[2].cacheWriteTokens < kept[1].cacheWriteTokens);
  assert.equal(total(kept[2]) - total(gap[2]), thinkingTokens(keptText, ['a1', 'a2']));
});

test('a strip that moves an existing gap: a2 stripped after a1 already was is still a hit', { skip }, () => {
  const stay = calls(movingGapProbe({ moveGap: false }));
  const move = calls(movingGapProbe({ moveGap: true }));
  assert.equal(move.length, 4);
  for (const r of [stay, move]) {
    // Request 3 is the gap (a1 stripped): a full miss.
    assert.equal(r[2].cacheReadTokens, 0);
    assert.equal(r[2].cacheWriteTokens, total(r[2]));
  }
  // Once a1 has no thinking, a2's is not billed: stripping it changes
  // nothing billed, so request 4 reads all of request 3.
  assert.equal(move[3].callClass, 'append');
  assert.equal(move[3].rewriteCause, null);
  assert.equal(move[3].cacheReadTokens, move[2].cacheReadTokens + move[2].cacheWriteTokens);
  assert.equal(move[3].cacheWriteTokens, total(move[3]) - total(move[2]));
  assert.deepEqual(move.map(tokens), stay.map(tokens));
});

test('closed-cycle thinking bills 0 input tokens: stripping it changes neither tokens nor hits', { skip }, () => {
  const kept = calls(closedCycleProbe());
  const none = calls(closedCycleProbe({ thinking: false }));
  const stripNow = calls(closedCycleProbe({ stripAt: 2 }));
  const stripLater = calls(closedCycleProbe({ stripAt: 3 }));
  assert.equal(kept.length, 4);
  // Request 3 follows u2: a1's and a2's thinking are in a closed cycle, so
  // the request bills as if they never had any.
  assert.equal(total(kept[2]), total(none[2]));
  assert.equal(total(kept[3]), total(none[3]));
  // Stripped by an edit right after u2, or one call later: the same
  // tokens and the same hit or miss as never stripped.
  for (const [label, r] of [
    ['stripped before request 3', stripNow],
    ['stripped before request 4', stripLater],
  ]) {
    assert.deepEqual(r.map(tokens), kept.map(tokens), label);
    assert.deepEqual(
      r.map((x) => x.callClass),
      kept.map((x) => x.callClass),
      label,
    );
  }
  // Request 4 is an append whether or not the closed thinking was just
  // stripped.
  for (const r of [kept, stripLater]) {
    assert.equal(r[3].callClass, 'append');
    assert.equal(r[3].cacheReadTokens, r[2].cacheReadTokens + r[2].cacheWriteTokens);
  }
});

test('24 file reads: bare and strip-off within 5%, strip-on clearly more, from the thinking strip at a flush', { skip }, (t) => {
  const ab = fileReadSession();
  const buf = Buffer.from(ab.text);
  // The flush after turn 17 keeps 16: its boundary is a2's time.
  assert.equal(ab.boundary, ab.assistantTimes[1]);
  const on = replay(buf, { policies: ['none', 'config'], renders: true, charsPerToken: CPT });
  const off = replay(buf, { policies: ['config'], renders: true, charsPerToken: CPT, config: { contextPrune: { thinkingStrip: { enabled: false, keepLastTurns: 16 } } } });
  assert.equal(on.modelCalls, 24);
  const bare = on.policies[0];
  const stripOn = on.policies[1];
  const stripOff = off.policies[1];
  assert.deepEqual(stripOff.config.thinkingStrip, { enabled: false, keepLastTurns: 16 });
  assert.deepEqual(stripOn.config.thinkingStrip, { enabled: true, keepLastTurns: 16 });
  t.diagnostic?.(`USD: bare ${bare.costUsd.toFixed(4)}, strip off ${stripOff.costUsd.toFixed(4)}, strip on ${stripOn.costUsd.toFixed(4)} (live: 0.6495, 0.6430, 0.8531)`);
  t.diagnostic?.(`cache writes: bare ${bare.cacheWriteTokens}, strip off ${stripOff.cacheWriteTokens}, strip on ${stripOn.cacheWriteTokens} (live: 89,449, 87,781, 148,222)`);

  assert.ok(Math.abs(stripOff.costUsd - bare.costUsd) / bare.costUsd < 0.05, `strip off ${stripOff.costUsd} vs bare ${bare.costUsd}`);
  assert.ok(stripOn.costUsd > 1.15 * bare.costUsd, `strip on ${stripOn.costUsd} vs bare ${bare.costUsd}`);
  // Bare is all appends.
  assert.deepEqual(bare.callClasses, { first: 1, append: 23, partial: 0, rewrite: 0, expired: 0 });
  // The costliest cause of strip-on is the thinking strip at a flush.
  const worst = [...stripOn.causes].sort((a, b) => b.costUsd - a.costUsd)[0];
  assert.equal(worst.cause, 'thinkingStrip at a flush');
  // It is one break, at the first request the frontier is in force for
  // (the 18th, the first with more than 16 assistant turns in context):
  // a1 loses its thinking, which ends the open cycle's run, so no
  // thinking is billed any more and everything is rewritten at 0% reuse.
  const breaks = stripOn.renders.flatMap((x, k) => (x.callClass === 'append' || x.callClass === 'first' ? [] : [k]));
  assert.deepEqual(breaks, [17]);
  const hit = stripOn.renders[17];
  assert.deepEqual(hit.rewriteCause, { cause: 'thinkingStrip', flush: true, gapSeconds: null });
  assert.equal(hit.stats.thinkingStripped, 1);
  assert.equal(hit.cacheReadTokens, 0);
  assert.equal(hit.cacheWriteTokens, total(hit));
  const before = Array.from({ length: 17 }, (_, i) => `a${i + 1}`);
  assert.equal(total(bare.renders[17]) - total(hit), thinkingTokens(ab.text, before));
  // The request shrank (no thinking billed): no appended tail, so all of
  // its write is the cause's.
  assert.ok(total(hit) < total(stripOn.renders[16]));
  assert.equal(worst.tokensWritten, hit.cacheWriteTokens);
  assert.equal(worst.calls, 1);
});

test('corpus sessions as pi files: at least 95% of calls after the first are appends reading what the previous call read and wrote', { skip: skip || (!fs.existsSync(CORPUS) && `${CORPUS} is absent`), timeout: 120_000 }, (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cache-probes-'));
  try {
    const names = ['small', 'medium', 'large'].filter((n) => fs.existsSync(path.join(CORPUS, `${n}.json`)));
    assert.ok(names.includes('small') && names.includes('medium'), 'small and medium are in the corpus');
    execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'corpus-to-session.js'), dir, ...names], { stdio: 'pipe' });
    for (const name of names) {
      const started = Date.now();
      // Sizes calibrated on the usage pi recorded, as for a real session.
      const r = replay(path.join(dir, `${name}.jsonl`), { policies: ['none'], renders: true }).policies[0].renders;
      let good = 0;
      const bad = [];
      for (let k = 1; k < r.length; k++) {
        const expected = r[k - 1].cacheReadTokens + r[k - 1].cacheWriteTokens;
        const same = Math.abs(r[k].cacheReadTokens - expected) <= 1e-9 * Math.max(1, Math.abs(expected));
        if (r[k].callClass === 'append' && same) good++;
        else bad.push(`${k}:${r[k].callClass}${r[k].rewriteCause ? `/${r[k].rewriteCause.cause}` : ''}`);
      }
      const share = good / (r.length - 1);
      t.diagnostic?.(`${name}: ${good}/${r.length - 1} appends (${(share * 100).toFixed(1)}%) in ${Date.now() - started} ms; others ${bad.join(' ')}`);
      assert.ok(r.length > 10, `${name}: ${r.length} calls`);
      assert.ok(share >= 0.95, `${name}: ${good} of ${r.length - 1} calls are appends (${bad.join(' ')})`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
