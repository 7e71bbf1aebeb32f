'use strict';

// Soak and memory checks (docs/RELIABILITY.md). `npm run soak` runs, under
// Node and under Bun, one child process each that renders the medium corpus
// SOAK_N times (default 100 000) through each API in turn (`prune`,
// `Pruner.prune`, `sizeOf`), as a host does (the event loop turns between
// renders), measuring RSS after a warm-up and at the end; a growth above 5 %
// fails the run. Each API then gets a burst of SOAK_BURST renders back to
// back (no event-loop turn) in a fresh process, and the RSS after a gc must
// also stay within 5 %. Then a child per runtime prunes the huge corpus once and reports its
// peak RSS as a multiple of the input size.
//
//   SOAK_N=100000           renders per API (after the warm-up)
//   SOAK_WARMUP=2000        warm-up renders per API
//   SOAK_BURST=500          renders of the back-to-back burst
//   SOAK_RUNTIMES=node,bun  which runtimes to run
//   SOAK_CORPUS, SOAK_HUGE  corpus files ({messages, state, config, thinkingBoundaryTimestamp})
//   SOAK_SKIP_PEAK=1        skip the huge-corpus measurement
//   SOAK_PACKAGE=dir        soak a copy of the package instead of this checkout
//
// Exit status 1 when a runtime's RSS grew by more than 5 % or a child failed.

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const SHARED = path.join(ROOT, '..', 'shared', 'corpus');
// The package under test: this checkout, or a copy (SOAK_PACKAGE) so that a
// rebuild in the checkout cannot swap the binary under a running soak.
const PKG = process.env.SOAK_PACKAGE ? path.resolve(process.env.SOAK_PACKAGE) : ROOT;

function loadPackage() {
  const mod = require(PKG);
  if (mod.backend !== undefined && mod.backend !== 'native') {
    throw new Error(`the ${mod.backend} backend answered, not the native addon: nothing to soak`);
  }
  return mod;
}
const LIMIT = 0.05;

const isBun = typeof globalThis.Bun !== 'undefined';

function gc() {
  if (isBun) globalThis.Bun.gc(true);
  else if (typeof global.gc === 'function') {
    global.gc();
    global.gc();
  }
}

const rssMiB = () => process.memoryUsage().rss / 2 ** 20;
const mib = (n) => `${n.toFixed(1)} MiB`;

function loadCorpus(file) {
  const c = JSON.parse(fs.readFileSync(file, 'utf8'));
  return {
    bytes: Buffer.from(JSON.stringify(c.messages)),
    state: c.state,
    config: c.config,
    boundary: c.thinkingBoundaryTimestamp ?? null,
  };
}

// ---------------------------------------------------------------------------
// Child: the soak itself

const turn = () => new Promise((resolve) => setImmediate(resolve));

// gc, let deferred finalizers run (N-API finalizers of external buffers run
// after the event loop turns), gc again.
async function settle() {
  gc();
  await turn();
  await turn();
  gc();
}

function corpusApis() {
  const { prune, Pruner, sizeOf } = loadPackage();
  const { bytes, state, config, boundary } = loadCorpus(process.env.SOAK_CORPUS || path.join(SHARED, 'medium.json'));
  const options = { state, config, thinkingStripBoundaryTimestamp: boundary };
  const pruner = new Pruner(config).setState(state);
  return {
    bytes,
    apis: [
      ['prune', () => prune(bytes, options)],
      ['Pruner.prune', () => pruner.prune(bytes, { thinkingStripBoundaryTimestamp: boundary })],
      ['sizeOf', () => sizeOf(bytes)],
    ],
  };
}

const runtimeName = () => (isBun ? `bun ${globalThis.Bun.version}` : `node ${process.version}`);

async function soakChild() {
  const n = Number(process.env.SOAK_N || 100000);
  const warmup = Number(process.env.SOAK_WARMUP || 2000);
  const { bytes, apis } = corpusApis();
  const fingerprint = (r) => (typeof r === 'number' ? r : `${r.pruned}/${r.beforeChars}/${r.afterChars}/${r.messages && r.messages.length}`);
  await settle();
  const start = rssMiB();
  const rows = [];
  for (const [name, call] of apis) {
    const expected = fingerprint(call());
    // As a host renders: one call per model request, the event loop turning
    // in between.
    for (let i = 0; i < warmup; i++) {
      call();
      await turn();
    }
    await settle();
    const afterWarmup = rssMiB();
    let peak = afterWarmup;
    const every = Math.max(1, Math.floor(n / 50));
    const t0 = process.hrtime.bigint();
    for (let i = 1; i <= n; i++) {
      const r = call();
      if (i % every === 0) {
        if (fingerprint(r) !== expected) throw new Error(`${name}: render ${i} differs: ${fingerprint(r)} vs ${expected}`);
        peak = Math.max(peak, rssMiB());
      }
      await turn();
    }
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    await settle();
    const end = rssMiB();
    rows.push({
      api: name,
      renders: n,
      afterWarmup,
      end,
      peak,
      growth: (end - afterWarmup) / afterWarmup,
      msPerRender: (seconds * 1000) / n,
    });
  }
  await settle();
  const finish = rssMiB();
  process.stdout.write(`${JSON.stringify({ runtime: runtimeName(), inputBytes: bytes.length, start, finish, rows })}\n`);
}

// A burst, in a fresh process per API: renders back to back without the
// event loop turning (a batch job, a benchmark), then a gc.
async function burstChild() {
  const which = process.argv[3];
  const burst = Number(process.env.SOAK_BURST || 500);
  const { apis } = corpusApis();
  const call = apis.find(([name]) => name === which)[1];
  for (let i = 0; i < 50; i++) {
    call();
    await turn();
  }
  await settle();
  const before = rssMiB();
  for (let i = 0; i < burst; i++) call();
  gc();
  const after = rssMiB();
  await settle();
  const settled = rssMiB();
  process.stdout.write(`${JSON.stringify({ runtime: runtimeName(), api: which, burst, before, after, growth: (after - before) / before, settled })}\n`);
}

// ---------------------------------------------------------------------------
// Child: peak RSS while pruning the huge corpus once

function peakChild() {
  const { prune } = loadPackage();
  const [messagesFile, restFile] = process.argv.slice(3);
  const { state, config, boundary } = JSON.parse(fs.readFileSync(restFile, 'utf8'));
  const bytes = fs.readFileSync(messagesFile);
  gc();
  const before = rssMiB();
  const maxBefore = process.resourceUsage().maxRSS / 1024;
  const t0 = process.hrtime.bigint();
  const r = prune(bytes, { state, config, thinkingStripBoundaryTimestamp: boundary });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const peak = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(
    `${JSON.stringify({
      runtime: isBun ? `bun ${globalThis.Bun.version}` : `node ${process.version}`,
      inputBytes: bytes.length,
      outputBytes: r.messages ? r.messages.length : 0,
      pruned: r.pruned,
      rssBefore: before,
      maxRssBefore: maxBefore,
      peak,
      ms,
    })}\n`,
  );
}

// ---------------------------------------------------------------------------
// Parent

function runtimeCommand(runtime) {
  if (runtime === 'node') return [process.execPath, ['--expose-gc']];
  const local = path.join(ROOT, 'node_modules', '.bin', 'bun');
  return [fs.existsSync(local) ? local : 'bun', []];
}

function child(runtime, args, env = {}) {
  const [cmd, flags] = runtimeCommand(runtime);
  const r = spawnSync(cmd, [...flags, __filename, ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 1 << 24,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (r.status !== 0 || r.error) {
    throw new Error(`${runtime} ${args[0]} failed: ${r.error ? r.error.message : `exit ${r.status}`}`);
  }
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

function parent() {
  const runtimes = (process.env.SOAK_RUNTIMES || 'node,bun').split(',').filter(Boolean);
  let failed = false;
  for (const runtime of runtimes) {
    let out;
    try {
      out = child(runtime, ['--soak']);
    } catch (e) {
      console.error(e.message);
      failed = true;
      continue;
    }
    console.log(`\n${out.runtime}: ${out.rows[0].renders} renders per API of a ${(out.inputBytes / 1e6).toFixed(2)} MB array (RSS at start ${mib(out.start)}, at the end ${mib(out.finish)})`);
    console.log('  api            ms/render   RSS after warm-up   RSS at end   peak sampled   growth');
    for (const r of out.rows) {
      const bad = r.growth > LIMIT;
      failed ||= bad;
      console.log(
        `  ${r.api.padEnd(14)} ${r.msPerRender.toFixed(2).padStart(9)}   ${mib(r.afterWarmup).padStart(17)}   ${mib(r.end).padStart(10)}   ${mib(r.peak).padStart(12)}   ${(r.growth * 100).toFixed(2).padStart(6)} %${bad ? '  > 5 %: FAIL' : ''}`,
      );
    }
    console.log(`  a burst of ${process.env.SOAK_BURST || 500} renders without the event loop turning, then gc (a fresh process per API):`);
    for (const [api] of out.rows.map((r) => [r.api])) {
      let b;
      try {
        b = child(runtime, ['--burst', api]);
      } catch (e) {
        console.error(e.message);
        failed = true;
        continue;
      }
      const bad = b.growth > LIMIT;
      failed ||= bad;
      console.log(
        `  ${api.padEnd(14)} RSS ${mib(b.before)} -> ${mib(b.after)} (${(b.growth * 100).toFixed(2)} %${bad ? ', > 5 %: FAIL' : ''}); after the loop turns and gc: ${mib(b.settled)}`,
      );
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
        console.log(`\nPeak RSS while pruning ${path.basename(hugeFile)} once (one fresh process per runtime)`);
        console.log('  runtime        input      RSS before   peak RSS   peak / input   (peak - before) / input   output     ms');
        for (const runtime of runtimes) {
          let p;
          try {
            p = child(runtime, ['--peak', messagesFile, restFile]);
          } catch (e) {
            console.error(e.message);
            failed = true;
            continue;
          }
          const input = p.inputBytes / 2 ** 20;
          console.log(
            `  ${p.runtime.padEnd(13)} ${mib(input).padStart(10)} ${mib(p.rssBefore).padStart(12)} ${mib(p.peak).padStart(10)}   ${(p.peak / input).toFixed(2).padStart(10)} x   ${((p.peak - p.rssBefore) / input).toFixed(2).padStart(21)} x   ${mib(p.outputBytes / 2 ** 20).padStart(9)} ${p.ms.toFixed(0).padStart(5)}`,
          );
          if (p.maxRssBefore > p.rssBefore * 1.05) {
            console.log(`    (the high-water mark before the call was already ${mib(p.maxRssBefore)}: loading)`);
          }
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
  }
  if (failed) {
    console.error('\nsoak: FAILED');
    process.exit(1);
  }
  console.log('\nsoak: ok (RSS growth within 5 % for every API and runtime)');
}

const fail = (e) => {
  console.error(e);
  process.exit(1);
};
if (process.argv[2] === '--soak') soakChild().catch(fail);
else if (process.argv[2] === '--burst') burstChild().catch(fail);
else if (process.argv[2] === '--peak') peakChild();
else parent();
