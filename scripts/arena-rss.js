'use strict';

// Which allocator holds the RSS at rest (Linux only; docs/RELIABILITY.md,
// "Soak and memory"). Renders the medium corpus as the soak does, one call
// per event-loop turn, and every 1,000 renders lets the runtime settle and
// splits the RSS by mapping, from /proc/self/smaps:
//   addon  the large reservations (512 MiB or more) mapped after the addon
//          loaded: the addon's mimalloc arena
//   host   the large reservations mapped before: the runtime's own (Bun's
//          mimalloc arena, JSC's heap)
//   rest   everything else: binaries, stacks, the engine's heap, malloc
//
//   node --expose-gc scripts/arena-rss.js      or   bun scripts/arena-rss.js
//   ARENA_API=prune|Pruner.prune|sizeOf (prune)  ARENA_N=100000  ARENA_WARMUP=5000
//   ARENA_CORPUS=file (../shared/corpus/medium.json)  ARENA_PACKAGE=dir (.)

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const isBun = typeof globalThis.Bun !== 'undefined';
const LARGE = 2 ** 29;

function mappings() {
  const rss = new Map();
  let key = null;
  for (const line of fs.readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) /.exec(line);
    if (m) {
      key = m[0];
      rss.set(key, { size: parseInt(m[2], 16) - parseInt(m[1], 16), rss: 0 });
      continue;
    }
    const r = /^Rss:\s+(\d+) kB/.exec(line);
    if (r && key) rss.get(key).rss = Number(r[1]) / 1024;
  }
  return rss;
}

function gc() {
  if (isBun) globalThis.Bun.gc(true);
  else if (typeof global.gc === 'function') global.gc();
  else throw new Error('run node with --expose-gc');
}
const turn = () => new Promise((resolve) => setImmediate(resolve));

async function main() {
  if (!fs.existsSync('/proc/self/smaps')) throw new Error('needs /proc/self/smaps (Linux)');
  const hostLarge = new Set([...mappings()].filter(([, m]) => m.size >= LARGE).map(([k]) => k));
  const mod = require(path.resolve(process.env.ARENA_PACKAGE || ROOT));
  if (mod.backend !== undefined && mod.backend !== 'native') throw new Error(`the ${mod.backend} backend answered, not the addon`);
  const corpus = JSON.parse(fs.readFileSync(process.env.ARENA_CORPUS || path.join(ROOT, '..', 'shared', 'corpus', 'medium.json'), 'utf8'));
  const bytes = Buffer.from(JSON.stringify(corpus.messages));
  const options = { state: corpus.state, config: corpus.config, thinkingStripBoundaryTimestamp: corpus.thinkingBoundaryTimestamp ?? null };
  const api = process.env.ARENA_API || 'prune';
  const pruner = new mod.Pruner(options);
  const calls = { prune: () => mod.prune(bytes, options), 'Pruner.prune': () => pruner.prune(bytes), sizeOf: () => mod.sizeOf(bytes) };
  const call = calls[api];
  if (!call) throw new Error(`ARENA_API: one of ${Object.keys(calls).join(', ')}`);
  const n = Number(process.env.ARENA_N || 100000);
  const settle = async () => {
    gc();
    await turn();
    await turn();
    gc();
  };
  const split = () => {
    const out = { addon: 0, host: 0, rest: 0 };
    for (const [k, m] of mappings()) out[m.size < LARGE ? 'rest' : hostLarge.has(k) ? 'host' : 'addon'] += m.rss;
    return out;
  };
  const warmup = Number(process.env.ARENA_WARMUP || 5000);
  for (let i = 0; i < warmup; i++) {
    call();
    await turn();
  }
  await settle();
  console.log(`${isBun ? `bun ${globalThis.Bun.version}` : `node ${process.version}`} ${api}: RSS at rest by mapping, MiB, every 1,000 renders after ${warmup} warm-up renders`);
  console.log('renders    total    addon     host     rest');
  const f = (x) => x.toFixed(1).padStart(8);
  for (let done = 0; done < n; ) {
    for (let i = 0; i < 1000; i++, done++) {
      call();
      await turn();
    }
    await settle();
    const s = split();
    console.log(`${String(done).padStart(7)} ${f(s.addon + s.host + s.rest)} ${f(s.addon)} ${f(s.host)} ${f(s.rest)}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
