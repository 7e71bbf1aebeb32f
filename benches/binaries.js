#!/usr/bin/env node
'use strict';

// Two builds of the addon side by side in one process: loads both binaries
// (each keeps its own statics and allocator) and times the same calls on
// each, alternating A and B within every round so that the machine's noise
// falls on both alike. Reports the medians and the ratio B / A (below 1: B
// is faster). For build options (allocator settings, features, profiles)
// that `npm run bench`, which runs one binary, cannot compare. Each call
// gets a fresh copy of the input Buffer (made untimed) and a GC before it.
//
//   node --expose-gc benches/binaries.js A.node B.node [--dialect 2.9.1] [small|medium|large|huge ...]
//
// Inputs: ../shared/corpus/<name>.json (default: medium large), else
// sample/session.json. Works under Bun too (`bun benches/binaries.js ...`).

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const CORPUS = path.join(ROOT, '..', 'shared', 'corpus');
const RUNS = { small: 41, medium: 31, large: 15, huge: 7, sample: 41 };
const WARMUP = 3;

const { IS_BUN, forceGc, median } = require('./timing.js');
const { stateOf, configOf } = require('./corpus.js');

function loadBinding(file) {
  const abs = path.resolve(file);
  const m = { exports: {} };
  process.dlopen(m, abs);
  for (const name of ['pruneBytes', 'NativePruner', 'sizeOf']) {
    if (!(name in m.exports)) throw new Error(`${file}: no ${name} export`);
  }
  return m.exports;
}

function loadInput(name, dialect) {
  const file = name === 'sample' ? path.join(ROOT, 'sample', 'session.json') : path.join(CORPUS, `${name}.json`);
  const s = JSON.parse(fs.readFileSync(file, 'utf8'));
  const corpus = { messages: s.messages, state: s.state, config: s.config };
  return {
    name,
    dialect,
    bytes: Buffer.from(JSON.stringify(s.messages)),
    stateJson: JSON.stringify(stateOf(corpus, dialect)),
    configJson: JSON.stringify(configOf(corpus, dialect)),
    boundary: dialect === '2.4.3' ? (s.thinkingBoundaryTimestamp ?? null) : null,
  };
}

// The calls timed on each binary: run(binding, bytes, input, ctx) with ctx
// made once per binary and input.
const CALLS = {
  sizeOf: { setup: () => null, run: (b, bytes) => b.sizeOf(bytes) },
  'Pruner.prune': {
    setup: (b, i) => {
      const p = new b.NativePruner(i.dialect);
      p.setConfig(i.configJson);
      p.setState(i.stateJson);
      return p;
    },
    run: (b, bytes, i, p) => p.prune(bytes, i.boundary),
  },
  'prune (stateless)': { setup: () => null, run: (b, bytes, i) => b.pruneBytes(bytes, i.stateJson, i.configJson, i.boundary, i.dialect) },
};

const fingerprint = (r) => (typeof r === 'number' ? `${r}` : `${r.pruned}/${r.beforeChars}/${r.afterChars}`);

function time(fn) {
  const t0 = performance.now();
  const r = fn();
  return [performance.now() - t0, r];
}

function main() {
  const args = process.argv.slice(2);
  if (args.length < 2) {
    console.error('usage: benches/binaries.js A.node B.node [--dialect 2.4.3|2.9.1] [small|medium|large|huge|sample ...]');
    process.exit(2);
  }
  const [fileA, fileB, ...rest] = args;
  let dialect = '2.4.3';
  const names = [];
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === '--dialect') dialect = rest[++i];
    else names.push(rest[i]);
  }
  if (dialect !== '2.4.3' && dialect !== '2.9.1') {
    console.error(`unknown dialect ${dialect} (2.4.3, 2.9.1)`);
    process.exit(2);
  }
  const a = loadBinding(fileA);
  const b = loadBinding(fileB);
  let inputs = names.length ? names : ['medium', 'large'];
  if (!fs.existsSync(CORPUS)) inputs = ['sample'];
  const runtime = IS_BUN ? `Bun ${globalThis.Bun.version}` : `Node ${process.versions.node}`;
  console.log(`${runtime}; dialect ${dialect}; A = ${fileA}, B = ${fileB}; median ms of each call on a fresh Buffer, A and B alternated within each round`);
  console.log('| input | call | runs | A ms | B ms | B / A |');
  console.log('|---|---|--:|--:|--:|--:|');
  for (const name of inputs) {
    const input = loadInput(name, dialect);
    const runs = RUNS[name] ?? 15;
    for (const [call, { setup, run }] of Object.entries(CALLS)) {
      const ctxA = setup(a, input);
      const ctxB = setup(b, input);
      const ta = [];
      const tb = [];
      for (let k = 0; k < WARMUP + runs; k++) {
        // Alternate which binary goes first, so neither always follows the other.
        const order = k % 2 ? [[b, ctxB, tb], [a, ctxA, ta]] : [[a, ctxA, ta], [b, ctxB, tb]];
        const seen = [];
        for (const [bin, ctx, out] of order) {
          const bytes = Buffer.from(input.bytes);
          forceGc();
          const [ms, r] = time(() => run(bin, bytes, input, ctx));
          if (k >= WARMUP) out.push(ms);
          seen.push(fingerprint(r));
        }
        if (seen[0] !== seen[1]) throw new Error(`${name} ${call}: the binaries disagree (${seen.join(' vs ')})`);
      }
      const ma = median(ta);
      const mb = median(tb);
      console.log(`| ${name} | ${call} | ${runs} | ${ma.toFixed(2)} | ${mb.toFixed(2)} | ${(mb / ma).toFixed(3)} |`);
    }
  }
}

main();
