'use strict';

// The render path measured as pi calls it: a conversation growing by one
// message per render, each render on a fresh structuredClone of the
// messages so far, a full GC before each timed call, and one flush halfway
// (pi-condense summarizing a pending batch: the indexer and the state
// change). Contenders, side by side in this process:
//
//   reference  pi-condense's own pruneMessages (../shared/reference) with its
//              real ToolCallIndexer
//   floor      JSON.stringify of the input and of the reference's output
//   pure-JS    this project's oracle (js/pure/) on the state object
//   drop-in    condense-native/pi-condense-2.x, same indexer object every render
//   stateless  pruneMessages(messages, { state, config, dialect })
//   session    one PruneSession, setState at the flush
//
// plus the first call of the drop-in on a conversation (a fresh indexer
// object, so nothing is kept) and of a session. Every render of every
// contender is checked against the reference's (messages, sizes, 2.9.1
// diagnostics); a mismatch is reported, never hidden.

const { forceGc, median } = require('./timing.js');
const { stateOf, configOf, flush, loadReference } = require('./corpus.js');
const { fillIndexer } = require('../__test__/helpers/indexer.js');

function referenceArgs(dialect, config, boundary, indexer, sink) {
  const c = config;
  return dialect === '2.9.1'
    ? [indexer, c.chainCompression, c.errorPurge, c.protection, c.recoveryGraceTurns, sink]
    : [indexer, c.chainCompression, c.errorPurge, c.thinkingStrip, c.protection, c.recoveryGraceTurns, boundary ?? undefined];
}

function sameResult(got, want, gotReports, wantReports) {
  return (
    got.pruned === want.pruned &&
    got.beforeChars === want.beforeChars &&
    got.afterChars === want.afterChars &&
    JSON.stringify(got.messages) === JSON.stringify(want.messages) &&
    JSON.stringify(gotReports) === JSON.stringify(wantReports)
  );
}

/**
 * Measures one corpus file in one dialect. Returns medians (ms) per
 * contender, the cold calls, and how many renders differed from the
 * reference's.
 */
async function benchRender(corpus, dialect, { renders = 15, cold = 5 } = {}) {
  const api = require('..');
  const dropIn = require(dialect === '2.9.1' ? '../js/pi-condense-2.9.js' : '../js/pi-condense-2.4.js');
  const oracle = require(dialect === '2.9.1' ? '../js/pure/v2.9.js' : '../js/pure/v2.4.js');
  const reference = await loadReference(dialect);
  if (!reference) return { skipped: 'the reference modules are absent (../shared/reference)' };

  const state = structuredClone(stateOf(corpus, dialect));
  const config = configOf(corpus, dialect);
  const boundary = dialect === '2.4.3' ? corpus.boundary : null;
  const indexer = fillIndexer(reference, dialect, state).indexer;
  const n = corpus.messages.length;
  const first = Math.max(1, n - renders);
  const flushAt = Math.floor(renders / 2);
  const sessionSink = { reports: [], report(kind, key, detail) { this.reports.push([kind, key, detail]); } };
  const session = new api.PruneSession({ config, state, thinkingStripBoundaryTimestamp: boundary, dialect, diagnostics: sessionSink });
  const times = { reference: [], floor: [], pureJs: [], dropIn: [], stateless: [], session: [] };
  const mismatches = { pureJs: 0, dropIn: 0, stateless: 0, session: 0 };
  let flushed = 0;

  for (let i = 0; first + i <= n && i < renders; i++) {
    const prefix = corpus.messages.slice(0, first + i);
    if (i === flushAt) {
      flushed = flush(indexer, state, dialect, prefix);
      session.setState(state);
    }
    const sink = () => {
      const reports = [];
      return { reports, report: (kind, key, detail) => reports.push([kind, key, detail]) };
    };
    const refSink = sink();
    let clone = structuredClone(prefix);
    forceGc();
    let t0 = performance.now();
    const want = reference.pruneMessages(clone, ...referenceArgs(dialect, config, boundary, indexer, refSink));
    times.reference.push(performance.now() - t0);

    clone = structuredClone(prefix);
    forceGc();
    t0 = performance.now();
    JSON.stringify(clone);
    JSON.stringify(want.messages);
    times.floor.push(performance.now() - t0);

    const run = (name, fn, reports) => {
      const input = structuredClone(prefix);
      forceGc();
      const start = performance.now();
      const got = fn(input);
      times[name].push(performance.now() - start);
      if (!sameResult(got, want, reports ? reports.reports : refSink.reports, refSink.reports)) mismatches[name]++;
    };
    const pureSink = sink();
    run('pureJs', (m) => oracle.pruneMessages(m, { state, config, thinkingStripBoundaryTimestamp: boundary }, pureSink), pureSink);
    const dropSink = sink();
    run('dropIn', (m) => dropIn.pruneMessages(m, ...referenceArgs(dialect, config, boundary, indexer, dropSink)), dropSink);
    const statelessSink = sink();
    run('stateless', (m) => api.pruneMessages(m, { state, config, thinkingStripBoundaryTimestamp: boundary, dialect, diagnostics: statelessSink }), statelessSink);
    sessionSink.reports.length = 0;
    run('session', (m) => session.render(m), sessionSink);
  }
  session.close();

  // First calls: nothing kept yet.
  const coldDropIn = [];
  const coldSession = [];
  for (let k = 0; k < cold; k++) {
    const fresh = fillIndexer(reference, dialect, state).indexer;
    const input = structuredClone(corpus.messages);
    forceGc();
    let t0 = performance.now();
    dropIn.pruneMessages(input, ...referenceArgs(dialect, config, boundary, fresh, undefined));
    coldDropIn.push(performance.now() - t0);
    const s = new api.PruneSession({ config, state, thinkingStripBoundaryTimestamp: boundary, dialect });
    const again = structuredClone(corpus.messages);
    forceGc();
    t0 = performance.now();
    s.render(again);
    coldSession.push(performance.now() - t0);
    s.close();
  }

  const out = { renders: times.reference.length, flushedResults: flushed, mismatches, ms: {} };
  for (const [k, v] of Object.entries(times)) out.ms[k] = median(v);
  out.ms.dropInFirst = median(coldDropIn);
  out.ms.sessionFirst = median(coldSession);
  return out;
}

/** No-op renders (empty state, every config section absent). */
function benchNoop(corpus, dialect, runs = 9) {
  const api = require('..');
  const oracle = require(dialect === '2.9.1' ? '../js/pure/v2.9.js' : '../js/pure/v2.4.js');
  const messages = corpus.messages;
  const ms = { pureJs: [], stateless: [], session: [] };
  const session = new api.PruneSession({ config: {}, state: {}, dialect });
  for (let i = 0; i < runs; i++) {
    for (const [name, fn] of [
      ['pureJs', (m) => oracle.pruneMessages(m, { state: {}, config: {} })],
      ['stateless', (m) => api.pruneMessages(m, { state: {}, config: {}, dialect })],
      ['session', (m) => session.render(m)],
    ]) {
      const input = structuredClone(messages);
      forceGc();
      const t0 = performance.now();
      fn(input);
      ms[name].push(performance.now() - t0);
    }
  }
  session.close();
  return Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, median(v)]));
}

module.exports = { benchRender, benchNoop };
