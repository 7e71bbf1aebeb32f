'use strict';

// The array APIs: `pruneMessages` on a JS array and the incremental
// `PruneSession`. The native side answers with an edit script; this file
// applies it, so untouched messages stay the caller's own objects and only
// edited or inserted messages are new (parsed from the script's JSON).

const pure = require('./pure.js');

function makeArrayApi(native, { argumentError, jsonOrNull, boundaryOf }) {
  const hasNative = typeof native.pruneArray === 'function' && typeof native.NativeSession === 'function';

  function checkArray(messages, where) {
    if (!Array.isArray(messages)) throw argumentError(`${where}: messages must be an array`);
  }

  // JSON text of one message as JSON.stringify writes it inside an array.
  function messageJson(message, index) {
    let text;
    try {
      text = JSON.stringify(message);
    } catch (cause) {
      const err = argumentError(`message ${index} cannot be serialized as JSON: ${cause.message}`);
      err.cause = cause;
      throw err;
    }
    return text === undefined ? 'null' : text;
  }

  function unchanged(messages, r) {
    return { messages, pruned: false, beforeChars: 0, afterChars: 0, frontier: r.frontier, stats: r.stats };
  }

  function result(out, r) {
    return { messages: out, pruned: true, beforeChars: r.beforeChars, afterChars: r.afterChars, frontier: r.frontier, stats: r.stats };
  }

  // A cheap scan that says when no phase can change anything (and nothing
  // would throw), so a no-op costs what the pure-JS no-op costs instead of a
  // serialization. It only ever answers "maybe" when unsure.
  function hasEntries(o) {
    if (o === null || typeof o !== 'object') return false;
    for (const _ in o) return true;
    return false;
  }

  function mayChange(messages, state, config) {
    const s = state || {};
    const c = config || {};
    const stubs = hasEntries(s.records) || hasEntries(s.dedupAliases);
    const purge = Boolean(c.errorPurge && c.errorPurge.enabled);
    const chains = Boolean(c.chainCompression && c.chainCompression.enabled) && Array.isArray(s.chains) && s.chains.length > 0;
    const thinking = Boolean(c.thinkingStrip && c.thinkingStrip.enabled);
    if (chains) return true;
    for (const m of messages) {
      if (m === null) return true;
      if (typeof m !== 'object') continue;
      if (m.role === 'toolResult') {
        if (stubs && typeof m.toolCallId === 'string') return true;
        if (purge && m.isError === true) return true;
      } else if (thinking && m.role === 'assistant') {
        const content = m.content;
        if (!Array.isArray(content)) continue;
        for (const b of content) if (b === null || (typeof b === 'object' && b.type === 'thinking')) return true;
      }
    }
    return false;
  }

  function noOp(messages, config, boundary) {
    const t = config && config.thinkingStrip;
    let next = null;
    if (t && t.enabled) {
      const stamps = [];
      for (const m of messages) {
        if (m !== null && typeof m === 'object' && m.role === 'assistant' && typeof m.timestamp === 'number') stamps.push(m.timestamp);
      }
      const b = pure.computeThinkingBoundary(stamps, t.keepLastTurns, boundary ?? undefined);
      next = b === undefined || Number.isNaN(b) ? null : b;
    }
    return {
      messages,
      pruned: false,
      beforeChars: 0,
      afterChars: 0,
      frontier: { thinkingStripBoundaryTimestamp: boundary, nextThinkingStripBoundaryTimestamp: next },
      stats: { stubbed: 0, purgedArgs: 0, chainDropped: 0, chainInserted: 0, finalThinkingStripped: 0, thinkingStripped: 0 },
    };
  }

  function purgedArguments(size) {
    return { _purged: `<purged-errored-args size="${size}"/>` };
  }

  // A fresh message for one edit description (see src/output.rs, Script),
  // built from the caller's own objects at every render, so that a later
  // handler editing the result in place never touches another render's.
  function build(desc, messages) {
    const kind = desc[1];
    if (kind === 2) {
      const block = { role: 'user', content: [{ type: 'text', text: desc[2] }] };
      if (desc.length > 3) block.timestamp = desc[3];
      return block;
    }
    const src = messages[desc[0]];
    if (kind === 0) {
      const stub = { role: 'toolResult', toolCallId: src.toolCallId };
      if (src.toolName !== undefined) stub.toolName = src.toolName;
      stub.content = [{ type: 'text', text: desc[2] }];
      stub.isError = false;
      if (src.timestamp !== undefined) stub.timestamp = src.timestamp;
      return stub;
    }
    let content = src.content;
    const purged = desc[3];
    if (purged.length > 0) {
      const size = new Map(purged);
      content = content.map((b, j) => (size.has(j) ? { ...b, arguments: purgedArguments(size.get(j)) } : b));
    }
    if (desc[2]) content = content.filter((b) => b.type !== 'thinking');
    return { ...src, content };
  }

  // The output array: the caller's messages where untouched, fresh ones
  // where edited.
  function apply(order, edits, messages) {
    const out = new Array(order.length);
    for (let k = 0; k < order.length; k++) {
      const v = order[k];
      out[k] = v >= 0 ? messages[v] : build(edits.get(-v - 1), messages);
    }
    return out;
  }

  /** Prunes a JS array; a no-op returns the caller's array itself. */
  function pruneMessages(messages, options = {}) {
    checkArray(messages, 'pruneMessages');
    const opts = options || {};
    const boundary = boundaryOf(opts, 'pruneMessages');
    if (!hasNative) {
      return pure.pruneMessages(messages, { state: opts.state, config: opts.config, thinkingStripBoundaryTimestamp: boundary });
    }
    if (!mayChange(messages, opts.state, opts.config)) return noOp(messages, opts.config, boundary);
    let json;
    try {
      json = JSON.stringify(messages);
    } catch (cause) {
      const err = argumentError(`pruneMessages: messages cannot be serialized as JSON: ${cause.message}`);
      err.cause = cause;
      throw err;
    }
    const r = native.pruneArray(json, jsonOrNull(opts.state, 'state'), jsonOrNull(opts.config, 'config'), boundary);
    if (!r.pruned) return unchanged(messages, r);
    const fresh = JSON.parse(r.freshEdits);
    const byId = new Map();
    for (let j = 0; j < r.fresh.length; j++) byId.set(r.fresh[j], fresh[j]);
    return result(apply(r.order, byId, messages), r);
  }

  // What a render compares to find the first message that changed: role,
  // timestamp, ids, key count, content length and per block its type, id,
  // text length and whether it has arguments. Cheap, and no serialization:
  // a print is a flat array, compared in place without allocating.
  function textLength(t) {
    return typeof t === 'string' ? t.length : t === undefined ? -1 : -2;
  }

  function fingerprint(m) {
    if (m === null || typeof m !== 'object' || Array.isArray(m)) return [typeof m, Array.isArray(m) ? -1 : m];
    const c = m.content;
    const refs = m.details && m.details.toolCallRefs;
    const fp = [m.role, m.timestamp, m.toolCallId, m.isError, m.customType, Object.keys(m).length, Array.isArray(refs) ? refs.length : -1];
    if (typeof c === 'string') fp.push(-1, c.length);
    else if (Array.isArray(c)) {
      fp.push(c.length, -3);
      for (const b of c) {
        if (b === null || typeof b !== 'object') fp.push(typeof b, b, -1, -1);
        else fp.push(b.type, b.id, textLength(b.text ?? b.thinking), b.arguments === undefined ? 0 : 1);
      }
    } else fp.push(-2, c === null ? null : typeof c);
    return fp;
  }

  function same(m, fp) {
    if (m === null || typeof m !== 'object' || Array.isArray(m)) {
      return fp.length === 2 && fp[0] === typeof m && Object.is(fp[1], Array.isArray(m) ? -1 : m);
    }
    if (fp.length < 9 || m.role !== fp[0] || !Object.is(m.timestamp, fp[1]) || m.toolCallId !== fp[2]) return false;
    if (m.isError !== fp[3] || m.customType !== fp[4]) return false;
    const refs = m.details && m.details.toolCallRefs;
    if ((Array.isArray(refs) ? refs.length : -1) !== fp[6]) return false;
    const c = m.content;
    if (typeof c === 'string') {
      if (fp[7] !== -1 || fp[8] !== c.length) return false;
    } else if (Array.isArray(c)) {
      if (fp[7] !== c.length || fp.length !== 9 + 4 * c.length) return false;
      for (let j = 0, at = 9; j < c.length; j++, at += 4) {
        const b = c[j];
        if (b === null || typeof b !== 'object') {
          if (fp[at] !== typeof b || !Object.is(fp[at + 1], b)) return false;
        } else if (
          b.type !== fp[at] ||
          b.id !== fp[at + 1] ||
          textLength(b.text ?? b.thinking) !== fp[at + 2] ||
          (b.arguments === undefined ? 0 : 1) !== fp[at + 3]
        ) {
          return false;
        }
      }
    } else if (fp[7] !== -2 || fp[8] !== (c === null ? null : typeof c)) return false;
    return Object.keys(m).length === fp[5];
  }

  /**
   * Renders the same growing conversation again and again: keeps the
   * indexed messages natively, re-indexes only from the first message that
   * no longer matches, and reuses edited messages from earlier renders.
   */
  class PruneSession {
    constructor({ config, state, thinkingStripBoundaryTimestamp } = {}) {
      this._config = config;
      this._state = state;
      this._boundary = boundaryOf({ thinkingStripBoundaryTimestamp }, 'PruneSession');
      this._prints = [];
      this._edits = new Map();
      this._pending = null;
      if (hasNative) {
        this._native = new native.NativeSession();
        this._native.setConfig(jsonOrNull(config, 'config'));
        this._native.setState(jsonOrNull(state, 'state'));
        this._native.setBoundary(this._boundary);
      }
    }

    _open(where) {
      if (this._closed) {
        const err = new Error(`PruneSession.${where}: the session is closed`);
        err.code = 'ERR_CONDENSE_SESSION_CLOSED';
        throw err;
      }
    }

    /**
     * Frees what the session keeps (the indexed conversation, natively) now,
     * rather than when the engine finalizes the object, which only happens
     * after the event loop turns. Later calls throw
     * ERR_CONDENSE_SESSION_CLOSED; closing twice is harmless.
     */
    close() {
      if (this._closed) return;
      this._closed = true;
      if (this._native) this._native.close();
      this._native = null;
      this._prints = [];
      this._edits = new Map();
      this._pending = null;
      this._lastMessages = null;
    }

    /** New state from the indexer (at flushes). */
    setState(state) {
      this._open('setState');
      this._state = state;
      if (this._native) this._native.setState(jsonOrNull(state, 'state'));
      return this;
    }

    // Brings the kept log in line with `messages`: re-indexes from the first
    // message that no longer matches.
    _sync(messages) {
      this._pending = null;
      const prints = this._prints;
      let from = 0;
      const common = Math.min(prints.length, messages.length);
      while (from < common && same(messages[from], prints[from])) from++;
      if (from < prints.length || from < messages.length) {
        const texts = [];
        for (let i = from; i < messages.length; i++) texts.push(messageJson(messages[i], i));
        this._native.sync(from, texts);
        prints.length = from;
        for (let i = from; i < messages.length; i++) prints.push(fingerprint(messages[i]));
      }
    }

    render(messages) {
      this._open('render');
      checkArray(messages, 'PruneSession.render');
      if (!this._native) {
        this._lastMessages = messages;
        return pure.pruneMessages(messages, { state: this._state, config: this._config, thinkingStripBoundaryTimestamp: this._boundary });
      }
      // Nothing can change: answer before any indexing; the kept log catches
      // up when a render or a flush needs it.
      if (!mayChange(messages, this._state, this._config)) {
        this._pending = messages;
        return noOp(messages, this._config, this._boundary);
      }
      this._sync(messages);
      const r = this._native.render();
      const edits = this._edits;
      if (r.evicted) for (const id of r.evicted) edits.delete(id);
      if (!r.pruned) return unchanged(messages, r);
      if (r.fresh.length) {
        const fresh = JSON.parse(r.freshEdits);
        for (let j = 0; j < r.fresh.length; j++) edits.set(r.fresh[j], fresh[j]);
      }
      return result(apply(r.order, edits, messages), r);
    }

    /**
     * Advances the thinking boundary (SPEC 6) over the conversation of the
     * last render plus the optional closing message, and returns the
     * frontier snapshot to persist.
     */
    flush(closingMessage) {
      this._open('flush');
      let boundary;
      if (this._native) {
        if (this._pending) this._sync(this._pending);
        const closing = closingMessage === undefined ? null : messageJson(closingMessage, 'closing');
        boundary = this._native.flush(closing);
      } else {
        const keep = this._config && this._config.thinkingStrip && this._config.thinkingStrip.keepLastTurns;
        const enabled = Boolean(this._config && this._config.thinkingStrip && this._config.thinkingStrip.enabled);
        const all = [...(this._lastMessages || []), ...(closingMessage === undefined ? [] : [closingMessage])];
        const stamps = all.filter((m) => m && m.role === 'assistant' && typeof m.timestamp === 'number').map((m) => m.timestamp);
        const next = enabled ? pure.computeThinkingBoundary(stamps, keep, this._boundary ?? undefined) : this._boundary;
        boundary = next === undefined || Number.isNaN(next) ? this._boundary : next;
      }
      this._boundary = boundary ?? null;
      return { thinkingStripBoundaryTimestamp: this._boundary };
    }
  }

  if (typeof Symbol.dispose === 'symbol') {
    // `using session = new PruneSession(...)` closes it at the end of the scope.
    PruneSession.prototype[Symbol.dispose] = PruneSession.prototype.close;
  }

  return { pruneMessages, PruneSession };
}

module.exports = { makeArrayApi };
