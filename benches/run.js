#!/usr/bin/env node
'use strict';

// The benchmark of the render path, side by side in one process per runtime:
//
//   floor          JSON.stringify(input) + JSON.stringify(output), output being
//                  pure-JS's result messages (only the two stringify calls timed)
//   pure-JS        js/pure.js pruneMessages on a fresh structuredClone
//   prune Buffer   Pruner#prune on a Buffer made once from JSON.stringify(messages)
//                  (config and state converted once, only the prune call timed)
//   pruneMessages  native pruneMessages on a fresh structuredClone
//   session        PruneSession#render after appending one message: each timed
//                  run renders a clone of messages[0..n-1] (untimed) and then
//                  times the render of a clone of all n messages
//
// plus no-op renders (empty state, config with every section absent) for
// pure-JS, pruneMessages and the session. Every timed call gets a fresh
// structuredClone made before the clock starts; a full GC runs before each
// timed call (untimed) so one run's garbage is not billed to the next.
//
// Inputs: ../shared/corpus/{small,medium,large,huge}.json when present, else
// sessions of similar sizes built from scripts/gen-sample.js (the sample
// session repeated with fresh ids, refs, block ids and shifted timestamps).
//
//   node benches/run.js              Node here, then Bun; writes benches/RESULTS.md
//   node benches/run.js --all        the same
//   node benches/run.js --single     this runtime only; prints, writes nothing
//   node benches/run.js --generated  use the generated sessions even if the corpus exists
//   node benches/run.js large huge   only these inputs
//
// Benchmark a release build (`npm run build`), not a debug one.
//
// An export that does not exist yet shows as "n/a" in its column.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync, execFileSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..');
const CORPUS_DIR = path.join(ROOT, '..', 'shared', 'corpus');
const RESULTS_FILE = path.join(__dirname, 'RESULTS.md');
const NAMES = ['small', 'medium', 'large', 'huge'];
// Sizes of the shared corpus files, for the generated stand-ins.
const CORPUS_BYTES = { small: 380928, medium: 2442681, large: 8158549, huge: 33493414 };
// Timed runs (after the warm-up runs) per input.
const RUNS = { small: 41, medium: 15, large: 9, huge: 7 };
const WARMUP = { small: 5, medium: 2, large: 1, huge: 1 };

const IS_BUN = typeof Bun !== 'undefined';
const RUNTIME = IS_BUN ? 'Bun' : 'Node';

// ---------------------------------------------------------------------------
// Arguments

function parseArgs(argv) {
  const opts = { single: false, generated: false, json: null, names: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--single') opts.single = true;
    else if (a === '--all') opts.single = false;
    else if (a === '--generated') opts.generated = true;
    else if (a === '--json') opts.json = argv[++i];
    else if (NAMES.includes(a)) opts.names.push(a);
    else {
      console.error(`unknown argument ${a}; usage: benches/run.js [--all|--single] [--generated] [${NAMES.join('|')} ...]`);
      process.exit(2);
    }
  }
  if (!opts.names.length) opts.names = NAMES.slice();
  return opts;
}

// ---------------------------------------------------------------------------
// Timing

const { forceGc, gcAvailable, median } = require('./timing.js');

// setup() runs untimed and hands its value to fn(), which is timed.
function measure(name, runs, warmup, setup, fn) {
  let result;
  for (let i = 0; i < warmup; i++) result = fn(setup());
  const times = [];
  for (let i = 0; i < runs; i++) {
    const arg = setup();
    forceGc();
    const t0 = performance.now();
    result = fn(arg);
    times.push(performance.now() - t0);
  }
  return { ms: median(times), min: Math.min(...times), runs: times.length, result };
}

// Runs a contender, turning a missing export into n/a and a throw into an error note.
function contender(available, body) {
  if (!available) return { na: true };
  try {
    return body();
  } catch (err) {
    return { error: `${err && err.code ? err.code + ': ' : ''}${err && err.message ? err.message : String(err)}` };
  }
}

// ---------------------------------------------------------------------------
// Inputs

function loadCorpus(name) {
  const text = fs.readFileSync(path.join(CORPUS_DIR, `${name}.json`), 'utf8');
  const s = JSON.parse(text);
  return {
    name,
    source: `corpus/${name}.json`,
    fileBytes: Buffer.byteLength(text),
    messages: s.messages,
    state: s.state,
    config: s.config,
    boundary: s.thinkingBoundaryTimestamp ?? null,
  };
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
let sampleCache = null;

// The sample session of scripts/gen-sample.js, as JSON text of {messages, state}
// plus what the renumbering needs.
function sampleSession() {
  if (sampleCache) return sampleCache;
  const { generate } = require(path.join(ROOT, 'scripts', 'gen-sample.js'));
  const full = generate();
  const s = JSON.parse(full);
  const text = JSON.stringify({ messages: s.messages, state: s.state });
  let maxRef = 0;
  for (const ref of Object.values(s.state.shortRefs)) {
    const m = /^t(\d+)$/.exec(ref);
    if (m) maxRef = Math.max(maxRef, Number(m[1]));
  }
  let maxBlock = 0;
  for (const c of s.state.chains) {
    const m = /^b(\d+)$/.exec(c.blockId);
    if (m) maxBlock = Math.max(maxBlock, Number(m[1]));
  }
  let lo = Infinity;
  let hi = -Infinity;
  for (const m of text.matchAll(/":(1[6-9]\d{11})(?=[,}\]])/g)) {
    const t = Number(m[1]);
    lo = Math.min(lo, t);
    hi = Math.max(hi, t);
  }
  sampleCache = {
    text,
    bytes: Buffer.byteLength(full),
    config: s.config,
    boundary: s.thinkingBoundaryTimestamp,
    maxRef,
    maxBlock,
    // One copy's time span plus a ten-minute pause, rounded to a minute.
    shift: Math.ceil((hi - lo + 600000) / 60000) * 60000,
  };
  return sampleCache;
}

// Copy k of the sample with distinct tool call ids (same length), refs
// t<n + k*maxRef>, block ids b<n + k*maxBlock> and timestamps moved k*shift later.
function sampleCopy(base, k) {
  if (k === 0) return JSON.parse(base.text);
  const tag = BASE58[Math.floor(k / 58) % 58] + BASE58[k % 58];
  const text = base.text
    .replace(/toolu_01(?=[1-9A-HJ-NP-Za-km-z]{20})/g, `toolu_${tag}`)
    .replace(/([`"])t(\d+)(?=[`"])/g, (_, q, n) => `${q}t${Number(n) + k * base.maxRef}`)
    .replace(/"b(\d+)"/g, (_, n) => `"b${Number(n) + k * base.maxBlock}"`)
    .replace(/\{b(\d+)\}/g, (_, n) => `{b${Number(n) + k * base.maxBlock}}`)
    .replace(/Request b(\d+)/g, (_, n) => `Request b${Number(n) + k * base.maxBlock}`)
    .replace(/":(1[6-9]\d{11})(?=[,}\]])/g, (_, t) => `":${Number(t) + k * base.shift}`);
  return JSON.parse(text);
}

// A stand-in for corpus/<name>.json: enough sample copies, one after the
// other, to reach about the corpus file's size, states merged; the thinking
// boundary is the last copy's.
function generatedSession(name) {
  const base = sampleSession();
  const copies = Math.max(1, Math.round(CORPUS_BYTES[name] / base.bytes));
  const messages = [];
  const state = { records: {}, dedupAliases: {}, shortRefs: {}, refAliases: {}, chains: [], summaryBodies: [] };
  for (let k = 0; k < copies; k++) {
    const c = sampleCopy(base, k);
    for (const m of c.messages) messages.push(m);
    for (const key of ['records', 'dedupAliases', 'shortRefs', 'refAliases']) Object.assign(state[key], c.state[key]);
    state.chains.push(...c.state.chains);
    state.summaryBodies.push(...c.state.summaryBodies);
  }
  const fileBytes = Buffer.byteLength(JSON.stringify({ messages, state, config: base.config }));
  return {
    name,
    source: `generated (${copies} × sample)`,
    fileBytes,
    messages,
    state,
    config: base.config,
    boundary: base.boundary + (copies - 1) * base.shift,
  };
}

function loadInput(name, useGenerated) {
  return useGenerated ? generatedSession(name) : loadCorpus(name);
}

// ---------------------------------------------------------------------------
// One input, every contender

const NOOP_STATE = { records: {}, dedupAliases: {}, shortRefs: {}, refAliases: {}, chains: [], summaryBodies: [] };
const NOOP_CONFIG = {};

function benchInput(input, api) {
  const { messages, state, config, boundary } = input;
  const runs = RUNS[input.name];
  const warmup = WARMUP[input.name];
  const opts = { state, config, thinkingStripBoundaryTimestamp: boundary };
  const prefix = messages.slice(0, -1);
  const row = {
    name: input.name,
    source: input.source,
    fileMB: input.fileBytes / 1e6,
    messages: messages.length,
    notes: [],
  };
  const log = (what) => process.stderr.write(`  [${RUNTIME}] ${input.name}: ${what}\n`);

  log('pure-JS');
  const pureRes = measure('pure', runs, warmup, () => structuredClone(messages), (m) => api.pure.pruneMessages(m, opts));
  row.pure = pureRes;
  const expected = pureRes.result;
  row.pureAfterChars = expected.afterChars;
  row.pureBeforeChars = expected.beforeChars;

  log('floor');
  const output = expected.messages;
  row.floor = measure('floor', runs, warmup, () => null, () => JSON.stringify(messages).length + JSON.stringify(output).length);

  const agree = (label, r) => {
    if (!r || r.na || r.error) return;
    const res = r.result;
    if (!res || res.afterChars !== expected.afterChars || res.beforeChars !== expected.beforeChars || res.pruned !== expected.pruned) {
      row.notes.push(`${label} disagrees with pure-JS (before/after ${res && res.beforeChars}/${res && res.afterChars}, pure-JS ${expected.beforeChars}/${expected.afterChars})`);
    }
  };

  log('prune Buffer');
  const bytes = Buffer.from(JSON.stringify(messages));
  row.bufferMB = bytes.length / 1e6;
  row.stateMB = Buffer.byteLength(JSON.stringify(state)) / 1e6;
  row.buffer = contender(typeof api.native.Pruner === 'function', () => {
    const pruner = new api.native.Pruner(config).setState(state);
    const o = { thinkingStripBoundaryTimestamp: boundary };
    return measure('buffer', runs, warmup, () => bytes, (b) => pruner.prune(b, o));
  });
  agree('prune Buffer', row.buffer);

  // Stateless prune, the state passed as an object with every call: with the
  // same state text as the previous call (what a host does between two
  // flushes; the addon reuses its conversion, src/convert.rs), and with a
  // different text in every call (alternating the state and a copy with one
  // extra key), which converts it every time.
  log('prune stateless, same state');
  const hasPrune = typeof api.native.prune === 'function';
  row.pruneKept = contender(hasPrune, () => measure('prune-kept', runs, warmup, () => bytes, (b) => api.native.prune(b, opts)));
  agree('prune, same state', row.pruneKept);
  log('prune stateless, new state text every call');
  const otherOpts = { ...opts, state: { benchCopy: true, ...state } };
  let flip = false;
  row.pruneFresh = contender(hasPrune, () => measure('prune-fresh', runs, warmup, () => {
    flip = !flip;
    return flip ? otherOpts : opts;
  }, (o) => api.native.prune(bytes, o)));
  agree('prune, new state text', row.pruneFresh);

  log('pruneMessages');
  row.pruneMessages = contender(typeof api.native.pruneMessages === 'function', () =>
    measure('pruneMessages', runs, warmup, () => structuredClone(messages), (m) => api.native.pruneMessages(m, opts)));
  agree('pruneMessages', row.pruneMessages);

  log('session render after one appended message');
  row.session = contender(typeof api.native.PruneSession === 'function', () => {
    const session = new api.native.PruneSession({ config, state, thinkingStripBoundaryTimestamp: boundary });
    session.render(structuredClone(prefix));
    return measure('session', runs, warmup, () => {
      session.render(structuredClone(prefix));
      return structuredClone(messages);
    }, (m) => session.render(m));
  });
  agree('session render', row.session);

  // No-op: the same messages, nothing configured.
  const noopOpts = { state: NOOP_STATE, config: NOOP_CONFIG, thinkingStripBoundaryTimestamp: null };
  log('no-op pure-JS');
  row.noopPure = measure('noop-pure', runs, warmup, () => structuredClone(messages), (m) => api.pure.pruneMessages(m, noopOpts));
  if (row.noopPure.result.pruned) row.notes.push('the no-op input was pruned by pure-JS');
  log('no-op pruneMessages');
  row.noopPruneMessages = contender(typeof api.native.pruneMessages === 'function', () =>
    measure('noop-pruneMessages', runs, warmup, () => structuredClone(messages), (m) => api.native.pruneMessages(m, noopOpts)));
  log('no-op session render');
  row.noopSession = contender(typeof api.native.PruneSession === 'function', () => {
    const session = new api.native.PruneSession({ config: NOOP_CONFIG, state: NOOP_STATE, thinkingStripBoundaryTimestamp: null });
    session.render(structuredClone(prefix));
    return measure('noop-session', runs, warmup, () => {
      session.render(structuredClone(prefix));
      return structuredClone(messages);
    }, (m) => session.render(m));
  });
  for (const [label, r] of [['no-op pruneMessages', row.noopPruneMessages], ['no-op session render', row.noopSession]]) {
    if (r && r.result && r.result.pruned) row.notes.push(`${label} reported pruned: true`);
  }
  for (const key of ['buffer', 'pruneKept', 'pruneFresh', 'pruneMessages', 'session', 'noopPruneMessages', 'noopSession']) {
    if (row[key] && row[key].error) row.notes.push(`${key} threw: ${row[key].error}`);
  }

  // Drop the results (big) before the rows travel as JSON.
  for (const key of ['pure', 'floor', 'buffer', 'pruneKept', 'pruneFresh', 'pruneMessages', 'session', 'noopPure', 'noopPruneMessages', 'noopSession']) {
    if (row[key]) delete row[key].result;
  }
  return row;
}

function runtimeVersion() {
  return IS_BUN ? Bun.version : process.versions.node;
}

function runHere(opts) {
  const api = {
    native: require(ROOT),
    pure: require(path.join(ROOT, 'js', 'pure.js')),
  };
  const useGenerated = opts.generated || !fs.existsSync(CORPUS_DIR);
  const rows = [];
  for (const name of opts.names) {
    process.stderr.write(`[${RUNTIME}] loading ${name}${useGenerated ? ' (generated)' : ''}\n`);
    const input = loadInput(name, useGenerated);
    rows.push(benchInput(input, api));
  }
  let loader = {};
  try {
    loader = require(path.join(ROOT, 'loader.js'));
  } catch {
    // an older layout without loader.js
  }
  const binary = fs.readdirSync(ROOT).find((f) => /^condense-native\..*\.node$/.test(f));
  const binaryInfo = binary ? (() => {
    const st = fs.statSync(path.join(ROOT, binary));
    return `${binary}, ${(st.size / 1e6).toFixed(1)} MB, built ${st.mtime.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  })() : 'no local binary (package binary or fallback)';
  return {
    runtime: RUNTIME,
    version: runtimeVersion(),
    backend: api.native.backend,
    binary: binaryInfo,
    arrayNative: typeof loader.pruneArray === 'function' && typeof loader.NativeSession === 'function',
    exports: {
      Pruner: typeof api.native.Pruner === 'function',
      pruneMessages: typeof api.native.pruneMessages === 'function',
      PruneSession: typeof api.native.PruneSession === 'function',
    },
    generated: useGenerated,
    gc: gcAvailable,
    rows,
  };
}

// ---------------------------------------------------------------------------
// Markdown

function fmtMs(x) {
  if (x < 0.1) return x.toFixed(4);
  if (x < 1) return x.toFixed(3);
  if (x < 10) return x.toFixed(2);
  if (x < 100) return x.toFixed(1);
  return x.toFixed(0);
}

function fmtRatio(x) {
  if (!Number.isFinite(x)) return 'n/a';
  if (x < 10) return `${x.toFixed(2)}×`;
  if (x < 100) return `${x.toFixed(1)}×`;
  return `${x.toFixed(0)}×`;
}

const ok = (r) => r && !r.na && !r.error && Number.isFinite(r.ms);
const cellMs = (r) => (ok(r) ? fmtMs(r.ms) : r && r.error ? 'error' : 'n/a');
const ratio = (num, r) => (ok(r) ? fmtRatio(num / r.ms) : 'n/a');

function table(result) {
  const lines = [];
  lines.push('| input | JSON MB | messages | floor ms | pure-JS ms | floor/pure-JS | prune Buffer ms | Buffer MB/s | Buffer floor/x | Buffer pure-JS/x | pruneMessages ms | pruneMessages floor/x | pruneMessages pure-JS/x | session append ms | session floor/x | session pure-JS/x |');
  lines.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of result.rows) {
    const f = r.floor.ms;
    const p = r.pure.ms;
    const mbps = ok(r.buffer) ? (r.bufferMB / (r.buffer.ms / 1000)).toFixed(0) : 'n/a';
    lines.push(`| ${r.name} | ${r.bufferMB.toFixed(2)} | ${r.messages} | ${fmtMs(f)} | ${fmtMs(p)} | ${fmtRatio(f / p)} | ` +
      `${cellMs(r.buffer)} | ${mbps} | ${ratio(f, r.buffer)} | ${ratio(p, r.buffer)} | ` +
      `${cellMs(r.pruneMessages)} | ${ratio(f, r.pruneMessages)} | ${ratio(p, r.pruneMessages)} | ` +
      `${cellMs(r.session)} | ${ratio(f, r.session)} | ${ratio(p, r.session)} |`);
  }
  return lines.join('\n');
}

function statelessTable(result) {
  const lines = [];
  lines.push('| input | state JSON MB | prune, new state text ms | prune, same state text ms | new / same | Pruner.prune ms | same / Pruner.prune |');
  lines.push('|---|--:|--:|--:|--:|--:|--:|');
  const rel = (a, b) => (ok(a) && ok(b) ? fmtRatio(a.ms / b.ms) : 'n/a');
  for (const r of result.rows) {
    lines.push(`| ${r.name} | ${r.stateMB.toFixed(2)} | ${cellMs(r.pruneFresh)} | ${cellMs(r.pruneKept)} | ${rel(r.pruneFresh, r.pruneKept)} | ` +
      `${cellMs(r.buffer)} | ${rel(r.pruneKept, r.buffer)} |`);
  }
  return lines.join('\n');
}

function noopTable(result) {
  const lines = [];
  lines.push('| input | pure-JS no-op ms | pruneMessages no-op ms | pruneMessages / pure-JS | session no-op ms | session / pure-JS |');
  lines.push('|---|--:|--:|--:|--:|--:|');
  const rel = (r, p) => (ok(r) ? `${(r.ms / p).toFixed(2)}` : 'n/a');
  for (const r of result.rows) {
    const p = r.noopPure.ms;
    lines.push(`| ${r.name} | ${fmtMs(p)} | ${cellMs(r.noopPruneMessages)} | ${rel(r.noopPruneMessages, p)} | ` +
      `${cellMs(r.noopSession)} | ${rel(r.noopSession, p)} |`);
  }
  return lines.join('\n');
}

// Each target: what, where, and a test on one runtime's rows.
function checks(result) {
  const row = (name) => result.rows.find((r) => r.name === name);
  const out = [];
  const add = (what, name, r, value, good, shown) => {
    if (!row(name)) return;
    if (!ok(r)) out.push({ what, status: r && r.error ? 'error' : 'n/a', value: r && r.error ? r.error : 'not available' });
    else out.push({ what, status: good(value) ? 'met' : 'missed', value: shown(value) });
  };
  for (const name of ['large', 'huge']) {
    const r = row(name);
    if (r) add(`session render after one appended message, ${name}: ≥ 100× faster than the floor`, name, r.session,
      ok(r.session) ? r.floor.ms / r.session.ms : NaN, (v) => v >= 100, (v) => fmtRatio(v));
  }
  {
    const r = row('large');
    if (r) add('pruneMessages, large: ≥ 1.5× faster than the floor', 'large', r.pruneMessages,
      ok(r.pruneMessages) ? r.floor.ms / r.pruneMessages.ms : NaN, (v) => v >= 1.5, (v) => fmtRatio(v));
  }
  for (const name of ['large', 'huge']) {
    const r = row(name);
    if (r) add(`prune on a Buffer, ${name}: ≥ 1 GB/s`, name, r.buffer,
      ok(r.buffer) ? r.bufferMB / (r.buffer.ms / 1000) : NaN, (v) => v >= 1000, (v) => `${v.toFixed(0)} MB/s`);
  }
  for (const [label, key] of [['pruneMessages', 'noopPruneMessages'], ['session render', 'noopSession']]) {
    const rs = result.rows.filter((r) => ok(r[key]));
    if (!rs.length) {
      out.push({ what: `no-op ${label} ≤ 1.2× the pure-JS no-op (every input)`, status: 'n/a', value: 'not available' });
      continue;
    }
    const worst = rs.reduce((a, r) => (r[key].ms / r.noopPure.ms > a[key].ms / a.noopPure.ms ? r : a));
    const v = worst[key].ms / worst.noopPure.ms;
    out.push({
      what: `no-op ${label} ≤ 1.2× the pure-JS no-op (every input)`,
      status: v <= 1.2 ? 'met' : 'missed',
      value: `worst ${v.toFixed(2)}× (${worst.name})`,
    });
  }
  return out;
}

function gitDescription() {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'index.js', 'loader.js', 'js'], { cwd: ROOT, encoding: 'utf8' }).trim();
    return `${head}${dirty ? ' (src/, index.js or js/ modified in the work tree)' : ''}`;
  } catch {
    return 'unknown';
  }
}

function bunVersion(bun) {
  try {
    return execFileSync(bun, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

function markdown(results, elapsedS, opts) {
  const cpus = os.cpus();
  const lines = [];
  lines.push('# condense-native: render-path benchmark');
  lines.push('');
  lines.push(`Written by \`npm run bench\` (\`benches/run.js\`) on ${new Date().toISOString().slice(0, 10)}; the whole run took ${elapsedS.toFixed(0)} s.`);
  lines.push('');
  lines.push('## Machine');
  lines.push('');
  lines.push(`- CPU: ${cpus.length ? cpus[0].model.trim() : 'unknown'}, ${cpus.length} logical cores; ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM`);
  lines.push(`- OS: ${os.type()} ${os.release()} ${os.arch()}`);
  lines.push(`- Load average (1/5/15 min) when the run started: ${opts.loadavg.map((x) => x.toFixed(2)).join(' / ')}`);
  for (const r of results) lines.push(`- ${r.runtime} ${r.version} (backend: ${r.backend}; forced GC between runs: ${r.gc ? 'yes' : 'no'})`);
  lines.push(`- Code: commit ${gitDescription()}`);
  lines.push(`- Binary: ${results[0].binary} (a debug build is ~20× the size of a release build: \`npm run build\` before benchmarking)`);
  const gen = results.some((r) => r.generated);
  lines.push(`- Inputs: ${gen ? 'sessions generated from scripts/gen-sample.js (../shared/corpus was absent or --generated was given)' : '../shared/corpus/{small,medium,large,huge}.json'}`);
  lines.push('');
  lines.push('## What is measured');
  lines.push('');
  lines.push('Median wall time of repeated runs in one process per runtime ' +
    `(${opts.names.map((n) => `${n}: ${RUNS[n]} runs after ${WARMUP[n]} warm-up`).join(', ')}). ` +
    'Every array input is a fresh `structuredClone` made before the clock starts, and a full GC runs (untimed) before each timed call.');
  lines.push('');
  lines.push('- **floor**: `JSON.stringify(input).length + JSON.stringify(output).length`, output = pure-JS\'s result messages.');
  lines.push('- **pure-JS**: `js/pure.js` `pruneMessages(clone, { state, config, thinkingStripBoundaryTimestamp })`.');
  lines.push('- **prune Buffer**: `new Pruner(config).setState(state)` once, then only `pruner.prune(buffer, { thinkingStripBoundaryTimestamp })` timed, on a Buffer made once from `JSON.stringify(messages)`; MB/s = Buffer bytes / median time.');
  lines.push('- **prune, same state text / new state text**: stateless `prune(buffer, { state, config, thinkingStripBoundaryTimestamp })` on the same Buffer; "same" passes the same state every call (as a host does between flushes: the addon reuses the conversion it kept, `src/convert.rs`), "new" alternates the state with a copy holding one extra key, so every call converts its state.');
  lines.push('- **pruneMessages**: native `pruneMessages(clone, { state, config, thinkingStripBoundaryTimestamp })`.');
  lines.push('- **session append**: `new PruneSession({ config, state, thinkingStripBoundaryTimestamp })`; each run renders a clone of the first n−1 messages (untimed), then the timed `session.render(clone of all n)`.');
  lines.push('- **no-op**: the same messages with an empty state and `config = {}`, for pure-JS, native `pruneMessages` and a session (same n−1 / n alternation).');
  lines.push('- Ratios: `floor/x` and `pure-JS/x` are how many times faster than the floor / pure-JS the contender is (higher is better). A contender whose export is missing shows n/a.');
  lines.push('');
  for (const r of results) {
    lines.push(`## ${r.runtime} ${r.version}`);
    lines.push('');
    lines.push(table(r));
    lines.push('');
    lines.push('Stateless `prune` on the same Buffer, state and config passed with every call:');
    lines.push('');
    lines.push(statelessTable(r));
    lines.push('');
    lines.push('No-op render (nothing applies):');
    lines.push('');
    lines.push(noopTable(r));
    lines.push('');
    const notes = r.rows.flatMap((row) => row.notes.map((n) => `${row.name}: ${n}`));
    const missing = Object.entries(r.exports).filter(([, v]) => !v).map(([k]) => `\`${k}\``);
    if (missing.length) notes.unshift(`not exported by this build: ${missing.join(', ')} (their columns show n/a)`);
    if (!missing.length && r.backend === 'native' && !r.arrayNative) {
      notes.unshift('the binding has no pruneArray/NativeSession: pruneMessages and PruneSession ran on the pure-JS fallback');
    }
    if (notes.length) {
      lines.push('Notes:');
      lines.push('');
      for (const n of notes) lines.push(`- ${n}`);
      lines.push('');
    }
    const inputs = r.rows.map((row) => `${row.name} = ${row.source}`).join(', ');
    lines.push(`Inputs: ${inputs}.`);
    lines.push('');
  }
  lines.push('## Targets');
  lines.push('');
  lines.push(`| target | ${results.map((r) => r.runtime).join(' | ')} |`);
  lines.push(`|---|${results.map(() => '---').join('|')}|`);
  const per = results.map((r) => checks(r));
  const whats = [...new Set(per.flat().map((c) => c.what))];
  for (const what of whats) {
    const cells = per.map((cs) => {
      const c = cs.find((x) => x.what === what);
      return c ? `${c.status} (${c.value})` : 'not run';
    });
    lines.push(`| ${what} | ${cells.join(' | ')} |`);
  }
  lines.push('');
  return lines.join('\n');
}

// ---------------------------------------------------------------------------
// Main

function otherRuntime() {
  if (IS_BUN) return { name: 'Node', cmd: 'node', args: [] };
  const bun = path.join(ROOT, 'node_modules', '.bin', process.platform === 'win32' ? 'bun.cmd' : 'bun');
  return { name: 'Bun', cmd: fs.existsSync(bun) ? bun : 'bun', args: [] };
}

function runOther(opts) {
  const other = otherRuntime();
  const version = bunVersion(other.cmd);
  if (!version) {
    process.stderr.write(`${other.name} is not available (${other.cmd}): its table is skipped\n`);
    return null;
  }
  const tmp = path.join(os.tmpdir(), `condense-bench-${process.pid}-${Date.now()}.json`);
  const args = [...other.args, __filename, '--single', '--json', tmp, ...opts.names];
  if (opts.generated) args.push('--generated');
  const r = spawnSync(other.cmd, args, { stdio: ['ignore', 'ignore', 'inherit'], cwd: ROOT });
  if (r.status !== 0 || !fs.existsSync(tmp)) {
    process.stderr.write(`${other.name} run failed (exit ${r.status})\n`);
    return null;
  }
  const data = JSON.parse(fs.readFileSync(tmp, 'utf8'));
  fs.unlinkSync(tmp);
  return data;
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  opts.loadavg = os.loadavg();
  const t0 = Date.now();
  const here = runHere(opts);
  if (opts.json) {
    fs.writeFileSync(opts.json, JSON.stringify(here));
    return;
  }
  if (opts.single) {
    const elapsed = (Date.now() - t0) / 1000;
    console.log(markdown([here], elapsed, opts));
    return;
  }
  const there = runOther(opts);
  const results = [here, there].filter(Boolean).sort((a, b) => (a.runtime === 'Node' ? -1 : b.runtime === 'Node' ? 1 : 0));
  const elapsed = (Date.now() - t0) / 1000;
  const md = markdown(results, elapsed, opts);
  fs.writeFileSync(RESULTS_FILE, md);
  console.log(md);
  process.stderr.write(`wrote ${path.relative(process.cwd(), RESULTS_FILE)} in ${elapsed.toFixed(0)} s\n`);
}

main();
