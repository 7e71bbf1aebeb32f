'use strict';

// PruneSession: one per conversation, rendering a state object's view of it
// again and again. It keeps the conversation natively (js/conversation.js,
// src/engine.rs), so a render after an append re-reads only the new
// messages; setState at flushes, flush() to advance the 2.4.3 boundary.

const codes = require('./codes.js');
const { Conversation } = require('./conversation.js');
const { mayChange, noOp } = require('./noop.js');
const { argumentError, boundaryOf, checkArray, checkConfig, dialectOf, deliver, sinkOf } = require('./args.js');

function makeSession(native, pure) {
  const hasEngine = typeof native.NativeEngine === 'function';

  class PruneSession {
    /**
     * @param {object} [options] { config, state, thinkingStripBoundaryTimestamp,
     *   dialect: '2.4.3' | '2.9.1', verify, diagnostics }
     */
    constructor(options = {}) {
      const o = options || {};
      this._dialect = dialectOf(o, 'PruneSession');
      checkConfig(o.config, this._dialect, 'PruneSession');
      this._config = o.config;
      this._state = o.state;
      this._boundary = boundaryOf(o, 'PruneSession');
      this._verify = Boolean(o.verify);
      this._sink = sinkOf(o.diagnostics, 'PruneSession');
      this._closed = false;
      this._pending = null;
      this._last = null;
      if (hasEngine) {
        this._conv = new Conversation(native, this._dialect);
        this._conv.setConfig(o.config);
        this._conv.setState(o.state);
        this._conv.setBoundary(this._boundary);
      }
    }

    _open(where) {
      if (this._closed) {
        const err = new Error(`PruneSession.${where}: the session is closed`);
        err.code = codes.SESSION_CLOSED;
        throw err;
      }
    }

    /**
     * Frees what the session keeps (the conversation, natively) now, rather
     * than when the engine finalizes the object. Later calls throw
     * ERR_CONDENSE_SESSION_CLOSED; closing twice is harmless.
     */
    close() {
      if (this._closed) return;
      this._closed = true;
      if (this._conv) this._conv.close();
      this._conv = null;
      this._pending = null;
      this._last = null;
    }

    /** New state from the indexer (at flushes). */
    setState(state) {
      this._open('setState');
      this._state = state;
      if (this._conv) this._conv.setState(state);
      return this;
    }

    /** Forgets what the session kept: the next render re-reads everything. */
    invalidate() {
      this._open('invalidate');
      if (this._conv) this._conv.invalidate();
      return this;
    }

    render(messages) {
      this._open('render');
      checkArray(messages, 'PruneSession.render');
      this._last = messages;
      if (!this._conv) {
        const oracle = this._dialect === '2.9.1' ? pure.v29 : pure.v24;
        const r = oracle.pruneMessages(
          messages,
          { state: this._state, config: this._config, thinkingStripBoundaryTimestamp: this._boundary },
          this._sink ?? undefined,
        );
        return r;
      }
      // Nothing can change: answer before any indexing; the kept log
      // catches up at the next render or flush, compared with these
      // messages (a kept session forgets from the first that changed).
      if (!this._verify && !mayChange(messages, this._state, this._config, this._dialect)) {
        this._conv.forgetChanged(messages);
        this._pending = messages;
        return noOp(messages, this._config, this._boundary, this._dialect);
      }
      this._pending = null;
      this._conv.sync(messages, this._verify);
      const r = this._conv.render(messages);
      deliver(this._sink, r.diagnostics);
      return r;
    }

    /**
     * Advances the thinking boundary (SPEC 6) over the conversation of the
     * last render plus the optional closing message, and returns the
     * frontier snapshot to persist (2.4.3; 2.9.1 has no boundary).
     */
    flush(closingMessage) {
      this._open('flush');
      let boundary;
      if (this._conv) {
        if (this._pending) this._conv.sync(this._pending, false);
        this._pending = null;
        let closing = null;
        if (closingMessage !== undefined) {
          try {
            closing = JSON.stringify(closingMessage) ?? 'null';
          } catch (cause) {
            throw argumentError(`PruneSession.flush: the closing message cannot be serialized as JSON: ${cause.message}`, cause);
          }
        }
        boundary = this._conv.settled(() => this._conv.engine.flush(closing));
      } else {
        const t = this._config && this._config.thinkingStrip;
        const all = [...(this._last || []), ...(closingMessage === undefined ? [] : [closingMessage])];
        const stamps = all.filter((m) => m && m.role === 'assistant' && typeof m.timestamp === 'number').map((m) => m.timestamp);
        const next = t && t.enabled ? pure.v24.computeThinkingBoundary(stamps, t.keepLastTurns, this._boundary ?? undefined) : this._boundary;
        boundary = next === undefined || Number.isNaN(next) ? this._boundary : next;
      }
      this._boundary = boundary ?? null;
      if (this._conv) this._conv.boundary = this._boundary;
      return { thinkingStripBoundaryTimestamp: this._boundary };
    }
  }

  if (typeof Symbol.dispose === 'symbol') {
    // `using session = new PruneSession(...)` closes it at the end of the scope.
    PruneSession.prototype[Symbol.dispose] = PruneSession.prototype.close;
  }

  return PruneSession;
}

module.exports = { makeSession };
