#!/usr/bin/env node
'use strict';
// The replay against pi-condense's own render path, side by side in one
// process per runtime (Node, then Bun): `replay()` of every model call of
// the huge corpus session (converted by scripts/corpus-to-session.js) under
// the `config` policy, against the reference `pruneMessages` of
// pi-condense 2.4.3 (../shared/reference) called once per render with the
// same context, the reference indexer rebuilt from the branch up to the
// call's leaf, and the frontier's boundary. The reference takes seconds per
// hundred renders on this session, so every k-th render is timed and the
// total scaled by N / samples (its output length is checked against the
// replay's for each sample). Also: all five policies priced with the
// provider cache model (the default) and with the prefix rule, and the peak
// RSS of a replay in a fresh child process (VmHWM, with the module-only
// baseline).
//
//   node benches/replay.js [session.jsonl] [runs] [samples]   Node, then Bun
//   node benches/replay.js --single ...                       this runtime only
//
// Medians of `runs` replays (default 3) and of the reference's per-render
// times; the spread (min-max) says how noisy the shared machine was.

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync, execFileSync } = require('node:child_process');

const { peakRssMiB } = require('./peak-rss.js');

const ROOT = path.join(__dirname, '..');
const REFERENCE = path.join(ROOT, '..', 'shared', 'reference', 'pi-condense-2.4.3');
const runtime = process.versions.bun ? `bun ${process.versions.bun}` : `node ${process.versions.node}`;

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const range = (xs, digits = 0) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0].toFixed(digits)}-${s[s.length - 1].toFixed(digits)}`;
};

function sessionFile(arg) {
  const file = path.resolve(arg || path.join(ROOT, '.tmp', 'sessions', 'huge.jsonl'));
  if (!fs.existsSync(file) && !arg) {
    const corpus = path.join(ROOT, '..', 'shared', 'corpus', 'huge.json');
    if (!fs.existsSync(corpus)) return null;
    execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'corpus-to-session.js'), path.dirname(file), 'huge'], { stdio: 'ignore' });
  }
  return fs.existsSync(file) ? file : null;
}

/** The reference's inputs at each model call of a linear session. */
async function referenceInputs(file, result) {
  const { ToolCallIndexer } = await import(path.join(REFERENCE, 'indexer.mjs'));
  const { pruneMessages } = await import(path.join(REFERENCE, 'pruner.mjs'));
  const { loadSession } = require('..');
  const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const entries = lines.slice(1).map((l) => JSON.parse(l));
  const position = new Map(entries.map((e, i) => [e.id, i]));
  const linear = entries.every((e, i) => e.parentId === (i === 0 ? null : entries[i - 1].id));
  if (!linear || entries.some((e) => e.type === 'compaction' || e.type === 'context_edit')) {
    throw new Error('the reference side needs a linear session without compaction (a corpus conversion)');
  }
  const messages = loadSession(file).messages;
  const config = result.policies.find((p) => p.policy === 'config');
  return {
    pruneMessages,
    config: config.config,
    at(k) {
      const r = config.renders[k];
      const leaf = r.leafId === null ? -1 : position.get(r.leafId);
      const branch = entries.slice(0, leaf + 1);
      const indexer = new ToolCallIndexer();
      indexer.reconstructFromSession({ sessionManager: { getBranch: () => branch } });
      let frontier = null;
      for (const e of branch) {
        if (e.type === 'custom' && e.customType === 'context-prune-frontier' && e.data && e.data.lastAttemptedToolCallId) frontier = e.data;
      }
      const context = messages.slice(0, r.messagesBefore);
      if (JSON.stringify(context).length !== r.charsBefore) throw new Error(`call ${k}: the context slice differs from the replay's`);
      return { context, indexer, boundary: frontier ? frontier.thinkingStripBoundaryTimestamp : undefined, expected: r.charsAfter };
    },
  };
}

async function single(file, runs, samples) {
  const { replay } = require('..');
  const size = fs.statSync(file).size;
  const times = { config: [], all: [], prefix: [] };
  let result;
  for (let i = 0; i < runs; i++) {
    if (global.gc) global.gc();
    let t0 = performance.now();
    const r = replay(file, { policies: ['config'], renders: i === 0, thinkingBoundary: 'recorded' });
    if (i === 0) result = r;
    times.config.push(performance.now() - t0);
    if (global.gc) global.gc();
    t0 = performance.now();
    replay(file);
    times.all.push(performance.now() - t0);
    if (global.gc) global.gc();
    t0 = performance.now();
    replay(file, { cacheModel: 'prefix' });
    times.prefix.push(performance.now() - t0);
  }
  const n = result.modelCalls;
  const out = [`${runtime}: ${path.basename(file)} (${size} bytes, ${n} model calls), ${runs} runs`];
  const ours = median(times.config);
  out.push(`  replay, policy config (+ none)      median ${(ours / 1000).toFixed(2).padStart(7)} s  (range ${range(times.config.map((t) => t / 1000), 2)} s)  ${((2 * n) / (ours / 1000)).toFixed(0)} renders/s`);
  out.push(`  replay, all five policies (provider) median ${(median(times.all) / 1000).toFixed(2).padStart(7)} s  (range ${range(times.all.map((t) => t / 1000), 2)} s)  ${((5 * n) / (median(times.all) / 1000)).toFixed(0)} renders/s`);
  out.push(`  replay, all five policies (prefix)   median ${(median(times.prefix) / 1000).toFixed(2).padStart(7)} s  (range ${range(times.prefix.map((t) => t / 1000), 2)} s)  ${((5 * n) / (median(times.prefix) / 1000)).toFixed(0)} renders/s`);
  out.push(`  provider cache model / prefix rule: ${(median(times.all) / median(times.prefix)).toFixed(2)}x the time (target < 2x)`);
  if (!fs.existsSync(REFERENCE)) {
    out.push('  reference: ../shared/reference absent, skipped');
    return out.join('\n');
  }
  const ref = await referenceInputs(file, result);
  const c = ref.config;
  const step = Math.max(1, Math.ceil(n / samples));
  const per = [];
  for (let k = step - 1; k < n; k += step) {
    const input = ref.at(k);
    if (global.gc) global.gc();
    const t0 = performance.now();
    const r = ref.pruneMessages(input.context, input.indexer, c.chainCompression, c.errorPurge, c.thinkingStrip, c.protection, c.recoveryGraceTurns, input.boundary);
    per.push(performance.now() - t0);
    const got = JSON.stringify(r.messages).length;
    if (got !== input.expected) throw new Error(`call ${k}: the reference wrote ${got} chars, the replay ${input.expected}`);
  }
  const mean = per.reduce((a, b) => a + b, 0) / per.length;
  const total = mean * n;
  out.push(
    `  reference pruneMessages per render   ${per.length} of ${n} renders timed (every ${step}th), mean ${mean.toFixed(1)} ms ` +
      `(median ${median(per).toFixed(1)}, range ${range(per, 1)}), scaled total ${(total / 1000).toFixed(1)} s, ${(n / (total / 1000)).toFixed(0)} renders/s`,
  );
  // The replay also renders `none` (a copy, no pruning): the whole replay
  // time is billed against the reference's config renders alone.
  out.push(`  replay (config + none) vs reference: ${(total / ours).toFixed(0)}x faster per config render`);
  return out.join('\n');
}

/** One replay in this fresh process, then its peak RSS in MiB. */
function rss(which, file) {
  const { replay } = require('..');
  if (which === 'config') replay(file, { policies: ['config'] });
  if (which === 'all') replay(file);
  if (which === 'prefix') replay(file, { cacheModel: 'prefix' });
  console.log(peakRssMiB());
}

async function main() {
  const args = process.argv.slice(2);
  if (args[0] === '--rss') return rss(args[1], args[2]);
  const only = args[0] === '--single';
  if (only) args.shift();
  const file = sessionFile(args[0]);
  if (file === null) {
    console.log('benches/replay.js: ../shared/corpus is absent and no session file was given: skipped');
    return;
  }
  const runs = Number(args[1] || 3);
  const samples = Number(args[2] || 40);
  console.log(await single(file, runs, samples));
  if (only) return;
  const size = fs.statSync(file).size;
  const peak = (which) => Number(execFileSync(process.execPath, [__filename, '--rss', which, file], { encoding: 'utf8' }).trim());
  const base = peak('baseline');
  for (const which of ['config', 'all', 'prefix']) {
    const p = peak(which);
    console.log(
      `  peak RSS (${runtime}), replay ${which.padEnd(6)} ${p} MiB; minus the module baseline (${base} MiB): ${p - base} MiB = ` +
        `${((p - base) / (size / 1048576)).toFixed(2)}x the file (target <= 3x)`,
    );
  }
  const bun = path.join(ROOT, 'node_modules', '.bin', 'bun');
  if (!process.versions.bun && fs.existsSync(bun)) {
    const r = spawnSync(bun, [__filename, '--single', file, String(runs), String(samples)], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    process.stdout.write(r.stdout);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
