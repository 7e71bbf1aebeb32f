'use strict';
// The router of pi-condense's renders in pi (pi/extension.js hands
// pi-condense the router's render): which render answers each call,
// condense-native's drop-in or pi-condense's own function, and when the
// drop-in catches up in the background. The crossover it routes by is
// measured by benches/real-pi.js, which reads it here.

// Below this many messages pi-condense's own render is as fast as the
// addon's in pi or faster, per drop-in (measured with `node
// benches/real-pi.js --min-messages 0`: docs/ADOPTING.md, "In pi, per
// render"), so the extension renders with pi-condense's own function there.
const CROSSOVER = { '2.4': 60, '2.9': 40 };

/**
 * The render condense-native hands pi-condense: the drop-in where it is
 * faster, pi-condense's own function where it is not, exact either way.
 * pi-condense's own renders while the context is below `minMessages`
 * (CONDENSE_NATIVE_MIN_MESSAGES, default the release's CROSSOVER) and while
 * the engine has not read this conversation (the first render after a
 * session opens, a branch change, a compaction). After such a render the
 * drop-in renders the same call in the background once the model starts
 * answering (the assistant's `message_start`, or `agent_end`: the request
 * has gone out), its answer dropped and 2.9.1's diagnostics not reported:
 * the one full read of the conversation is off the render path, and the
 * engine is then only the messages added since behind when it takes over.
 * Below half the crossover the engine is left alone (a small conversation
 * never loads it; the half left to the crossover is read incrementally
 * when it takes over), and renders below the crossover add no background
 * work once it has caught up. The drop-in asks the indexer everything again
 * each render and re-reads the messages from the first one it does not
 * know, so its answer is pi-condense's whatever rendered before it.
 * CONDENSE_NATIVE_ROUTE (for tests: `own`, `lag` (own, no background
 * render), `native`, comma separated, used in turn) forces each render's
 * path. `always` (the gate is on: it reads the drop-in's slots) renders
 * every call on the drop-in.
 */
function makeRouter({ dropIn, ownRender, line, status, env, always = false }) {
  const parsed = Number(env.CONDENSE_NATIVE_MIN_MESSAGES);
  const minMessages = env.CONDENSE_NATIVE_MIN_MESSAGES !== undefined && Number.isFinite(parsed) && parsed >= 0 ? parsed : CROSSOVER[line];
  const route = typeof env.CONDENSE_NATIVE_ROUTE === 'string' && env.CONDENSE_NATIVE_ROUTE.trim() ? env.CONDENSE_NATIVE_ROUTE.split(',').map((r) => r.trim()) : null;
  const diagnosticsAt = line === '2.9' ? 6 : -1;
  let warm = new WeakSet();
  let failed = null;
  let pending = null;
  let scheduled = false;
  let turn = 0;
  const router = {
    minMessages,
    onFailure: () => {},
    cool() {
      warm = new WeakSet();
    },
    render(...args) {
      if (failed !== null) {
        status.lastPath = 'own';
        return ownRender(...args);
      }
      const messages = args[0];
      const indexer = args[1];
      const n = Array.isArray(messages) ? messages.length : 0;
      const ready = indexer !== null && typeof indexer === 'object' && warm.has(indexer);
      const forced = route === null ? null : route[turn++ % route.length];
      if (forced === 'native' || (forced === null && (always || (ready && n >= minMessages)))) {
        try {
          status.lastPath = 'native';
          const result = dropIn.pruneMessages(...args);
          if (indexer !== null && typeof indexer === 'object') warm.add(indexer);
          return result;
        } catch (err) {
          fail(err);
          status.lastPath = 'own';
          return ownRender(...args);
        }
      }
      status.lastPath = 'own';
      const result = ownRender(...args);
      if (forced === 'own' || (forced === null && !ready && n >= minMessages / 2)) catchUp(args);
      return result;
    },
  };
  function fail(err) {
    if (failed !== null) return;
    failed = err;
    router.onFailure(err);
  }
  // One background render, of the latest call, once the model answers
  // (`idle`): after the request has gone out.
  function catchUp(args) {
    pending = diagnosticsAt >= 0 ? Object.assign([...args], { [diagnosticsAt]: undefined }) : args;
  }
  router.idle = () => {
    if (pending === null || scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      const call = pending;
      pending = null;
      if (failed !== null || call === null) return;
      try {
        // Twice: the first render reads the conversation, the second takes
        // the path every later render takes, so that code is compiled
        // before a render the model waits for runs it.
        dropIn.pruneMessages(...call);
        dropIn.pruneMessages(...call);
        if (call[1] !== null && typeof call[1] === 'object') warm.add(call[1]);
      } catch (err) {
        fail(err);
      }
    });
  };
  return router;
}

module.exports = { makeRouter, CROSSOVER };
