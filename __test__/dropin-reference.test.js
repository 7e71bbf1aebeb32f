'use strict';

// Differential: the kept paths against pi-condense's own pruneMessages
// (../shared/reference), both dialects. Growing conversations
// (helpers/conversation.js) are rendered after most appended messages, the
// way pi calls a context handler: a fresh structuredClone per render, the
// same ToolCallIndexer object every time, mutated by flushes between renders
// as pi-condense mutates it. Every render of the drop-in (kept per indexer),
// of a PruneSession (its state set from the indexer's tables) and of the
// stateless pruneMessages must equal the reference's: pruned, both sizes,
// the messages and (2.9.1) every diagnostic in order.
//
// SEED=<n> and CONVERSATIONS=<n> as in differential-reference.test.js.
// Skips without ../shared.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const api = require('..');
const dropIns = { '2.4.3': require('../js/pi-condense-2.4.js'), '2.9.1': require('../js/pi-condense-2.9.js') };
const { loadReference, releaseArgs: args, stateOfIndexer: stateOf, SKIP_MESSAGE } = require('./helpers/indexer.js');
const { outcome, assertSameRender: assertSame } = require('./helpers/render-outcome.js');
const { simulate } = require('./helpers/conversation.js');

const SEED = process.env.SEED ? Number(process.env.SEED) : 20261202;
const CONVERSATIONS = process.env.CONVERSATIONS ? Number(process.env.CONVERSATIONS) : 60;
const skip = fs.existsSync(path.join(__dirname, '..', '..', 'shared', 'reference')) ? false : SKIP_MESSAGE;

for (const dialect of ['2.4.3', '2.9.1']) {
  test(`${dialect}: the drop-in, a session and stateless pruneMessages equal the reference at every render`, { skip }, async (t) => {
    const ref = await loadReference(dialect);
    const seen = { renders: 0, pruned: 0, errors: 0 };
    for (let n = 0; n < CONVERSATIONS; n++) {
      const seed = SEED + n;
      const indexer = new ref.ToolCallIndexer();
      let config;
      let session = null;
      let sessionBoundary;
      const sessionSink = { current: null, report(...a) { this.current.report(...a); } };
      let step = 0;
      simulate({
        dialect,
        seed,
        indexer,
        onConfig: (c) => (config = c),
        render: (messages, boundary) => {
          const label = `${dialect} seed ${seed} render ${step++} (${messages.length} messages)`;
          const want = outcome((sink) => ref.pruneMessages(structuredClone(messages), ...args(dialect, indexer, config, boundary, sink)));
          const input = structuredClone(messages);
          const before = JSON.stringify(input);
          const got = outcome((sink) => dropIns[dialect].pruneMessages(input, ...args(dialect, indexer, config, boundary, sink)));
          assertSame(got, want, `${label}, drop-in`);
          assert.equal(JSON.stringify(input), before, `${label}: the drop-in changed its input`);
          if (got.value && !got.value.pruned) assert.equal(got.value.messages, input, `${label}: a no-op returns the caller's array`);

          const state = stateOf(indexer);
          const options = { state, config, thinkingStripBoundaryTimestamp: boundary ?? null, dialect };
          // A session advances its boundary at its own flushes; the
          // simulated host persisted another one, so a new session takes it.
          if (session === null || sessionBoundary !== (boundary ?? null)) {
            if (session) session.close();
            session = new api.PruneSession({ ...options, diagnostics: sessionSink });
            sessionBoundary = boundary ?? null;
          }
          session.setState(state);
          assertSame(
            outcome((sink) => {
              sessionSink.current = sink;
              return session.render(structuredClone(messages));
            }),
            want,
            `${label}, session`,
          );
          assertSame(outcome((sink) => api.pruneMessages(structuredClone(messages), { ...options, diagnostics: sink })), want, `${label}, stateless`);
          seen.renders++;
          if (want.error) seen.errors++;
          else if (want.value.pruned) seen.pruned++;
        },
      });
      if (session) session.close();
    }
    t.diagnostic?.(`${dialect}: ${JSON.stringify(seen)}`);
    assert.ok(seen.renders > 500 && seen.pruned > 200, JSON.stringify(seen));
  });
}
