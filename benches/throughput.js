'use strict';

// Throughput of the native Buffer path (`Pruner.prune`) on the shared corpus,
// median of repeated runs, next to JSON.stringify of the same array.
// Usage: node benches/throughput.js [small|medium|large|huge ...]

const fs = require('node:fs');
const path = require('node:path');
const { Pruner, sizeOf } = require('..');

const corpus = path.join(__dirname, '..', '..', 'shared', 'corpus');
const names = process.argv.slice(2).length ? process.argv.slice(2) : ['small', 'medium', 'large', 'huge'];

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function bench(fn, minRuns = 7, minMs = 1500) {
  const times = [];
  const start = Date.now();
  while (times.length < minRuns || Date.now() - start < minMs) {
    const t0 = process.hrtime.bigint();
    fn();
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (times.length >= 200) break;
  }
  return median(times);
}

if (!fs.existsSync(corpus)) {
  console.log(`skipped: ${corpus} is absent`);
  process.exit(0);
}
console.log('| corpus | MB | prune ms | prune MB/s | sizeOf ms | JSON.stringify ms |');
console.log('|---|---|---|---|---|---|');
for (const name of names) {
  const file = path.join(corpus, `${name}.json`);
  const session = JSON.parse(fs.readFileSync(file, 'utf8'));
  const bytes = Buffer.from(JSON.stringify(session.messages));
  const pruner = new Pruner(session.config).setState(session.state);
  const opts = { thinkingStripBoundaryTimestamp: session.thinkingBoundaryTimestamp };
  const ms = bench(() => pruner.prune(bytes, opts));
  const sizeMs = bench(() => sizeOf(bytes));
  const strMs = bench(() => JSON.stringify(session.messages));
  const mb = bytes.length / 1e6;
  console.log(`| ${name} | ${mb.toFixed(2)} | ${ms.toFixed(2)} | ${(mb / (ms / 1000)).toFixed(0)} | ${sizeMs.toFixed(2)} | ${strMs.toFixed(2)} |`);
}
