'use strict';
// The cache-aware gate in pi (issue 31; docs/GATE.md): after pi-condense's
// render of a model call (R), the extension sends R (apply) or the hold H
// (every message the previous request sent, followed by the messages
// appended since as R renders them, or as they are where R folds one into
// a chain block further back). The rule is src/gate/rule.rs `decide`, run
// by the native `NativeGate` (src/gate/live.rs) on quotes of the replay's
// cost model, which also lays out the hold (src/gate/hold.rs, as the
// replay's walk builds its holds). This file only names the messages
// (slots) and maps the layout to pi's objects.
//
// A slot is what pi-condense's drop-in calls an output message: an input
// index (>= 0; the same message while the conversation only grows) or an
// edit (-id - 1; the same rewrite while the engine keeps it). The gate is
// cold (it applies, and forgets every slot) at its first call, after
// `cool()` (a session opened, a branch, a compaction), on another model
// (the native side), and when pi's messages are not an append of the
// previous call's.

const { catalogOf } = require('../js/catalog.js');

class PiGate {
  /**
   * @param binding the addon (its NativeGate and checkGateSettings)
   * @param settings pi's `condenseNative.gate` (checked natively by name)
   * @param long pi's long cache retention (`PI_CACHE_RETENTION=long`)
   * @param reserveTokens pi's compaction.reserveTokens while its compaction
   *   is on (pi/locate.js compactionReserveOf), else null
   * @param clock ms now (Date.now; tests script it)
   */
  constructor(binding, settings, { long = false, reserveTokens = null, clock = Date.now } = {}) {
    const text = JSON.stringify(settings ?? {});
    this.native = new binding.NativeGate(text, long, reserveTokens);
    const read = JSON.parse(binding.checkGateSettings(text, 'condenseNative.gate').json);
    this.settingsText = `horizon ${read.horizon}, budget ${read.budget}${read.keepReasoning === false ? ', reasoning not kept' : ''}`;
    this.clock = clock;
    this.coldNext = true;
    this.conversation = null;
    this.sent = null; // the messages of the last request
    this.inputs = 0; // pi's messages at the last call
    this.model = null;
    this.modelName = null;
    this.modelText = 'null';
    this.system = '';
    this.tools = '[]';
    this.last = null; // the last decision
    this.lastCallAt = null; // when the last request went out (ms)
    this.passed = { model: null, system: null, tools: null }; // what the native side has
    // Each reason's name and what it sends, by the number decide returns.
    this.reasons = binding.NativeGate.reasons().map((r) => Object.freeze({ reason: r.name, sent: r.sent }));
  }

  /** The next call is cold. */
  cool() {
    this.coldNext = true;
  }

  /**
   * What the request goes out with, from pi's turn context: the model
   * (`ctx.model`), the system prompt and the active tools' definitions.
   */
  observe(model, system, tools) {
    if (model !== this.model) {
      const name = model && typeof model === 'object' ? `${model.provider}/${model.id}` : null;
      // Another model reads another cache (the native side keys it alike).
      if (name !== this.modelName) this.coldNext = true;
      this.model = model;
      this.modelName = name;
      this.modelText = JSON.stringify({ model: model ?? null, catalog: catalogOf(model) });
    }
    if (typeof system === 'string') this.system = system;
    if (typeof tools === 'string') this.tools = tools;
  }

  /**
   * pi's cache warmer re-sent the last request at `at` (ms): its cache
   * entries live on from then, for the native side as for the replay's
   * warms (src/replay/warmer.rs).
   */
  warmed(at) {
    this.native.warmed(at);
  }

  /**
   * The warms pi recorded since the last request (its `usage` entries of
   * kind `cache_warm`, from the branch's leaf back to that request), each
   * told to the native side in order. `sessionManager`: pi's turn
   * context's (`ctx.sessionManager`); walks only the entries written
   * since.
   */
  learnWarms(sessionManager) {
    const since = this.lastCallAt;
    if (since === null || !sessionManager || typeof sessionManager.getLeafEntry !== 'function') return;
    const found = [];
    for (let e = sessionManager.getLeafEntry(); e; e = e.parentId ? sessionManager.getEntry(e.parentId) : undefined) {
      const t = Date.parse(e.timestamp);
      if (!(t > since)) break;
      if (e.type === 'usage' && e.kind === 'cache_warm') found.push(t);
    }
    for (let i = found.length - 1; i >= 0; i--) this.warmed(found[i]);
  }

  /**
   * The gate's choice at one call: `messages` is pi's array, `result` the
   * release's render of it, `render` the drop-in's last render
   * (js/dropin.js `lastRender`). Returns the result to hand pi-condense:
   * the release's, or the hold in its place.
   */
  choose(messages, result, render) {
    const n = messages.length;
    const order = render.order ?? identity(n);
    const out = render.order === null ? messages : result.messages;
    // Cold: the first call, after cool(), another conversation, or
    // messages that are not an append of the previous call's (the drop-in
    // read one again before that call's length).
    const cold = this.coldNext || render.conversation !== this.conversation || render.from < this.inputs;
    // The model, system and tools cross when they change; the messages
    // the gate has not converted yet it reads from the drop-in's engine.
    const passed = this.passed;
    const answer = cold ? null : answerOf(messages, this.inputs);
    const now = this.clock();
    this.lastCallAt = now;
    const code = this.native.decide(
      render.engine,
      now,
      cold,
      passed.model === this.modelText ? null : (passed.model = this.modelText),
      passed.system === this.system ? null : (passed.system = this.system),
      passed.tools === this.tools ? null : (passed.tools = this.tools),
      answer === null ? null : JSON.stringify(answer.usage),
      answer === null ? null : answer.at,
      order,
    );
    const decision = this.reasons[code];
    this.coldNext = false;
    this.conversation = render.conversation;
    this.inputs = n;
    this.last = decision;
    if (decision.sent === 'apply') {
      this.sent = out;
      return result;
    }
    return { ...result, messages: this.hold(messages, out, this.native.held), pruned: true };
  }

  /**
   * The hold's messages as the native side laid them out
   * (src/gate/live.rs `Held`): up to `common` the release's own, then per
   * message pi's input now (`-j - 1`), the previous request's (before
   * `previous`) or the release's render's.
   */
  hold(messages, out, { common, previous, sources }) {
    const held = out.slice(0, common);
    held.length = common + sources.length;
    for (let k = 0; k < sources.length; k++) {
      const v = sources[k];
      held[common + k] = v < 0 ? messages[-v - 1] : common + k < previous ? this.sent[v] : out[v];
    }
    this.sent = held;
    return held;
  }

  /** Applies, holds, reasons and the estimated saving so far. */
  totals() {
    return this.native.totals;
  }
}

// 0, 1, ... n - 1: the slots of a render that is the input itself (kept
// and grown, handed out as views).
let counting = new Int32Array(0);
function identity(n) {
  if (counting.length < n) {
    counting = new Int32Array(Math.max(n, counting.length * 2, 64));
    for (let i = 0; i < counting.length; i++) counting[i] = i;
  }
  return counting.subarray(0, n);
}

/**
 * The answer to the previous request (the first assistant message appended
 * since that has a usage): `{ usage, at }`, its usage and its `timestamp`
 * (null when not a number); null when there is none. The native side reads
 * the usage as the replay reads a session's.
 */
function answerOf(messages, from) {
  for (let i = from; i < messages.length; i++) {
    const m = messages[i];
    if (m && m.role === 'assistant' && m.usage && typeof m.usage === 'object') {
      return { usage: m.usage, at: typeof m.timestamp === 'number' && Number.isFinite(m.timestamp) ? m.timestamp : null };
    }
  }
  return null;
}

module.exports = { PiGate };
