'use strict';
// The cache-aware gate in pi (issue 31; docs/GATE.md): after pi-condense's
// render of a model call (R), the extension sends R (apply) or the hold H
// (every message the previous request sent, followed by the messages
// appended since as R renders them, or as they are where R folds one into
// a chain block further back). The rule is src/replay/gate.rs
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

const { catalogOf } = require('../js/catalog.js');

// The slots of the last request, in a buffer of their own, doubled when
// full, so a call that appends to them allocates none.
class Slots {
  constructor() {
    this.buffer = new Int32Array(64);
    this.length = 0;
  }

  /** Appends `more` (an array or typed array of slots). */
  append(more) {
    const total = this.length + more.length;
    if (this.buffer.length < total) {
      const grown = new Int32Array(total * 2);
      grown.set(this.buffer.subarray(0, this.length));
      this.buffer = grown;
    }
    this.buffer.set(more, this.length);
    this.length = total;
  }
}

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
    this.sentSlots = new Slots();
    this.inputs = 0; // pi's messages at the last call
    this.model = null;
    this.modelName = null;
    this.modelText = 'null';
    this.system = '';
    this.tools = '[]';
    this.last = null; // the last decision
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
    const tail = cold ? null : this.tail(messages, order, out, render.sourceOf);
    // The model, system and tools cross when they change; the messages
    // the gate has not converted yet it reads from the drop-in's engine.
    const passed = this.passed;
    const code = this.native.decide(
      render.engine,
      this.clock(),
      cold,
      passed.model === this.modelText ? null : (passed.model = this.modelText),
      passed.system === this.system ? null : (passed.system = this.system),
      passed.tools === this.tools ? null : (passed.tools = this.tools),
      cold ? null : answerUsage(messages, this.inputs),
      order,
      tail === null ? NO_SLOTS : tail.slots,
    );
    const decision = this.reasons[code];
    this.coldNext = false;
    this.conversation = render.conversation;
    this.inputs = n;
    this.last = decision;
    if (decision.sent === 'apply') {
      this.sent = out;
      this.sentSlots.length = 0;
      this.sentSlots.append(order);
      return result;
    }
    return { ...result, messages: this.hold(messages, order, out, tail), pruned: true };
  }

  /**
   * The hold's messages: the previous request's slots (an input as pi
   * hands it over now, as the release's render does; an edit as it was
   * sent), then the tail. Up to the first slot where the release differs
   * from the previous request (the native side finds it) they are the
   * release's own messages.
   */
  hold(messages, order, out, tail) {
    const sent = this.sentSlots;
    const length = sent.length;
    const slots = sent.buffer;
    const same = this.native.common;
    const held = out.slice(0, same);
    held.length = length + tail.slots.length;
    for (let i = same; i < length; i++) held[i] = slots[i] >= 0 ? messages[slots[i]] : this.sent[i];
    for (let i = 0; i < tail.slots.length; i++) held[length + i] = tail.messages[i];
    sent.append(tail.slots);
    this.sent = held;
    return held;
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
    return { slots: Int32Array.from(slots), messages: held };
  }

  /** Applies, holds, reasons and the estimated saving so far. */
  totals() {
    return this.native.totals;
  }
}

const NO_SLOTS = new Int32Array(0);

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
 * The usage pi recorded on the answer to the previous request (the first
 * assistant message appended since that has one), as JSON text; null when
 * there is none.
 * The native side reads it as the replay reads a session's.
 */
function answerUsage(messages, from) {
  for (let i = from; i < messages.length; i++) {
    const m = messages[i];
    if (m && m.role === 'assistant' && m.usage && typeof m.usage === 'object') return JSON.stringify(m.usage);
  }
  return null;
}

module.exports = { PiGate };
