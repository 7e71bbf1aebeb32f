'use strict';
// The cache-aware gate in pi (issue 31; docs/GATE.md): after pi-condense's
// render of a model call (R), the extension sends R (apply) or the hold H
// (every message the previous request sent, followed by
// the messages appended since as R renders them, or as they are where R
// folds one into a chain block further back). The rule is src/replay/gate.rs
// `decide`, run by the native `NativeGate` (src/replay/live.rs) on quotes of
// the replay's cost model; the hold is built the way src/replay/walk.rs
// `Lane::gate` builds the replay's. This file only names the messages
// (slots) and builds the arrays.
//
// A slot is what pi-condense's drop-in calls an output message: an input
// index (>= 0; the same message while the conversation only grows) or an
// edit (-id - 1; the same rewrite while the engine keeps it). The gate is
// cold (it applies, and forgets every slot) at its first call, after
// `cool()` (a session opened, a branch, a compaction), on another model
// (the native side), and when pi's messages are not an append of the
// previous call's.

class PiGate {
  /**
   * @param binding the addon (its NativeGate and checkGateSettings)
   * @param settings pi's `condenseNative.gate` (checked natively by name)
   * @param long pi's long cache retention (`PI_CACHE_RETENTION=long`)
   * @param clock ms now (Date.now; tests script it)
   */
  constructor(binding, settings, { long = false, clock = Date.now } = {}) {
    const text = JSON.stringify(settings ?? {});
    this.native = new binding.NativeGate(text, long);
    const read = JSON.parse(binding.checkGateSettings(text, 'condenseNative.gate').json);
    this.settingsText = `horizon ${read.horizon}, budget ${read.budget}`;
    this.clock = clock;
    this.coldNext = true;
    this.conversation = null;
    this.sent = null; // the messages of the last request, and their slots
    this.sentSlots = null;
    this.inputs = 0; // pi's messages at the last call
    this.maxEdit = -1; // the newest edit id the native side has
    this.model = null;
    this.modelName = null;
    this.modelText = 'null';
    this.system = '';
    this.tools = '[]';
    this.last = null; // the last decision
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
      this.modelText = JSON.stringify(model ?? null);
    }
    if (typeof system === 'string') this.system = system;
    if (typeof tools === 'string') this.tools = tools;
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
    const cold =
      this.coldNext || this.sent === null || render.conversation !== this.conversation || render.from < this.inputs || n < this.inputs;
    const fresh = { slots: [], messages: [] };
    const add = (slot, message) => {
      fresh.slots.push(slot);
      fresh.messages.push(message);
    };
    const firstInput = cold ? 0 : this.inputs;
    for (let j = firstInput; j < n; j++) add(j, messages[j]);
    let maxEdit = cold ? -1 : this.maxEdit;
    const known = maxEdit;
    for (let i = 0; i < order.length; i++) {
      const v = order[i];
      if (v < 0) {
        const id = -v - 1;
        if (id > known) add(v, out[i]);
        if (id > maxEdit) maxEdit = id;
      }
    }
    const tail = cold ? null : this.tail(messages, order, out, render.sourceOf);
    const decision = this.native.decide({
      now: this.clock(),
      cold,
      model: this.modelText,
      system: this.system,
      tools: this.tools,
      usage: cold ? undefined : lastUsage(messages, this.inputs),
      release: order instanceof Int32Array ? order : Int32Array.from(order),
      tail: Int32Array.from(tail === null ? [] : tail.slots),
      freshSlots: Int32Array.from(fresh.slots),
      freshJson: JSON.stringify(fresh.messages),
    });
    this.coldNext = false;
    this.conversation = render.conversation;
    this.inputs = n;
    this.maxEdit = maxEdit;
    this.last = decision;
    if (decision.sent === 'apply') {
      this.sent = out;
      this.sentSlots = order;
      return result;
    }
    // The previous request's slots: an input as pi hands it over now (as
    // the release's render does), an edit as it was sent.
    const slots = this.sentSlots;
    const held = new Array(slots.length + tail.slots.length);
    for (let i = 0; i < slots.length; i++) held[i] = slots[i] >= 0 ? messages[slots[i]] : this.sent[i];
    for (let i = 0; i < tail.slots.length; i++) held[slots.length + i] = tail.messages[i];
    this.sent = held;
    this.sentSlots = Int32Array.from([...slots, ...tail.slots]);
    return { ...result, messages: held, pruned: true };
  }

  /**
   * The hold's appended part: the output slots whose input is at or past
   * the previous call's length, the chain blocks that follow such a slot,
   * and (in input order) the appended inputs the release left out.
   */
  tail(messages, order, out, sourceOf) {
    const from = this.inputs;
    const source = (v) => (v >= 0 ? v : sourceOf(-v - 1));
    // Walk back to the first slot of the appended part (an O(appended) scan).
    let start = order.length;
    while (start > 0) {
      const src = source(order[start - 1]);
      if (src >= 0 && src < from) break;
      start--;
    }
    const slots = [];
    const held = [];
    let next = from;
    let anchor = -1;
    for (let i = start; i < order.length; i++) {
      const src = source(order[i]);
      if (src >= 0) {
        anchor = src;
        if (src < from) continue;
        for (; next < src; next++) {
          slots.push(next);
          held.push(messages[next]);
        }
        slots.push(order[i]);
        held.push(out[i]);
        next = src + 1;
      } else if (anchor >= from) {
        slots.push(order[i]);
        held.push(out[i]);
      }
    }
    for (; next < messages.length; next++) {
      slots.push(next);
      held.push(messages[next]);
    }
    return { slots, messages: held };
  }

  /** Applies, holds, reasons and the estimated saving so far. */
  totals() {
    return this.native.totals;
  }
}

function identity(n) {
  const a = new Int32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  return a;
}

/**
 * The prompt tokens pi recorded for the previous request: the usage of the
 * first assistant message appended since (its answer), if any.
 */
function lastUsage(messages, from) {
  for (let i = from; i < messages.length; i++) {
    const m = messages[i];
    if (m && m.role === 'assistant' && m.usage && typeof m.usage === 'object') {
      const u = m.usage;
      const total = (Number(u.input) || 0) + (Number(u.cacheRead) || 0) + (Number(u.cacheWrite) || 0);
      return total > 0 ? total : undefined;
    }
  }
  return undefined;
}

module.exports = { PiGate };
