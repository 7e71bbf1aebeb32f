'use strict';

// What a kept engine re-sends after new chain entries (src/engine.rs
// `Engine::set_chains`, `SentEdits`): the edits the JS side already holds
// keep their ids, so a flush that registers a chain costs the edits that
// changed, not every stub and synthetic block of the conversation again.
// The growing conversations of helpers/conversation.js run through the
// drop-in on pi-condense's own indexer (../shared/reference); each render is
// also checked against the reference's, since a kept id that named the
// wrong edit would show there. Skips without ../shared.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const { localNative } = require('./helpers/local-native.js');
const { loadReference, releaseArgs: args, SKIP_MESSAGE } = require('./helpers/indexer.js');
const { outcome, assertSameRender: assertSame } = require('./helpers/render-outcome.js');
const { simulate } = require('./helpers/conversation.js');

const native = localNative();
const shared = fs.existsSync(path.join(__dirname, '..', '..', 'shared', 'reference'));
const skip = !shared ? SKIP_MESSAGE : native === null ? 'no native binary loads here' : false;
const SEED = 20261203;

/**
 * Watches every NativeEngine: per engine, the descriptions of the edits the
 * JS side holds (id -> JSON text) and which of setChains, setConfig and
 * setState were called since its last render.
 */
function watchEngines(binding) {
  const proto = binding.NativeEngine.prototype;
  const watched = ['setChains', 'setConfig', 'setState'];
  const saved = { render: proto.render };
  for (const name of watched) saved[name] = proto[name];
  const engines = new WeakMap();
  const stateOf = (engine) => {
    let s = engines.get(engine);
    if (!s) engines.set(engine, (s = { held: new Map(), calls: new Set() }));
    return s;
  };
  const log = [];
  for (const name of watched) {
    proto[name] = function (...a) {
      stateOf(this).calls.add(name);
      return saved[name].apply(this, a);
    };
  }
  proto.render = function (...a) {
    const s = stateOf(this);
    const r = saved.render.apply(this, a);
    // What the JS side held before this render, the edits it evicts
    // included: an evicted edit sent again under a new id was re-sent too.
    const heldTexts = new Set(s.held.values());
    if (r.evicted) for (const id of r.evicted) s.held.delete(id);
    const ids = r.fresh || [];
    const fresh = ids.length > 0 ? JSON.parse(r.freshEdits).map((d) => JSON.stringify(d)) : [];
    log.push({ newChains: s.calls.size === 1 && s.calls.has('setChains'), held: heldTexts.size, resent: fresh.filter((d) => heldTexts.has(d)).length, fresh: fresh.length });
    fresh.forEach((d, j) => s.held.set(ids[j], d));
    s.calls.clear();
    return r;
  };
  return { log, restore: () => Object.assign(proto, saved) };
}

test('2.4.3 and 2.9.1: new chain entries re-send no edit the JS side holds, and every render equals the reference', { skip }, async () => {
  const watch = watchEngines(native);
  try {
    // The drop-ins' engines are instances of the watched class.
    const { dropIns: made } = require('../js/dropin.js');
    let chainRenders = 0;
    for (const dialect of ['2.4.3', '2.9.1']) {
      const ref = await loadReference(dialect);
      const prune = dialect === '2.4.3' ? made.pruneMessages24 : made.pruneMessages29;
      for (let n = 0; n < 60; n++) {
        const indexer = new ref.ToolCallIndexer();
        let config;
        simulate({
          dialect,
          seed: SEED + n,
          indexer,
          onConfig: (c) => (config = c),
          render: (messages, boundary) => {
            const want = outcome((sink) => ref.pruneMessages(structuredClone(messages), ...args(dialect, indexer, config, boundary, sink)));
            const got = outcome((sink) => prune(structuredClone(messages), ...args(dialect, indexer, config, boundary, sink)));
            assertSame(got, want, `${dialect} seed ${SEED + n} (${messages.length} messages)`);
          },
        });
      }
      // Renders after new chains (and any appended messages or indexer
      // answers, but no new config or state): what they re-sent.
      for (const r of watch.log.splice(0)) {
        if (!r.newChains) continue;
        chainRenders++;
        assert.equal(r.resent, 0, `${dialect}: a render after new chains re-sent ${r.resent} of the ${r.held} edits the JS side held`);
      }
    }
    assert.ok(chainRenders >= 50, `only ${chainRenders} renders followed new chains alone`);
  } finally {
    watch.restore();
  }
});
