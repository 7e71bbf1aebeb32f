'use strict';

// The render path measured as pi calls it: a conversation growing by one
// message per render, each render on a fresh structuredClone of the
// messages so far, a full GC before each timed call, and one flush halfway
// (pi-condense summarizing a pending batch: the indexer and the state
// change). Contenders, side by side in this process:
//
//   reference  pi-condense's own pruneMessages (../shared/reference) with its
//              real ToolCallIndexer
//   limit      what any render of a fresh array must at least do: walk it
//              (role, timestamp, ids, block types and lengths) and build a
//              fresh stub object for each tool result the state has a
//              record for (limitWalk below)
//   floor      JSON.stringify of the input and of the reference's output
//   pure-JS    this project's oracle (js/pure/) on the state object
//   drop-in    condense-native/pi-condense-2.x, same indexer object every render
//   drop-in, plain indexer
//              the same with an indexer that has only the methods the
//              release's render path calls (each forwarding to the real
//              indexer): no field of pi-condense's class to watch
//   stateless  pruneMessages(messages, { state, config, dialect })
//   session    one PruneSession, setState at the flush; and one more in
//              verify mode (the exact answer whatever the host edited)
//
// plus the first call of the drop-in on a conversation (a fresh indexer
// object, so nothing is kept), the drop-in right after invalidate(indexer),
// and the first render of a session. Every render of every contender is
// checked against the reference's (messages, sizes, 2.9.1 diagnostics); a
// mismatch is counted and reported, never hidden.

const { forceGc, median } = require('./timing.js');
const { stateOf, configOf, flush, loadReference } = require('./corpus.js');
const { fillIndexer } = require('../__test__/helpers/indexer.js');
const { INDEXER_METHODS } = require('../js/dropin.js');

// An indexer with the documented methods only, answering what `indexer`
// answers.
function plainIndexer(indexer, dialect) {
  const plain = {};
  for (const name of INDEXER_METHODS[dialect]) plain[name] = (...args) => indexer[name](...args);
  return plain;
}

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

function reportSink() {
  const reports = [];
  return { reports, report: (kind, key, detail) => reports.push([kind, key, detail]) };
}

/**
 * The stubs the limit walk builds for this render: one per tool result
 * whose key the state has a record for (what pi-condense has summarized),
 * by tool-call id, with the text the reference gave it (or the short ref
 * where the reference dropped or kept the result). The texts are made
 * here, untimed: an engine keeps them between renders; what the walk pays
 * for is finding the results and building the objects.
 */
function limitStubs(state, dialect, want) {
  const stubText = new Map();
  for (const m of want.messages) {
    if (m && m.role === 'toolResult' && Array.isArray(m.content) && m.content[0] && typeof m.content[0].text === 'string') {
      stubText.set(`${m.toolCallId}@${m.timestamp}`, m.content[0].text);
    }
  }
  const stubs = new Map();
  for (const [key, record] of Object.entries(state.records || {})) {
    const id = dialect === '2.9.1' ? record.toolCallId : key;
    const timestamp = dialect === '2.9.1' ? record.resultTimestamp : undefined;
    const text = stubText.get(`${id}@${timestamp}`) ?? state.shortRefs?.[key] ?? '';
    stubs.set(id, { timestamp, text });
  }
  return stubs;
}

/**
 * The physical limit of a render on a fresh array: read what every render
 * must read of each message, and build a new output array holding a fresh
 * stub object for each summarized tool result. Returns a checksum of what
 * was read (so nothing is optimized away), the output and the stub count.
 */
function limitWalk(messages, stubs) {
  const out = new Array(messages.length);
  let sum = 0;
  let built = 0;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    const role = m.role;
    sum += role.length + m.timestamp;
    const content = m.content;
    if (typeof content === 'string') {
      sum += content.length;
    } else if (Array.isArray(content)) {
      sum += content.length;
      for (let k = 0; k < content.length; k++) {
        const b = content[k];
        const type = b.type;
        sum += type.length;
        const id = b.id;
        if (id !== undefined) sum += id.length;
        const text = type === 'thinking' ? b.thinking : b.text;
        if (typeof text === 'string') sum += text.length;
      }
    }
    if (role === 'toolResult') {
      const id = m.toolCallId;
      sum += id.length;
      const stub = stubs.get(id);
      if (stub !== undefined && (stub.timestamp === undefined || stub.timestamp === m.timestamp)) {
        out[i] = {
          role: 'toolResult',
          toolCallId: id,
          toolName: m.toolName,
          content: [{ type: 'text', text: stub.text }],
          isError: false,
          timestamp: m.timestamp,
        };
        built++;
        continue;
      }
    }
    out[i] = m;
  }
  return { sum, out, built };
}

/**
 * Measures one corpus file in one dialect. Returns medians (ms) per
 * contender, the first calls, how many renders were checked and how many
 * differed from the reference's (with the first error of a contender that
 * threw), and what the limit walk built.
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
  const plain = plainIndexer(indexer, dialect);
  const n = corpus.messages.length;
  const first = Math.max(1, n - renders);
  const flushAt = Math.floor(renders / 2);
  const sessionOptions = (sink, verify) => ({ config, state, thinkingStripBoundaryTimestamp: boundary, dialect, diagnostics: sink, verify });
  const sessionSink = reportSink();
  const session = new api.PruneSession(sessionOptions(sessionSink, false));
  const verifySink = reportSink();
  const verifying = new api.PruneSession(sessionOptions(verifySink, true));
  const times = { reference: [], limit: [], floor: [], pureJs: [], dropIn: [], dropInPlain: [], stateless: [], session: [], sessionVerify: [] };
  const checked = {};
  const mismatches = {};
  const errors = {};
  let flushed = 0;
  let walked = { messages: 0, stubs: 0 };

  // Times fn on a fresh clone of `messages` after a GC and checks its
  // result against `want`; a throw counts as a mismatch.
  const timed = (name, messages, fn, sink, want, wantReports, into) => {
    const input = structuredClone(messages);
    forceGc();
    checked[name] = (checked[name] ?? 0) + 1;
    try {
      const start = performance.now();
      const got = fn(input);
      into.push(performance.now() - start);
      if (!sameResult(got, want, sink.reports, wantReports)) mismatches[name] = (mismatches[name] ?? 0) + 1;
    } catch (err) {
      mismatches[name] = (mismatches[name] ?? 0) + 1;
      errors[name] ??= `${err && err.code ? `${err.code}: ` : ''}${err && err.message ? err.message : String(err)}`;
    }
  };

  for (let i = 0; first + i <= n && i < renders; i++) {
    const prefix = corpus.messages.slice(0, first + i);
    if (i === flushAt) {
      flushed = flush(indexer, state, dialect, prefix);
      session.setState(state);
      verifying.setState(state);
    }
    const refSink = reportSink();
    let clone = structuredClone(prefix);
    forceGc();
    let t0 = performance.now();
    const want = reference.pruneMessages(clone, ...referenceArgs(dialect, config, boundary, indexer, refSink));
    times.reference.push(performance.now() - t0);

    const stubs = limitStubs(state, dialect, want);
    clone = structuredClone(prefix);
    forceGc();
    t0 = performance.now();
    const walk = limitWalk(clone, stubs);
    times.limit.push(performance.now() - t0);
    walked = { messages: prefix.length, stubs: walk.built, checksum: walk.sum };

    clone = structuredClone(prefix);
    forceGc();
    t0 = performance.now();
    JSON.stringify(clone);
    JSON.stringify(want.messages);
    times.floor.push(performance.now() - t0);

    const run = (name, fn, sink) => timed(name, prefix, fn, sink, want, refSink.reports, times[name]);
    const pureSink = reportSink();
    run('pureJs', (m) => oracle.pruneMessages(m, { state, config, thinkingStripBoundaryTimestamp: boundary }, pureSink), pureSink);
    const dropSink = reportSink();
    run('dropIn', (m) => dropIn.pruneMessages(m, ...referenceArgs(dialect, config, boundary, indexer, dropSink)), dropSink);
    const plainSink = reportSink();
    run('dropInPlain', (m) => dropIn.pruneMessages(m, ...referenceArgs(dialect, config, boundary, plain, plainSink)), plainSink);
    const statelessSink = reportSink();
    run('stateless', (m) => api.pruneMessages(m, { state, config, thinkingStripBoundaryTimestamp: boundary, dialect, diagnostics: statelessSink }), statelessSink);
    sessionSink.reports.length = 0;
    run('session', (m) => session.render(m), sessionSink);
    verifySink.reports.length = 0;
    run('sessionVerify', (m) => verifying.render(m), verifySink);
  }
  session.close();
  verifying.close();

  // First calls: a fresh indexer object each time, so the drop-in has
  // nothing kept; a new session; and the drop-in right after it was told to
  // forget what it kept for the render loop's indexer.
  const firstCalls = { dropInFirst: [], sessionFirst: [], dropInInvalidated: [] };
  const all = corpus.messages;
  const wantSink = reportSink();
  const wantFresh = reference.pruneMessages(structuredClone(all), ...referenceArgs(dialect, config, boundary, fillIndexer(reference, dialect, state).indexer, wantSink));
  const loopSink = reportSink();
  const wantLoop = reference.pruneMessages(structuredClone(all), ...referenceArgs(dialect, config, boundary, indexer, loopSink));
  for (let k = 0; k < cold; k++) {
    const fresh = fillIndexer(reference, dialect, state).indexer;
    const dropSink = reportSink();
    timed('dropInFirst', all, (m) => dropIn.pruneMessages(m, ...referenceArgs(dialect, config, boundary, fresh, dropSink)), dropSink, wantFresh, wantSink.reports, firstCalls.dropInFirst);
    const sink = reportSink();
    const s = new api.PruneSession(sessionOptions(sink, false));
    timed('sessionFirst', all, (m) => s.render(m), sink, wantFresh, wantSink.reports, firstCalls.sessionFirst);
    s.close();
    const invSink = reportSink();
    timed(
      'dropInInvalidated',
      all,
      (m) => {
        dropIn.invalidate(indexer);
        return dropIn.pruneMessages(m, ...referenceArgs(dialect, config, boundary, indexer, invSink));
      },
      invSink,
      wantLoop,
      loopSink.reports,
      firstCalls.dropInInvalidated,
    );
  }

  const out = { renders: times.reference.length, flushedResults: flushed, walked, checked, mismatches, errors, ms: {} };
  for (const [k, v] of Object.entries({ ...times, ...firstCalls })) out.ms[k] = median(v);
  return out;
}

/**
 * No-op renders (empty state, every config section absent), each checked
 * against the reference's no-op (an empty ToolCallIndexer, no sections).
 */
async function benchNoop(corpus, dialect, runs = 9) {
  const api = require('..');
  const oracle = require(dialect === '2.9.1' ? '../js/pure/v2.9.js' : '../js/pure/v2.4.js');
  const reference = await loadReference(dialect);
  const messages = corpus.messages;
  let want = null;
  let wantReports = [];
  if (reference) {
    const sink = reportSink();
    const args = dialect === '2.9.1' ? [new reference.ToolCallIndexer(), undefined, undefined, undefined, undefined, sink] : [new reference.ToolCallIndexer()];
    want = reference.pruneMessages(structuredClone(messages), ...args);
    wantReports = sink.reports;
  }
  const ms = { pureJs: [], stateless: [], session: [] };
  const checked = {};
  const mismatches = {};
  const session = new api.PruneSession({ config: {}, state: {}, dialect });
  for (let i = 0; i < runs; i++) {
    for (const [name, fn] of [
      ['pureJs', (m, sink) => oracle.pruneMessages(m, { state: {}, config: {} }, sink)],
      ['stateless', (m, sink) => api.pruneMessages(m, { state: {}, config: {}, dialect, diagnostics: sink })],
      ['session', (m) => session.render(m)],
    ]) {
      const input = structuredClone(messages);
      const sink = reportSink();
      forceGc();
      const t0 = performance.now();
      const got = fn(input, sink);
      ms[name].push(performance.now() - t0);
      if (want) {
        checked[name] = (checked[name] ?? 0) + 1;
        if (!sameResult(got, want, sink.reports, wantReports)) mismatches[name] = (mismatches[name] ?? 0) + 1;
      }
    }
  }
  session.close();
  return { ms: Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, median(v)])), checked, mismatches };
}

module.exports = { benchRender, benchNoop, referenceArgs, reportSink, limitWalk };
