#!/usr/bin/env node
'use strict';
// The tune's speed: `tune()` of one corpus session converted to a pi
// session file (scripts/corpus-to-session.js), every configuration of the
// grid over every model call, on rayon's pool; reported as configurations
// per second and model-call renders per second, with the replay of the same
// file under its five policies beside it for scale. Issue 23's target:
// 100+ configurations over the huge session (about 5,300 calls) in under
// 60 s on a 2-core machine.
//
//   node benches/tune.js [large|huge|session.jsonl]...   default: large huge

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..');

function sessionFile(arg) {
  if (arg.endsWith('.jsonl')) return fs.existsSync(arg) ? path.resolve(arg) : null;
  const file = path.join(ROOT, '.tmp', 'sessions', `${arg}.jsonl`);
  if (!fs.existsSync(file)) {
    if (!fs.existsSync(path.join(ROOT, '..', 'shared', 'corpus', `${arg}.json`))) return null;
    execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'corpus-to-session.js'), path.dirname(file), arg], { stdio: 'ignore' });
  }
  return file;
}

function main() {
  const { tune, replay } = require('..');
  const names = process.argv.slice(2);
  const runtime = process.versions.bun ? `bun ${process.versions.bun}` : `node ${process.versions.node}`;
  console.log(`tune, ${runtime}, ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}`);
  for (const name of names.length ? names : ['large', 'huge']) {
    const file = sessionFile(name);
    if (file === null) {
      console.log(`  ${name}: ../shared/corpus absent, skipped`);
      continue;
    }
    if (global.gc) global.gc();
    let t0 = performance.now();
    const r = replay(file);
    const replayS = (performance.now() - t0) / 1000;
    if (global.gc) global.gc();
    t0 = performance.now();
    const t = tune(file);
    const s = (performance.now() - t0) / 1000;
    const n = t.ranked.length;
    console.log(
      `  ${path.basename(file)}: ${t.modelCalls} model calls; tune of ${n} configurations ${s.toFixed(1)} s = ` +
        `${(n / s).toFixed(2)} configurations/s, ${Math.round((n * t.modelCalls) / s)} renders/s ` +
        `(replay, five policies: ${replayS.toFixed(1)} s, ${Math.round((5 * r.modelCalls) / replayS)} renders/s)`,
    );
  }
}

main();
