'use strict';

// The cache-aware gate in the replay (issue 31; docs/GATE.md,
// src/gate/rule.rs): on generated sessions whose gaps are known (some
// user turns come back after 6 minutes, past the 5-minute lifetime), a
// gated release applies at every cold call, holds otherwise unless it
// pays or the budget is passed, and a hold sends the previous request's
// messages byte for byte (its prefix hash is the previous output's hash)
// followed by every appended message. With the budget or the horizon at
// their extremes it is the release itself. The settings are checked by
// name, in the API and the CLI. What was sent is exported, in the render
// rows and streamed to files, and is what was priced.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { xxh3 } = require('@node-rs/xxhash');

const { replay, tune, gateSettings, backend } = require('..');
const { tuneSession } = require('./helpers/tune-sessions.js');

const skip = backend === 'native' ? false : 'the replay needs the native binding';
const TTL_MS = 5 * 60_000;
const RELEASES = [
  ['config', 'config+gate'],
  ['2.9.1', '2.9.1+gate'],
];

function run(seed, gate) {
  const bytes = Buffer.from(tuneSession(seed));
  const r = replay(bytes, { policies: ['none', 'config', '2.9.1', 'config+gate', '2.9.1+gate'], renders: true, gate });
  const by = Object.fromEntries(r.policies.map((p) => [p.policy, p]));
  return { r, by };
}

for (const seed of [1, 2, 3]) {
  test(`gate, session ${seed}: cold calls apply, holds keep what was sent, and it pays`, { skip }, () => {
    const { r, by } = run(seed);
    for (const [plain, gated] of RELEASES) {
      const g = by[gated];
      const base = by[plain];
      assert.equal(g.renders.length, r.modelCalls);
      let held = 0;
      g.renders.forEach((x, k) => {
        assert.ok(['apply', 'hold'].includes(x.gate), `${gated} call ${k}`);
        assert.equal(x.gate === 'hold', x.gateReason === 'waits', `${gated} call ${k}`);
        const prev = g.renders[k - 1];
        const gap = k > 0 ? x.timestamp - prev.timestamp : Infinity;
        // A gap past the lifetime with no warm in between: nothing to lose.
        if (gap > TTL_MS) assert.equal(x.gateReason, 'cold', `${gated} call ${k}: ${gap} ms after the previous`);
        if (x.gate === 'apply') {
          // What is applied is the release's own render.
          assert.equal(x.outputHash, base.renders[k].outputHash, `${gated} call ${k}`);
          return;
        }
        held++;
        // A hold: the previous request, byte for byte, then every message
        // appended since (none lost).
        assert.equal(x.breakIndex, prev.messagesAfter, `${gated} call ${k}`);
        assert.equal(x.prefixHash, prev.outputHash, `${gated} call ${k}`);
        assert.ok(x.messagesAfter >= prev.messagesAfter + (x.messagesBefore - prev.messagesBefore), `${gated} call ${k}`);
        assert.equal(x.callClass, 'append', `${gated} call ${k}`);
      });
      assert.ok(held > 0, `${gated} held at some call`);
      assert.equal(g.gate.holds, held);
      assert.equal(g.gate.applies + g.gate.holds, r.modelCalls);
      assert.equal(g.gate.reasons.waits, held);
      assert.equal(g.gate.horizon, 'auto');
      assert.equal(g.gate.budget, 0.8);
      // Priced by the same bill: never more than the release, nor than none.
      assert.ok(g.costUsd <= base.costUsd, `${gated} $${g.costUsd} vs ${plain} $${base.costUsd}`);
      assert.ok(g.costUsd <= by.none.costUsd, `${gated} $${g.costUsd} vs none $${by.none.costUsd}`);
      // Ungated policies carry no gate fields.
      assert.equal(base.gate, undefined);
      assert.equal(base.renders[0].gate, undefined);
    }
  });
}

test('gate: a budget every hold passes, or a horizon that always pays, is the release itself', { skip }, () => {
  for (const [gate, reason] of [
    [{ budget: 0.001 }, 'budget'],
    [{ horizon: 1e9 }, 'pays'],
  ]) {
    const { by } = run(2, gate);
    for (const [plain, gated] of RELEASES) {
      const g = by[gated];
      assert.equal(g.gate.holds, 0, `${gated} ${JSON.stringify(gate)}`);
      assert.ok(g.gate.reasons[reason] > 0, `${gated} ${JSON.stringify(gate)}: ${JSON.stringify(g.gate.reasons)}`);
      assert.deepEqual(
        g.renders.map((x) => x.outputHash),
        by[plain].renders.map((x) => x.outputHash),
      );
      assert.equal(g.costUsd, by[plain].costUsd);
    }
  }
});

test('gate settings are checked by name, in the API and the CLI', { skip }, () => {
  assert.deepEqual(gateSettings({}), { horizon: 'auto', budget: 0.8 });
  assert.deepEqual(gateSettings({ enabled: true, horizon: 12, budget: 0.5 }), { horizon: 12, budget: 0.5 });
  for (const [bad, says] of [
    [{ budget: 2 }, 'gate.budget must be'],
    [{ horizon: 'soon' }, 'gate.horizon must be'],
    [{ horizn: 3 }, 'gate.horizn is not a gate setting'],
  ]) {
    assert.throws(
      () => replay(Buffer.from(tuneSession(1)), { policies: ['config+gate'], gate: bad }),
      (e) => e.code === 'ERR_CONDENSE_INVALID_ARGUMENT' && e.message.includes(says),
      JSON.stringify(bad),
    );
  }
  assert.throws(
    () => replay(Buffer.from(tuneSession(1)), { policies: ['2.4.3+gate'] }),
    (e) => e.code === 'ERR_CONDENSE_INVALID_ARGUMENT' && e.message.includes("'config+gate'"),
  );
  assert.throws(
    () => replay(Buffer.from(tuneSession(1)), { policies: ['config+gate'], cacheModel: 'prefix' }),
    (e) => e.code === 'ERR_CONDENSE_INVALID_ARGUMENT' && e.message.includes("provider's cache model"),
  );
  // The tune reports totals: what was sent is the replay's to export.
  assert.throws(
    () => tune(path.join(__dirname, '..', 'sample', 'session.jsonl'), { contexts: true }),
    (e) => e.code === 'ERR_CONDENSE_INVALID_ARGUMENT' && /contexts is the replay's/.test(e.message),
  );
  const cli = (...args) => spawnSync(process.execPath, [path.join(__dirname, '..', 'bin', 'condense-native.js'), ...args], { encoding: 'utf8' });
  const noPolicy = cli('replay', '--gate', '{"budget":0.5}', 'missing.jsonl');
  assert.equal(noPolicy.status, 2);
  assert.match(noPolicy.stderr, /--gate sets the gate of the \+gate policies/);
  const bad = cli('replay', '--policy', 'config+gate', '--gate', '{"budget":0}', 'missing.jsonl');
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--gate\.budget must be a share of the context window/);
});

// The replay's hash definitions (docs/REPLAY.md, "prefixHash"), computed
// here from the exported messages.
const digest = (m) => xxh3.xxh64(Buffer.from(JSON.stringify(m), 'utf8'));
function hashOf(messages) {
  const bytes = Buffer.alloc(8 * messages.length);
  messages.forEach((m, i) => bytes.writeBigUInt64LE(digest(m), 8 * i));
  return xxh3.xxh64(bytes).toString(16).padStart(16, '0');
}

test('what was sent, exported: the messages priced, in the rows and in DIR/<policy>.jsonl', { skip }, () => {
  const bytes = Buffer.from(tuneSession(3));
  const policies = ['none', 'config', 'config+gate', '2.9.1+gate'];
  const r = replay(bytes, { policies, contexts: true });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-contexts-'));
  try {
    const streamed = replay(bytes, { policies, contextsDir: dir });
    assert.equal(streamed.policies[0].renders, undefined, 'contextsDir alone adds no rows');
    for (const p of r.policies) {
      const lines = fs.readFileSync(path.join(dir, `${p.policy}.jsonl`), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
      assert.equal(lines.length, r.modelCalls, p.policy);
      p.renders.forEach((x, k) => {
        const what = `${p.policy} call ${k}`;
        // The exported array is what the replay measured and priced.
        assert.equal(JSON.stringify(x.messages).length, x.charsAfter, what);
        assert.equal(x.messages.length, x.messagesAfter, what);
        assert.equal(hashOf(x.messages), x.outputHash, what);
        assert.equal(hashOf(x.messages.slice(0, x.breakIndex)), x.prefixHash, what);
        if (x.gate === 'hold') assert.deepEqual(x.messages.slice(0, x.breakIndex), p.renders[k - 1].messages, what);
        // The file holds the same, a line per call.
        const line = lines[k];
        assert.deepEqual(Object.keys(line), p.gate ? ['k', 'kind', 'timestamp', 'model', 'gate', 'messages'] : ['k', 'kind', 'timestamp', 'model', 'messages'], what);
        assert.equal(line.kind, 'call', what);
        assert.equal(line.k, k);
        assert.equal(line.timestamp, x.timestamp);
        assert.equal(line.model, 'anthropic/claude-sonnet-4-5');
        if (p.gate) assert.equal(line.gate, x.gate, what);
        assert.deepEqual(line.messages, x.messages, what);
      });
    }
    // none sends the context as pi built it.
    const none = r.policies.find((p) => p.policy === 'none');
    none.renders.forEach((x) => assert.equal(x.charsAfter, x.charsBefore));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
