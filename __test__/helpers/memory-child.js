'use strict';

// The child process of memory.test.js: renders the sample session through
// one API, in rounds, and prints the RSS after every few rounds as JSON. Run
// with `node --expose-gc memory-child.js <api> <mode> <samples>
// <rounds-per-sample>` (or `bun`), PKG naming the package to load.
//
// An API renders the whole sample (prune, Pruner.prune, pruneMessages) or,
// for the kept paths (PruneSession, the two drop-ins), a growing
// conversation: a round is one whole conversation, the sample's prefixes
// in steps of STEP messages, as pi renders after each appended message. A
// session flushes every ten renders and is closed at the end of its round;
// a drop-in is asked with the pure oracle's indexer over the sample's state
// (js/pure/v2.x.js `createIndexer`).
//
// mode `yield`: one render per event-loop turn, as a host makes them, and
// after each round a gc, two turns and a gc before the sample; each round
// of a drop-in uses a new indexer and drops the old one, which the WeakMap
// must let go. Mode `burst`: the renders of a round back to back without
// the loop turning, then a gc; the drop-ins keep one indexer and start each
// round over from the first message (nothing finalizes without the loop).
//
// CONDENSE_MEMORY_TEST_LEAK_BYTES=n plants a leak: every render then keeps a
// filled Buffer of n bytes, outside the engine's heap, so that
// memory.test.js can show its measure fails a leak of that size.

const fs = require('node:fs');
const path = require('node:path');
const { dropInOf } = require('../../benches/corpus.js');

const PKG = process.env.PKG || path.join(__dirname, '..', '..');
const SAMPLE = path.join(__dirname, '..', '..', 'sample', 'session.json');
const STEP = 4;
const FLUSH_EVERY = 10;

const isBun = typeof globalThis.Bun !== 'undefined';
const gc = () => (isBun ? Bun.gc(true) : (global.gc(), global.gc()));
const turn = () => new Promise((resolve) => setImmediate(resolve));
// The RSS, and the engine's heap: its size (which it grows by steps of its
// own policy) and what is live in it.
function sample() {
  const m = process.memoryUsage();
  return { rss: m.rss / 2 ** 20, heapTotal: m.heapTotal / 2 ** 20, heapUsed: m.heapUsed / 2 ** 20 };
}

function growing(messages) {
  const prefixes = [];
  for (let k = STEP; k < messages.length; k += STEP) prefixes.push(k);
  prefixes.push(messages.length);
  return prefixes;
}

// The API as `{ round(step) }`: one round of renders, awaiting `step()`
// after each; returns the last render's result.
function apiOf(name, mode) {
  const api = require(PKG);
  const sample = JSON.parse(fs.readFileSync(SAMPLE, 'utf8'));
  const corpus = { messages: sample.messages, state: sample.state, config: sample.config };
  const { messages } = sample;
  const options = { state: sample.state, config: sample.config, thinkingStripBoundaryTimestamp: sample.thinkingBoundaryTimestamp ?? null };
  const bytes = Buffer.from(JSON.stringify(messages));
  const whole = (call) => ({
    renders: 1,
    async round(step) {
      const r = call();
      await step();
      return r;
    },
  });
  if (name === 'prune') return whole(() => api.prune(bytes, options));
  if (name === 'Pruner.prune') {
    const pruner = new api.Pruner(sample.config).setState(sample.state);
    return whole(() => pruner.prune(bytes, { thinkingStripBoundaryTimestamp: options.thinkingStripBoundaryTimestamp }));
  }
  if (name === 'pruneMessages') return whole(() => api.pruneMessages(messages, options));
  const prefixes = growing(messages);
  if (name === 'PruneSession') {
    return {
      renders: prefixes.length,
      async round(step) {
        const session = new api.PruneSession(options);
        let last;
        try {
          for (const [n, k] of prefixes.entries()) {
            last = session.render(messages.slice(0, k));
            if (n % FLUSH_EVERY === FLUSH_EVERY - 1) session.flush();
            await step();
          }
        } finally {
          session.close();
        }
        return last;
      },
    };
  }
  const dialect = { 'pi-condense-2.4': '2.4.3', 'pi-condense-2.9': '2.9.1' }[name];
  if (!dialect) throw new Error(`unknown API ${name}`);
  const { dropIn, oracle, state, args } = dropInOf(PKG, corpus, dialect, options.thinkingStripBoundaryTimestamp ?? undefined);
  let indexer = oracle.createIndexer(state);
  return {
    renders: prefixes.length,
    async round(step) {
      if (mode === 'yield') indexer = oracle.createIndexer(state);
      let last;
      for (const k of prefixes) {
        last = dropIn.pruneMessages(messages.slice(0, k), indexer, ...args);
        await step();
      }
      return last;
    },
  };
}

async function main() {
  const [name, mode, samples, perSample] = process.argv.slice(2);
  const api = apiOf(name, mode);
  const loopStep = mode === 'yield' ? turn : () => undefined;
  const leakBytes = Number(process.env.CONDENSE_MEMORY_TEST_LEAK_BYTES || 0);
  const leaked = [];
  const step = leakBytes
    ? () => {
        leaked.push(Buffer.alloc(leakBytes, 1));
        return loopStep();
      }
    : loopStep;
  const settle = async () => {
    gc();
    if (mode === 'yield') {
      await turn();
      await turn();
      gc();
    }
  };
  const run = async () => {
    let last;
    for (let i = 0; i < Number(perSample); i++) last = await api.round(step);
    return last;
  };
  // Warm-up: the allocators and the engine's heap reach their working size
  // (the heap of Node grows by steps over the first few hundred renders of
  // pruneMessages).
  for (let w = 0; w < 3; w++) await run();
  await settle();
  const taken = [sample()];
  let last;
  for (let s = 0; s < Number(samples); s++) {
    last = await run();
    await settle();
    taken.push(sample());
  }
  // renders: between two samples.
  process.stdout.write(`${JSON.stringify({ backend: require(PKG).backend, renders: api.renders * Number(perSample), samples: taken, pruned: last.pruned })}\n`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
