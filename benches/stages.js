#!/usr/bin/env node
'use strict';

// Where a render's time goes, per stage of the JS half and the native
// calls: the same render loop as benches/render.js (a growing conversation,
// a fresh structuredClone and a forced GC before each timed render), with
// timing wrappers around the methods of js/conversation.js's Conversation
// and the native engine. A diagnosis tool beside `npm run bench` (which
// gives the ratios); the native stages of the Buffer path are
// `cargo run --release --no-default-features --example stages`.
//
//   node --expose-gc benches/stages.js [corpus] [session|dropin|stateless] [2.4.3|2.9.1] [renders]
//
// Stages overlap: conv.sync includes native.sync / native.syncLater(Wire),
// conv.render includes native.render (the rest of it is the JS applier).

const { forceGc, median } = require('./timing.js');
const { corpusAvailable, loadCorpus, stateOf, configOf, realIndexer } = require('./corpus.js');

const [name = 'large', which = 'session', dialect = '2.4.3', rendersArg = '10'] = process.argv.slice(2);
const RENDERS = Number(rendersArg);

const native = require('../loader.js');
const { Conversation } = require('../js/conversation.js');
const api = require('..');

const spent = {};
function timeMethods(proto, names, prefix) {
  for (const n of names) {
    const f = proto[n];
    if (typeof f !== 'function') continue;
    proto[n] = function (...args) {
      const t = process.hrtime.bigint();
      try {
        return f.apply(this, args);
      } finally {
        spent[prefix + n] = (spent[prefix + n] ?? 0) + Number(process.hrtime.bigint() - t) / 1e6;
      }
    };
  }
}

async function main() {
  if (api.backend !== 'native') throw new Error('no native binding: npm run build first');
  if (!corpusAvailable(name)) {
    console.log(`../shared/corpus/${name}.json is absent: nothing to profile`);
    return;
  }
  timeMethods(native.NativeEngine.prototype, ['sync', 'syncLater', 'syncLaterWire', 'render', 'setState', 'setAnswers', 'setChains'], 'native.');
  timeMethods(Conversation.prototype, ['sync', 'keepAsked', 'answer', 'chains', 'render'], 'conv.');
  const corpus = loadCorpus(name);
  const state = stateOf(corpus, dialect);
  const config = configOf(corpus, dialect);
  const boundary = corpus.boundary ?? undefined;
  let render;
  if (which === 'session') {
    const session = new api.PruneSession({ state, config, thinkingStripBoundaryTimestamp: boundary, dialect });
    render = (m) => session.render(m);
  } else if (which === 'dropin') {
    const indexer = await realIndexer(dialect, state);
    if (!indexer) throw new Error('the drop-in needs ../shared/reference for its indexer');
    const dropIn = require(dialect === '2.9.1' ? '../js/pi-condense-2.9.js' : '../js/pi-condense-2.4.js');
    const { releaseArgs } = require('../__test__/helpers/indexer.js');
    render = (m) => dropIn.pruneMessages(m, ...releaseArgs(dialect, indexer, config, boundary));
  } else if (which === 'stateless') {
    render = (m) => api.pruneMessages(m, { state, config, thinkingStripBoundaryTimestamp: boundary, dialect });
  } else {
    throw new Error(`unknown contender ${which}: session, dropin or stateless`);
  }
  const n = corpus.messages.length;
  render(structuredClone(corpus.messages.slice(0, n - RENDERS - 1)));
  for (const k of Object.keys(spent)) delete spent[k];
  const totals = [];
  for (let i = 0; i < RENDERS; i++) {
    const messages = structuredClone(corpus.messages.slice(0, n - RENDERS + i));
    forceGc();
    const t = process.hrtime.bigint();
    render(messages);
    totals.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const runtime = process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.versions.node}`;
  console.log(`${which}, ${name}, ${dialect}, ${runtime}: ${RENDERS} renders after one append each`);
  console.log(`  render            median ${median(totals).toFixed(2)} ms`);
  for (const [k, v] of Object.entries(spent)) console.log(`  ${k.padEnd(18)}  mean ${(v / RENDERS).toFixed(2)} ms`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
