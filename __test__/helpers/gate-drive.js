'use strict';
// pi's live gate (pi/gate.js over the drop-in) driven through a session
// file's model calls as pi would have driven it, beside the replay's gated
// walk of the same file (issue 45): per call, pi's context at the call's
// leaf (pi's SessionManager), pi-condense's indexer rebuilt from the branch
// as its flushes left it (the reference's own `reconstructFromSession`, on
// one indexer object, as pi keeps one), the model of the call (pi-ai's
// catalog object), the system prompt and tools of the session's system
// message, the call's time, pi's warms before it (those the replay's warmer
// sent for this policy, as pi's warm entries would have said), and `cool()`
// where pi would have called it (a compaction, a branch). Returns each
// call's reason from both.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { importPi, frontierOf } = require('./pi-session.js');
const { loadReference, releaseArgs } = require('./indexer.js');
const { PiGate } = require('../../pi/gate.js');

const PI_AI = path.join(__dirname, '..', '..', 'node_modules', '@earendil-works', 'pi-ai');

/** pi-ai's model object for `provider/id` (its catalog data). */
function piModel(provider, id) {
  const file = path.join(PI_AI, 'dist', 'providers', 'data', `${provider}.json`);
  const data = JSON.parse(fs.readFileSync(file, 'utf8'));
  for (const byId of Object.values(data)) {
    for (const m of Object.values(byId)) if (m.id === id && m.provider === provider) return m;
  }
  throw new Error(`pi-ai's catalog has no ${provider}/${id}`);
}

/** The system prompt pi-ai sends for a system message, and its tools as JSON. */
function systemOf(message) {
  const parts = [typeof message.content === 'string' ? message.content : ''];
  for (const v of Object.values(message.sections ?? {})) if (v !== null && v !== undefined) parts.push(String(v));
  return { system: parts.filter((p) => p.length > 0).join('\n\n'), tools: JSON.stringify(message.toolsAdded ?? []) };
}

/**
 * Drives the live gate over `text` for `policy` ('config+gate' or
 * '2.9.1+gate') with `gateSettings`. `replay` is the addon's replay;
 * returns `{ live, replayed, calls }`: the reasons per call.
 */
async function driveGate(native, replay, text, policy, { gateSettings = { enabled: true }, options = {} } = {}) {
  const dialect = policy === 'config+gate' ? '2.4.3' : '2.9.1';
  const ref = await loadReference(dialect);
  const pi = await importPi();
  const r = replay(Buffer.from(text), { policies: [policy], renders: true, thinkingBoundary: 'recorded', gate: gateSettings, ...options });
  const p = r.policies.find((q) => q.policy === policy);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gate-drive-'));
  try {
    const file = path.join(dir, 'session.jsonl');
    fs.writeFileSync(file, text);
    const sm = pi.SessionManager.open(file, dir);
    const { dropIns } = require('../../js/dropin.js');
    const prune = dialect === '2.4.3' ? dropIns.pruneMessages24 : dropIns.pruneMessages29;
    const indexer = new ref.ToolCallIndexer();
    let now = 0;
    const gate = new PiGate(native, gateSettings, { clock: () => now });
    const live = [];
    let seen = new Set();
    for (const [k, render] of p.renders.entries()) {
      if (render.leafId === null) throw new Error(`call ${k} has no leaf`);
      sm.branch(render.leafId);
      const branch = sm.getBranch();
      // pi cools the gate on a compaction and on a branch (session_compact,
      // session_tree).
      if (k > 0 && branch.some((e) => !seen.has(e.id) && (e.type === 'compaction' || e.type === 'branch_summary'))) gate.cool();
      seen = new Set(branch.map((e) => e.id));
      indexer.reconstructFromSession({ sessionManager: { getBranch: () => branch } });
      const messages = sm.buildSessionContext().messages.filter((m) => m.role !== 'system');
      const systemMessage = [...branch].reverse().find((e) => e.type === 'message' && e.message.role === 'system');
      const { system, tools } = systemMessage ? systemOf(systemMessage.message) : { system: '', tools: '[]' };
      const answer = sm.getEntry(render.entryId).message;
      now = render.timestamp;
      for (const t of render.warms) gate.warmed(t);
      gate.observe(piModel(answer.provider, answer.model), system, tools);
      const boundary = dialect === '2.4.3' ? (frontierOf(branch, dialect)?.thinkingStripBoundaryTimestamp ?? undefined) : undefined;
      const input = structuredClone(messages);
      const result = prune(input, ...releaseArgs(dialect, indexer, p.config, boundary, undefined));
      gate.choose(input, result, dropIns.lastRender(indexer, dialect));
      live.push(gate.last.reason);
    }
    return { live, replayed: p.renders.map((x) => x.gateReason), policy: p, replay: r };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

module.exports = { driveGate, piModel };
