'use strict';

// The pi-condense drop-ins: `pruneMessages` with each release's own
// signature and result, so switching is one import line. Each keeps what it
// learned between calls per indexer object (a WeakMap: nothing outlives the
// host's indexer), so a render after an append costs what changed, while
// every answer is the reference's (js/conversation.js says what a render
// compares). Without the native binary they run the pure-JS oracle on the
// host's indexer directly.

const { Conversation } = require('./conversation.js');
const { checkArray } = require('./args.js');
const { inputOf } = require('./applier.js');
const { absentMethods } = require('./pure/rules.js');

const pureDialects = { v24: require('./pure/v2.4.js'), v29: require('./pure/v2.9.js') };

// The methods each release's render path may call on its indexer (the
// oracles' lists). Each is asked only where the release's render would call
// it for the input at hand, so an indexer without the others renders as
// pi-condense renders; where the release would call a missing one, the
// render throws ERR_CONDENSE_INVALID_ARGUMENT naming it (the engine raises
// it: src/indexer_methods.rs; the oracles: js/pure/rules.js bindIndexer).
const INDEXER_METHODS = {
  '2.4.3': pureDialects.v24.INDEXER_METHODS,
  '2.9.1': pureDialects.v29.INDEXER_METHODS,
};

// A boundary the engine compares as pi-condense 2.4.3 does: a number (NaN
// and the infinities too), or none. Any other value is compared by the
// oracle with JS `<` itself, as the release compares it.
function engineBoundary(boundary) {
  return boundary === undefined || boundary === null || typeof boundary === 'number';
}

function makeDropIns(native, pure) {
  const hasEngine = typeof native.NativeEngine === 'function';
  const kept = { '2.4.3': new WeakMap(), '2.9.1': new WeakMap() };

  function conversationFor(indexer, dialect) {
    const map = kept[dialect];
    let conv = map.get(indexer);
    if (conv === undefined) {
      conv = new Conversation(native, dialect);
      map.set(indexer, conv);
    }
    return conv;
  }

  // An indexer that is not an object keys nothing: its render is kept by
  // no one (the reference renders with it as long as it calls no method).
  function render(dialect, messages, indexer, config, boundary) {
    const absent = absentMethods(indexer, INDEXER_METHODS[dialect]);
    const keyed = indexer !== null && (typeof indexer === 'object' || typeof indexer === 'function');
    const conv = keyed ? conversationFor(indexer, dialect) : new Conversation(native, dialect, true);
    try {
      conv.setConfig(config);
      conv.setAbsent(absent);
      if (dialect === '2.4.3') conv.setBoundary(boundary ?? null);
      conv.sync(messages, false);
      conv.answer(indexer, absent);
      if (config.chainCompression?.enabled) conv.chains(indexer, absent);
      return conv.render(messages);
    } finally {
      if (!keyed) conv.close();
    }
  }

  /**
   * pi-condense 2.4.3's `pruneMessages(messages, indexer, chainCompression,
   * errorPurge, thinkingStrip, protection, recoveryGraceTurns = 0,
   * thinkingBoundaryTimestamp)` → `{ messages, pruned, beforeChars,
   * afterChars }`.
   */
  function pruneMessages24(
    messages,
    indexer,
    chainCompression,
    errorPurge,
    thinkingStrip,
    protection,
    recoveryGraceTurns = 0,
    thinkingBoundaryTimestamp,
  ) {
    // Checked before either backend answers, so both throw the same codes.
    checkArray(messages, 'pruneMessages');
    // The boundary matters only to the thinking strip.
    const boundary = thinkingStrip?.enabled ? thinkingBoundaryTimestamp : undefined;
    if (!hasEngine || !engineBoundary(boundary)) {
      const r = pure.v24.pruneWithIndexer(
        messages,
        indexer,
        chainCompression,
        errorPurge,
        thinkingStrip,
        protection,
        recoveryGraceTurns,
        thinkingBoundaryTimestamp,
      );
      return { messages: r.messages, pruned: r.pruned, beforeChars: r.beforeChars, afterChars: r.afterChars };
    }
    const config = { chainCompression, errorPurge, thinkingStrip, protection, recoveryGraceTurns };
    const r = render('2.4.3', messages, indexer, config, boundary);
    return { messages: r.messages, pruned: r.pruned, beforeChars: r.beforeChars, afterChars: r.afterChars };
  }

  /**
   * pi-condense 2.9.1's `pruneMessages(messages, indexer, chainCompression,
   * errorPurge, protection, recoveryGraceTurns = 0, diagnostics)` → `{
   * messages, pruned, beforeChars, afterChars }`; reports go to
   * `diagnostics.report(kind, key, detail)`, in the reference's order.
   */
  function pruneMessages29(messages, indexer, chainCompression, errorPurge, protection, recoveryGraceTurns = 0, diagnostics) {
    checkArray(messages, 'pruneMessages');
    if (!hasEngine) {
      const r = pure.v29.pruneWithIndexer(messages, indexer, chainCompression, errorPurge, protection, recoveryGraceTurns, diagnostics);
      return { messages: r.messages, pruned: r.pruned, beforeChars: r.beforeChars, afterChars: r.afterChars };
    }
    const config = { chainCompression, errorPurge, protection, recoveryGraceTurns };
    const r = render('2.9.1', messages, indexer, config);
    if (diagnostics !== undefined && diagnostics !== null) {
      for (const d of r.diagnostics) diagnostics.report(d.kind, d.key, d.detail);
    }
    return { messages: r.messages, pruned: r.pruned, beforeChars: r.beforeChars, afterChars: r.afterChars };
  }

  /**
   * Forgets what the drop-ins kept for `indexer`: its next render re-reads
   * every message and asks the indexer everything again.
   */
  function invalidate(indexer) {
    for (const map of Object.values(kept)) {
      const conv = map.get(indexer);
      if (conv !== undefined) {
        conv.close();
        map.delete(indexer);
      }
    }
  }

  /**
   * The drop-in's last render for `indexer` slot by slot, for pi's gate
   * (pi/gate.js): `{ conversation, from, order, engine, sourceOf }`.
   * `from`: the first input message the render read afresh (those before it
   * are the previous render's); `order`: each output slot's input index
   * (>= 0) or edit (-id - 1), null when the render is the input itself;
   * `engine`: the NativeEngine that rendered it (the gate reads the
   * messages it converts from its last render); `sourceOf(id)`: the input
   * index an edit rewrites (-1 for a chain block). Null before a native
   * render.
   */
  function lastRender(indexer, dialect) {
    const conv = kept[dialect].get(indexer);
    if (conv === undefined || conv.lastFrom === undefined) return null;
    const edits = conv.edits;
    return {
      conversation: conv,
      from: conv.lastFrom,
      order: conv.lastOrder,
      engine: conv.engine,
      sourceOf: (id) => {
        const desc = edits.get(id);
        return desc === undefined ? -1 : inputOf(desc);
      },
    };
  }

  return { pruneMessages24, pruneMessages29, invalidate, lastRender };
}

/**
 * The addon's state shape for `messages`, read from a pi-condense 2.4.3
 * indexer: what it says about the tool results present and its chain
 * entries (each with its summary resolved). For hosts that keep a
 * PruneSession and set its state at flushes.
 */
function stateFromIndexer(messages, indexer) {
  const records = Object.create(null);
  const dedupAliases = Object.create(null);
  const shortRefs = Object.create(null);
  const missing = '\u0000condense-native:missing-record';
  for (const m of messages) {
    if (m === null || typeof m !== 'object' || m.role !== 'toolResult' || typeof m.toolCallId !== 'string') continue;
    const id = m.toolCallId;
    if (!indexer.isSummarized(id)) continue;
    const record = indexer.getRecord(id);
    if (record === undefined || record === null) dedupAliases[id] = missing;
    else records[id] = record;
    const ref = indexer.getShortRefForToolCallId(id);
    if (ref !== undefined) shortRefs[id] = ref;
  }
  const chains = (indexer.getChainEntries() || []).map((entry) => {
    if (entry.rangeSummaryText !== undefined && entry.rangeSummaryText !== null) return entry;
    const text = indexer.getPerBatchSummaryTextForToolCallIds(entry.droppedToolCallIds);
    return { ...entry, rangeSummaryText: text };
  });
  // Objects without a prototype, so an id like `__proto__` is an own key;
  // spread into plain ones for JSON.stringify's sake.
  return {
    records: { ...records },
    dedupAliases: { ...dedupAliases },
    shortRefs: { ...shortRefs },
    refAliases: {},
    chains,
    summaryBodies: [],
  };
}

/** `JSON.stringify(messages).length`, as the reference's `sizeMessages`. */
function sizeMessages(messages) {
  return JSON.stringify(messages).length;
}

// One set of drop-ins per process, shared by index.js and the
// pi-condense-2.x subpath modules.
const dropIns = makeDropIns(require('../loader.js'), pureDialects);

module.exports = { dropIns, stateFromIndexer, sizeMessages, INDEXER_METHODS };
