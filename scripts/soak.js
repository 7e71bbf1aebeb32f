'use strict';

// Soak and memory checks (docs/RELIABILITY.md).
//
// `npm run soak` runs, for each runtime (Node, Bun) and each API, one child
// process that renders the medium corpus SOAK_N times (default 100 000)
// after a warm-up, as a host does: one call per model request, the event
// loop turning in between. The APIs: `prune`, `Pruner.prune` and `sizeOf` on
// the corpus's bytes, `pruneMessages` on its array, and three kept paths
// over a growing array (whole conversations, the corpus one message at a
// time): `PruneSession` with a flush every ten renders, and the drop-ins
// `condense-native/pi-condense-2.4` and `-2.9`, asked with the pure
// oracle's indexer over the corpus state in each dialect's shape
// (js/pure/v2.x.js `createIndexer`; benches/corpus.js `stateOf`). Every
// other conversation of a kept path starts on a new session (the old one
// closed) or a new indexer (the old one dropped, for the drop-in's WeakMap to
// let go); the others start over on the same one. The kept paths are sampled
// after each conversation. Every SOAK_N/100 renders it lets the runtime
// settle (gc, two event-loop turns, gc) and samples the RSS, with the
// engine's heap and ArrayBuffer figures and the RSS of the addon's allocator
// arena (see mappingMiB) to tell what grew. Node's children run with glibc's
// mmap threshold fixed (see childEnv). The RSS after the warm-up (the
// largest of the first ten samples) and at the end (the largest of the last
// ten) must be within 5 %; the smallest samples and a least-squares slope are
// reported too. Single samples are not compared: with the allocator keeping
// or returning freed blocks, the RSS at rest moves by tens of MiB between two
// samples without any trend.
//
// Then, per runtime and API, bursts: SOAK_BURSTS (8) times SOAK_BURST renders
// back to back without the event loop turning (a batch job, a benchmark),
// each followed by a gc and a sample. The largest sample of the second half
// must be within 5 % of the largest of the first half.
//
// Last, one fresh process per runtime and API (prune, Pruner.prune) prunes
// the huge corpus once and reports its peak RSS (the high-water mark) as a
// multiple of the input size.
//
//   SOAK_N=100000           renders per API after the warm-up
//   SOAK_WARMUP=5000        warm-up renders per API
//   SOAK_BURST=500          renders of a back-to-back burst
//   SOAK_BURSTS=8           bursts per runtime and API
//   SOAK_RUNTIMES=node,bun  which runtimes to run
//   SOAK_APIS=prune,Pruner.prune,sizeOf,pruneMessages,PruneSession,pi-condense-2.4,pi-condense-2.9
//   SOAK_CORPUS, SOAK_HUGE  corpus files ({messages, state, config, thinkingBoundaryTimestamp})
//   SOAK_SKIP_SOAK=1, SOAK_SKIP_BURST=1, SOAK_SKIP_PEAK=1
//   SOAK_MMAP_THRESHOLD=131072  glibc mmap threshold of the Node soak children
//                           (see childEnv; `default` leaves glibc's adaptive one)
//   SOAK_PACKAGE=dir        soak a copy of the package instead of this checkout
//   SOAK_JSON=file          also write every figure as JSON
//
// Exit status 1 when a check fails or a child fails.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { forceGc } = require('../benches/timing.js');
const { dropInOf } = require('../benches/corpus.js');

const ROOT = path.join(__dirname, '..');
const SHARED = path.join(ROOT, '..', 'shared', 'corpus');
// The package under test: this checkout, or a copy (SOAK_PACKAGE) so that a
// rebuild in the checkout cannot swap the binary under a running soak.
const PKG = process.env.SOAK_PACKAGE ? path.resolve(process.env.SOAK_PACKAGE) : ROOT;
const LIMIT = 0.05;
const SAMPLES = 100;
const WINDOW = 10;

const isBun = typeof globalThis.Bun !== 'undefined';
const runtimeName = () => (isBun ? `bun ${globalThis.Bun.version}` : `node ${process.version}`);

// Twice: what Node's first collection finalizes, the second frees.
function gc() {
  forceGc();
  forceGc();
}

const rssMiB = () => process.memoryUsage().rss / 2 ** 20;

// What the engine says it holds, sampled with the RSS to tell which part of
// the process grows: its heap, the memory of Buffers and ArrayBuffers, and
// under Bun the JSC heap's capacity. The rest of the RSS is the allocators'
// (the engine's malloc, the addon's mimalloc), which no API reports.
function engineMiB() {
  const m = process.memoryUsage();
  const f = { heapUsed: m.heapUsed / 2 ** 20, heapTotal: m.heapTotal / 2 ** 20, external: m.external / 2 ** 20, arrayBuffers: m.arrayBuffers / 2 ** 20 };
  if (isBun) f.jscCapacity = require('bun:jsc').heapStats().heapCapacity / 2 ** 20;
  return f;
}
// The RSS by mapping (Linux), to tell which allocator holds it: the large
// reservations (512 MiB or more) mapped after the addon loaded, which are
// the addon's mimalloc arena; those mapped before, the runtime's own (Bun's
// mimalloc arena, JSC's heap); and all other mappings (binaries, stacks, the
// engine's heap, malloc). `markRuntimeMappings` runs before the package
// loads; without /proc/self/smaps there are no such figures.
const LARGE_MAPPING = 2 ** 29;
let runtimeLarge = null;

function mappings() {
  const out = new Map();
  let current = null;
  for (const line of fs.readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
    if (m) {
      current = { size: parseInt(m[2], 16) - parseInt(m[1], 16), rss: 0, huge: 0 };
      out.set(m[0], current);
      continue;
    }
    const r = /^Rss:\s+(\d+) kB/.exec(line);
    if (r && current) current.rss = Number(r[1]) / 1024;
    const h = /^AnonHugePages:\s+(\d+) kB/.exec(line);
    if (h && current) current.huge = Number(h[1]) / 1024;
  }
  return out;
}

function markRuntimeMappings() {
  if (!fs.existsSync('/proc/self/smaps')) return;
  runtimeLarge = new Set([...mappings()].filter(([, m]) => m.size >= LARGE_MAPPING).map(([k]) => k));
}

function mappingMiB() {
  if (runtimeLarge === null) return {};
  const f = { addonArena: 0, addonArenaHuge: 0, runtimeArenas: 0, otherMappings: 0 };
  for (const [k, m] of mappings()) {
    const where = m.size < LARGE_MAPPING ? 'otherMappings' : runtimeLarge.has(k) ? 'runtimeArenas' : 'addonArena';
    f[where] += m.rss;
    // Transparent huge pages in the addon's arena: the kernel backs a 2 MiB
    // range with one page, at a fault or later (khugepaged), however little
    // of it the allocator uses (docs/RELIABILITY.md, "Transparent huge pages").
    if (where === 'addonArena') f.addonArenaHuge += m.huge;
  }
  return f;
}

const mib = (n) => `${n.toFixed(1)} MiB`;
const pctText = (x) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;

const turn = () => new Promise((resolve) => setImmediate(resolve));

// gc, let deferred finalizers run (N-API finalizers of external buffers run
// after the event loop turns), gc again.
async function settle() {
  gc();
  await turn();
  await turn();
  gc();
}

function loadPackage() {
  const mod = require(PKG);
  if (mod.backend !== undefined && mod.backend !== 'native') {
    throw new Error(`the ${mod.backend} backend answered, not the native addon: nothing to soak`);
  }
  return mod;
}

function loadCorpus(file) {
  const c = JSON.parse(fs.readFileSync(file, 'utf8'));
  return {
    bytes: Buffer.from(JSON.stringify(c.messages)),
    messages: c.messages,
    state: c.state,
    config: c.config,
    boundary: c.thinkingBoundaryTimestamp ?? null,
  };
}

const API_NAMES = ['prune', 'Pruner.prune', 'sizeOf', 'pruneMessages', 'PruneSession', 'pi-condense-2.4', 'pi-condense-2.9'];
const DROP_INS = { 'pi-condense-2.4': '2.4.3', 'pi-condense-2.9': '2.9.1' };

// `bursts`: the renders run without the event loop turning, so nothing
// that waits for a finalizer is freed (see growingDropIn).
function corpusApi(name, { bursts = false } = {}) {
  const { prune, Pruner, sizeOf, pruneMessages, PruneSession } = loadPackage();
  const corpus = loadCorpus(process.env.SOAK_CORPUS || path.join(SHARED, 'medium.json'));
  const { bytes, messages, state, config, boundary } = corpus;
  const options = { state, config, thinkingStripBoundaryTimestamp: boundary };
  if (name === 'PruneSession') return { bytes, session: growingSession(PruneSession, messages, options) };
  if (DROP_INS[name]) return { bytes, session: growingDropIn(DROP_INS[name], corpus, bursts) };
  const pruner = new Pruner(config).setState(state);
  const calls = {
    prune: () => prune(bytes, options),
    'Pruner.prune': () => pruner.prune(bytes, { thinkingStripBoundaryTimestamp: boundary }),
    sizeOf: () => sizeOf(bytes),
    pruneMessages: () => pruneMessages(messages, options),
  };
  if (!calls[name]) throw new Error(`unknown API ${name}`);
  return { bytes, call: calls[name] };
}

// A kept path over a growing array, as a host drives one: the conversation
// grows by one message per render (a fresh array each time, holding the
// same message objects). A cycle is one whole conversation (the corpus,
// message by message); even cycles start on a new session or indexer, odd
// cycles keep the previous one and start over from the first message (the
// conversation was replaced), so the kept log is cut back and regrown.
// `cycle(step)` runs one conversation, awaiting `step()` after every render,
// and returns its last render.
function growing(messages, { fresh, render }) {
  let count = 0;
  return {
    rendersPerCycle: messages.length,
    async cycle(step) {
      if (count++ % 2 === 0) fresh();
      let last = null;
      for (let k = 1; k <= messages.length; k++) {
        last = render(messages.slice(0, k), k);
        await step();
      }
      return last;
    },
  };
}

// PruneSession: a flush every FLUSH_EVERY renders (a turn ends). A host that
// is done with a conversation closes its session, which frees the native
// log now rather than when the engine finalizes it.
const FLUSH_EVERY = 10;

function growingSession(PruneSession, messages, options) {
  let session = null;
  return growing(messages, {
    fresh() {
      if (session !== null) session.close();
      session = new PruneSession(options);
    },
    render(prefix, k) {
      const r = session.render(prefix);
      if (k % FLUSH_EVERY === 0) session.flush();
      return r;
    },
  });
}

// A drop-in, with the release's own signature, asked with the pure oracle's
// indexer over the corpus state in that release's shape. A new indexer
// replaces the old one, which is dropped as a host drops it: what the
// drop-in kept for it goes when the engine collects it (a WeakMap) and
// finalizes the native engine, after the event loop turns. In bursts the
// loop does not turn, so the old one is released with `invalidate` first,
// as a batch job would.
function growingDropIn(dialect, corpus, bursts) {
  const { dropIn, oracle, state, args } = dropInOf(PKG, corpus, dialect, corpus.boundary ?? undefined);
  let indexer = null;
  return growing(corpus.messages, {
    fresh() {
      if (bursts && indexer !== null) dropIn.invalidate(indexer);
      indexer = oracle.createIndexer(state);
    },
    render: (prefix) => dropIn.pruneMessages(prefix, indexer, ...args),
  });
}

const fingerprint = (r) => (typeof r === 'number' ? r : `${r.pruned}/${r.beforeChars}/${r.afterChars}/${r.messages && r.messages.length}`);

// ---------------------------------------------------------------------------
// Children

async function soakChild(name) {
  const n = Number(process.env.SOAK_N || 100000);
  const warmup = Number(process.env.SOAK_WARMUP || 5000);
  markRuntimeMappings();
  const api = corpusApi(name);
  if (api.session) return soakSession(name, api, n, warmup);
  const { bytes, call } = api;
  await settle();
  const start = rssMiB();
  const expected = fingerprint(call());
  for (let i = 0; i < warmup; i++) {
    call();
    await turn();
  }
  await settle();
  const afterWarmup = rssMiB();
  const samples = [];
  const engine = [];
  const per = Math.max(1, Math.floor(n / SAMPLES));
  let busy = 0n;
  for (let s = 0; s < SAMPLES; s++) {
    for (let i = 0; i < per; i++) {
      const t0 = process.hrtime.bigint();
      const r = call();
      busy += process.hrtime.bigint() - t0;
      if (i === 0 && fingerprint(r) !== expected) throw new Error(`${name}: a render differs: ${fingerprint(r)} vs ${expected}`);
      await turn();
    }
    await settle();
    samples.push(rssMiB());
    engine.push({ ...engineMiB(), ...mappingMiB() });
  }
  process.stdout.write(
    `${JSON.stringify({ runtime: runtimeName(), api: name, inputBytes: bytes.length, renders: per * SAMPLES, warmup, start, afterWarmup, samples, engine, msPerRender: Number(busy) / 1e6 / (per * SAMPLES) })}\n`,
  );
}

// The session soak samples once per cycle (a whole conversation), after the
// cycle's last render, so that every sample sees the same session size.
// Every cycle's last render must equal the one of the first cycle of the same
// kind (new session or reused one).
async function soakSession(name, { bytes, session }, n, warmup) {
  const per = session.rendersPerCycle;
  const expected = [];
  const check = (c, r) => {
    const fp = fingerprint(r);
    if (expected.length < 2) expected.push(fp);
    else if (fp !== expected[c % 2]) throw new Error(`${name}: cycle ${c} ends with ${fp}, not ${expected[c % 2]}`);
  };
  let c = 0;
  await settle();
  const start = rssMiB();
  for (let w = 0; w < Math.ceil(warmup / per); w++) {
    check(c, await session.cycle(turn));
    c++;
    await turn();
  }
  await settle();
  const afterWarmup = rssMiB();
  const samples = [];
  const engine = [];
  const cycles = Math.ceil(n / per);
  let busy = 0n;
  let t0 = 0n;
  // The event loop turns between renders as it does in a host; the clock
  // counts only the renders (and flushes).
  const step = async () => {
    busy += process.hrtime.bigint() - t0;
    await turn();
    t0 = process.hrtime.bigint();
  };
  for (let s = 0; s < cycles; s++) {
    t0 = process.hrtime.bigint();
    check(c, await session.cycle(step));
    c++;
    await settle();
    samples.push(rssMiB());
    engine.push({ ...engineMiB(), ...mappingMiB() });
  }
  process.stdout.write(
    `${JSON.stringify({ runtime: runtimeName(), api: name, inputBytes: bytes.length, renders: cycles * per, cycles, warmup: Math.ceil(warmup / per) * per, start, afterWarmup, samples, engine, msPerRender: Number(busy) / 1e6 / (cycles * per) })}\n`,
  );
}

async function burstChild(name) {
  const burst = Number(process.env.SOAK_BURST || 500);
  const api = corpusApi(name, { bursts: true });
  // For the session, a burst is whole conversations run without the event
  // loop turning (only microtasks between renders).
  const none = () => undefined;
  const run = api.session ? async (k) => {
    for (let i = 0; i < k; i += api.session.rendersPerCycle) await api.session.cycle(none);
  } : async (k) => {
    for (let i = 0; i < k; i++) api.call();
  };
  const warm = api.session ? () => api.session.cycle(turn) : async () => {
    for (let i = 0; i < 100; i++) {
      api.call();
      await turn();
    }
  };
  await warm();
  await settle();
  const start = rssMiB();
  // Repeated bursts, each followed by a gc (no event-loop turn) and a sample.
  // Single samples move by several MiB with the allocator, so windows are
  // compared: the largest sample of the second half against the largest of
  // the first half.
  const bursts = Number(process.env.SOAK_BURSTS || 8);
  const samples = [];
  for (let i = 0; i < bursts; i++) {
    await run(burst);
    gc();
    samples.push(rssMiB());
  }
  await settle();
  const settled = rssMiB();
  const half = Math.floor(bursts / 2);
  const before = Math.max(...samples.slice(0, half));
  const after = Math.max(...samples.slice(half));
  const renders = api.session ? Math.ceil(burst / api.session.rendersPerCycle) * api.session.rendersPerCycle : burst;
  process.stdout.write(`${JSON.stringify({ runtime: runtimeName(), api: name, burst: renders, bursts, start, samples, before, after, growth: (after - before) / before, settled })}\n`);
}

function peakChild(api, messagesFile, restFile) {
  const { prune, Pruner } = loadPackage();
  const { state, config, boundary } = JSON.parse(fs.readFileSync(restFile, 'utf8'));
  const bytes = fs.readFileSync(messagesFile);
  // A held Pruner converts the state when it is set, before the render.
  const pruner = api === 'Pruner.prune' ? new Pruner(config).setState(state) : null;
  gc();
  const before = rssMiB();
  const maxBefore = process.resourceUsage().maxRSS / 1024;
  const t0 = process.hrtime.bigint();
  const r = pruner ? pruner.prune(bytes, { thinkingStripBoundaryTimestamp: boundary }) : prune(bytes, { state, config, thinkingStripBoundaryTimestamp: boundary });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const peak = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(
    `${JSON.stringify({ runtime: runtimeName(), api, inputBytes: bytes.length, outputBytes: r.messages ? r.messages.length : 0, pruned: r.pruned, rssBefore: before, maxRssBefore: maxBefore, peak, ms })}\n`,
  );
}

// ---------------------------------------------------------------------------
// Parent

function runtimeCommand(runtime) {
  if (runtime === 'node') return [process.execPath, ['--expose-gc']];
  const local = path.join(ROOT, 'node_modules', '.bin', 'bun');
  return [fs.existsSync(local) ? local : 'bun', []];
}

// Node's Buffers, the results of `prune` and `Pruner.prune` among them, come
// from glibc's malloc. glibc maps a block above its mmap threshold on its own
// and unmaps it when it is freed, but after the first such free it raises the
// threshold to that block's size, and from then on serves such blocks from
// its heap, which keeps freed blocks mapped wherever a live one sits above
// them. The RSS at rest then swings by 15-30 % from sample to sample with
// where the last results happened to lie, hiding any real trend (RELIABILITY.md
// has a run of each). The soak's Node children therefore run with the
// threshold fixed at glibc's starting value (128 KiB), so that a freed result
// leaves the RSS at once and a kept one stays in it.
// SOAK_MMAP_THRESHOLD=default runs them with glibc's adaptive threshold.
function childEnv(runtime, args) {
  const threshold = process.env.SOAK_MMAP_THRESHOLD || '131072';
  if (runtime !== 'node' || args[0] !== '--soak' || threshold === 'default') return process.env;
  return { ...process.env, MALLOC_MMAP_THRESHOLD_: threshold };
}

function child(runtime, args) {
  const [cmd, flags] = runtimeCommand(runtime);
  const r = spawnSync(cmd, [...flags, __filename, ...args], {
    env: childEnv(runtime, args),
    encoding: 'utf8',
    maxBuffer: 1 << 24,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (r.status !== 0 || r.error) throw new Error(`${runtime} ${args.join(' ')} failed: ${r.error ? r.error.message : `exit ${r.status}`}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

// Least-squares slope of the samples, in MiB per 10 000 renders.
function slope(samples, renders) {
  const k = samples.length;
  const xs = samples.map((_, i) => ((i + 1) * renders) / k / 10000);
  const mx = xs.reduce((a, b) => a + b, 0) / k;
  const my = samples.reduce((a, b) => a + b, 0) / k;
  let num = 0;
  let den = 0;
  for (let i = 0; i < k; i++) {
    num += (xs[i] - mx) * (samples[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  return num / den;
}

// The largest value of the first and of the last WINDOW samples.
const windowMax = (xs) => [Math.max(...xs.slice(0, WINDOW)), Math.max(...xs.slice(-WINDOW))];

function summarize(out) {
  const first = out.samples.slice(0, WINDOW);
  const last = out.samples.slice(-WINDOW);
  const [firstMax, lastMax] = windowMax(out.samples);
  const firstMin = Math.min(...first);
  const lastMin = Math.min(...last);
  return {
    ...out,
    firstMax,
    lastMax,
    firstMin,
    lastMin,
    growthMax: lastMax / firstMax - 1,
    growthMin: lastMin / firstMin - 1,
    slopePer10k: slope(out.samples, out.renders),
    // The engine's figures over the same windows (largest of each).
    engineWindows: Object.fromEntries(Object.keys(out.engine[0] || {}).map((k) => [k, windowMax(out.engine.map((e) => e[k]))])),
    low: Math.min(...out.samples),
    high: Math.max(...out.samples),
  };
}

function parent() {
  const runtimes = (process.env.SOAK_RUNTIMES || 'node,bun').split(',').filter(Boolean);
  const apis = (process.env.SOAK_APIS || API_NAMES.join(',')).split(',').filter(Boolean);
  const report = { soak: [], burst: [], peak: [] };
  let failed = false;
  const attempt = (fn) => {
    try {
      return fn();
    } catch (e) {
      console.error(e.message);
      failed = true;
      return null;
    }
  };

  for (const runtime of process.env.SOAK_SKIP_SOAK ? [] : runtimes) {
    const rows = [];
    for (const api of apis) {
      const out = attempt(() => child(runtime, ['--soak', api]));
      if (out) rows.push(summarize(out));
    }
    if (rows.length === 0) continue;
    report.soak.push(...rows);
    const r0 = rows[0];
    console.log(`\n${r0.runtime}: ${r0.renders} renders per API (after ${r0.warmup} warm-up renders) of a ${(r0.inputBytes / 1e6).toFixed(2)} MB array, one process per API`);
    console.log('  RSS at rest, sampled every 1 % of the renders (PruneSession: after each whole conversation): after warm-up = largest of the first 10 samples, at end = largest of the last 10');
    console.log('  api            ms/render   after warm-up      at end   growth   (smallest: first -> last, growth)   range of all samples    slope');
    for (const r of rows) {
      const bad = r.growthMax > LIMIT;
      failed ||= bad;
      console.log(
        `  ${r.api.padEnd(14)} ${r.msPerRender.toFixed(2).padStart(9)}   ${mib(r.firstMax).padStart(13)}   ${mib(r.lastMax).padStart(9)}   ${pctText(r.growthMax).padStart(7)}   (${mib(r.firstMin)} -> ${mib(r.lastMin)}, ${pctText(r.growthMin)})   ${mib(r.low)} .. ${mib(r.high)}   ${r.slopePer10k >= 0 ? '+' : ''}${r.slopePer10k.toFixed(2)} MiB/10k${bad ? '  > 5 %: FAIL' : ''}`,
      );
      console.log(`  ${''.padEnd(14)} engine and mappings, same windows: ${Object.entries(r.engineWindows).map(([k, [a, b]]) => `${k} ${a.toFixed(1)} -> ${b.toFixed(1)}`).join(', ')} MiB`);
    }
  }

  if (!process.env.SOAK_SKIP_BURST) {
    console.log(
      `\n${process.env.SOAK_BURSTS || 8} bursts of ${process.env.SOAK_BURST || 500} renders (PruneSession: whole conversations) without the event loop turning, each followed by a gc and a sample (a fresh process per runtime and API); largest sample of the first half -> of the second half:`,
    );
    for (const runtime of runtimes) {
      for (const api of apis) {
        const b = attempt(() => child(runtime, ['--burst', api]));
        if (!b) continue;
        report.burst.push(b);
        const bad = b.growth > LIMIT;
        failed ||= bad;
        console.log(
          `  ${b.runtime.padEnd(14)} ${api.padEnd(14)} RSS ${mib(b.before).padStart(10)} -> ${mib(b.after).padStart(10)} (${pctText(b.growth)}${bad ? ', > 5 %: FAIL' : ''}); all samples ${mib(Math.min(...b.samples))} .. ${mib(Math.max(...b.samples))}; after the loop turns and gc: ${mib(b.settled)}`,
        );
      }
    }
  }

  if (!process.env.SOAK_SKIP_PEAK) {
    const hugeFile = process.env.SOAK_HUGE || path.join(SHARED, 'huge.json');
    if (!fs.existsSync(hugeFile)) {
      console.log(`\n(no ${hugeFile}: peak-RSS measurement skipped)`);
    } else {
      const c = JSON.parse(fs.readFileSync(hugeFile, 'utf8'));
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-soak-'));
      const messagesFile = path.join(dir, 'messages.json');
      const restFile = path.join(dir, 'rest.json');
      fs.writeFileSync(messagesFile, JSON.stringify(c.messages));
      fs.writeFileSync(restFile, JSON.stringify({ state: c.state, config: c.config, boundary: c.thinkingBoundaryTimestamp ?? null }));
      try {
        console.log(`\nPeak RSS while pruning ${path.basename(hugeFile)} once (a fresh process per runtime and API; the bytes, the state and for Pruner.prune the converted state are loaded first)`);
        console.log('  runtime        api              input   RSS before    peak RSS   peak / input   (peak - before) / input      output     ms');
        for (const runtime of runtimes) {
          for (const api of ['prune', 'Pruner.prune']) {
            const p = attempt(() => child(runtime, ['--peak', api, messagesFile, restFile]));
            if (!p) continue;
            report.peak.push(p);
            const input = p.inputBytes / 2 ** 20;
            console.log(
              `  ${p.runtime.padEnd(14)} ${api.padEnd(13)} ${mib(input).padStart(10)} ${mib(p.rssBefore).padStart(12)} ${mib(p.peak).padStart(11)}   ${(p.peak / input).toFixed(2).padStart(10)} x   ${((p.peak - p.rssBefore) / input).toFixed(2).padStart(21)} x   ${mib(p.outputBytes / 2 ** 20).padStart(9)} ${p.ms.toFixed(0).padStart(6)}`,
            );
            if (p.maxRssBefore > p.rssBefore * 1.05) console.log(`    (the high-water mark before the call was already ${mib(p.maxRssBefore)}: loading)`);
          }
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
  }

  if (process.env.SOAK_JSON) fs.writeFileSync(process.env.SOAK_JSON, JSON.stringify(report, null, 1));
  if (failed) {
    console.error('\nsoak: FAILED');
    process.exit(1);
  }
  console.log('\nsoak: ok (RSS within 5 % for every API and runtime)');
}

const fail = (e) => {
  console.error(e);
  process.exit(1);
};
if (process.argv[2] === '--soak') soakChild(process.argv[3]).catch(fail);
else if (process.argv[2] === '--burst') burstChild(process.argv[3]).catch(fail);
else if (process.argv[2] === '--peak') peakChild(process.argv[3], process.argv[4], process.argv[5]);
else parent();
