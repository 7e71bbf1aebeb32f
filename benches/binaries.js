#!/usr/bin/env node
'use strict';

// Two builds of the addon side by side in one process: loads both binaries
// (each keeps its own statics and allocator) and times the same calls on
// each, alternating A and B within every round so that the machine's noise
// falls on both alike. Reports the medians and the ratio B / A (below 1: B
// is faster). For build options (allocator settings, features, profiles)
// that `npm run bench`, which runs one binary, cannot compare.
//
//   node benches/binaries.js A.node B.node [small|medium|large|huge ...]
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

function loadBinding(file) {
  const abs = path.resolve(file);
  const m = { exports: {} };
  process.dlopen(m, abs);
  for (const name of ['pruneJson', 'NativePruner', 'sizeOf']) {
    if (!(name in m.exports)) throw new Error(`${file}: no ${name} export`);
  }
  return m.exports;
}

function loadInput(name) {
  const file = name === 'sample' ? path.join(ROOT, 'sample', 'session.json') : path.join(CORPUS, `${name}.json`);
  const s = JSON.parse(fs.readFileSync(file, 'utf8'));
  return {
    name,
    bytes: Buffer.from(JSON.stringify(s.messages)),
    stateJson: JSON.stringify(s.state),
    configJson: JSON.stringify(s.config),
    boundary: s.thinkingBoundaryTimestamp ?? null,
  };
}

// The calls timed on each binary: fn(binding, input, ctx) with ctx made once
// per binary and input.
const CALLS = {
  sizeOf: { setup: () => null, run: (b, i) => b.sizeOf(i.bytes) },
  'Pruner.prune': {
    setup: (b, i) => {
      const p = new b.NativePruner();
      p.setConfig(i.configJson);
      p.setState(i.stateJson);
      return p;
    },
    run: (b, i, p) => p.prune(i.bytes, i.boundary),
  },
  'prune (stateless)': { setup: () => null, run: (b, i) => b.pruneJson(i.bytes, i.stateJson, i.configJson, i.boundary) },
};

const fingerprint = (r) => (typeof r === 'number' ? `${r}` : `${r.pruned}/${r.beforeChars}/${r.afterChars}`);

function time(fn) {
  forceGc();
  const t0 = performance.now();
  const r = fn();
  return [performance.now() - t0, r];
}

function main() {
  const args = process.argv.slice(2);
  if (args.length < 2) {
    console.error('usage: benches/binaries.js A.node B.node [small|medium|large|huge|sample ...]');
    process.exit(2);
  }
  const [fileA, fileB, ...names] = args;
  const a = loadBinding(fileA);
  const b = loadBinding(fileB);
  let inputs = names.length ? names : ['medium', 'large'];
  if (!fs.existsSync(CORPUS)) inputs = ['sample'];
  const runtime = IS_BUN ? `Bun ${globalThis.Bun.version}` : `Node ${process.versions.node}`;
  console.log(`${runtime}; A = ${fileA}, B = ${fileB}; median ms of each call, A and B alternated within each round`);
  console.log('| input | call | runs | A ms | B ms | B / A |');
  console.log('|---|---|--:|--:|--:|--:|');
  for (const name of inputs) {
    const input = loadInput(name);
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
          const [ms, r] = time(() => run(bin, input, ctx));
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
