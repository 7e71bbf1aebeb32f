#!/usr/bin/env node
'use strict';

// The Buffer path (`prune`, `Pruner.prune`) on bytes the addon has not seen
// before, as they arrive from a file or a socket: each timed call gets a
// Buffer freshly read from a file (untimed) and a full GC before it. Every
// result is checked against pi-condense's own render of the same messages
// (../shared/reference). Also the peak RSS growth of a process during one
// stateless prune, for benches/run.js to measure in a fresh child.
//
//   node --expose-gc benches/throughput.js [small|medium|large|huge ...]
//
// prints MB/s per corpus file and dialect in this process (skipped when
// ../shared/corpus is absent). `npm run bench` runs the same measurement
// per runtime, corpus file and dialect, each in its own child.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { isDeepStrictEqual } = require('node:util');
const { forceGc, median } = require('./timing.js');
const { NAMES, corpusAvailable, loadCorpus, stateOf, configOf, loadReference } = require('./corpus.js');
const { fillIndexer } = require('../__test__/helpers/indexer.js');
const { referenceArgs, reportSink } = require('./render.js');

// The messages of a Buffer-path result as the reference's array would
// print: byte-equal text, or (key order aside) equal values.
function sameMessages(r, inputText, wantMessages) {
  const text = r.messages === null ? inputText : r.messages.toString('utf8');
  const wantText = JSON.stringify(wantMessages);
  return text === wantText || isDeepStrictEqual(JSON.parse(text), wantMessages);
}

/**
 * Medians of `prune` (stateless: state and config passed with the call)
 * and `Pruner.prune` (state and config set once) on fresh Buffers of the
 * corpus messages, with MB/s, checked renders and mismatches.
 */
async function benchBuffer(corpus, dialect, runs = 9) {
  const api = require('..');
  const reference = await loadReference(dialect);
  const state = stateOf(corpus, dialect);
  const config = configOf(corpus, dialect);
  const boundary = dialect === '2.4.3' ? corpus.boundary : null;
  const inputText = JSON.stringify(corpus.messages);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-bench-'));
  const file = path.join(dir, 'messages.json');
  fs.writeFileSync(file, inputText);
  const bytes = Buffer.byteLength(inputText);

  let want = null;
  let wantReports = [];
  if (reference) {
    const sink = reportSink();
    want = reference.pruneMessages(structuredClone(corpus.messages), ...referenceArgs(dialect, config, boundary, fillIndexer(reference, dialect, state).indexer, sink));
    wantReports = sink.reports;
  }

  const pruner = new api.Pruner(config, { dialect }).setState(state);
  const contenders = {
    prune: (b, sink) => api.prune(b, { state, config, thinkingStripBoundaryTimestamp: boundary, dialect, diagnostics: sink }),
    pruner: (b, sink) => pruner.prune(b, { thinkingStripBoundaryTimestamp: boundary, diagnostics: sink }),
  };
  const times = { prune: [], pruner: [] };
  const checked = {};
  const mismatches = {};
  const errors = {};
  try {
    for (let i = 0; i < runs; i++) {
      for (const [name, fn] of Object.entries(contenders)) {
        const input = fs.readFileSync(file);
        const sink = reportSink();
        forceGc();
        try {
          const t0 = performance.now();
          const r = fn(input, sink);
          times[name].push(performance.now() - t0);
          if (want) {
            checked[name] = (checked[name] ?? 0) + 1;
            const same =
              r.pruned === want.pruned &&
              r.beforeChars === want.beforeChars &&
              r.afterChars === want.afterChars &&
              JSON.stringify(sink.reports) === JSON.stringify(wantReports) &&
              sameMessages(r, inputText, want.messages);
            if (!same) mismatches[name] = (mismatches[name] ?? 0) + 1;
          }
        } catch (err) {
          checked[name] = (checked[name] ?? 0) + 1;
          mismatches[name] = (mismatches[name] ?? 0) + 1;
          errors[name] ??= `${err && err.code ? `${err.code}: ` : ''}${err && err.message ? err.message : String(err)}`;
        }
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const ms = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
  const mbps = Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, bytes / 1e6 / (v / 1000)]));
  return { bytes, runs, ms, mbps, checked, mismatches, errors, referenceAbsent: !reference };
}

function procStatus(field) {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : null;
}

/**
 * The peak RSS growth of this process during one stateless `prune` of the
 * corpus messages, in bytes and over the input's size. Meant for a fresh
 * process: the input is prepared, the garbage collected and the peak
 * (VmHWM) reset through /proc/self/clear_refs before the call, so the
 * peak after it is the call's own. Linux only (null elsewhere).
 */
function peakRss(name, dialect) {
  if (!fs.existsSync('/proc/self/status')) return null;
  const api = require('..');
  let corpus = loadCorpus(name);
  const input = Buffer.from(JSON.stringify(corpus.messages));
  const state = stateOf(corpus, dialect);
  const config = configOf(corpus, dialect);
  const boundary = dialect === '2.4.3' ? corpus.boundary : null;
  corpus = null;
  forceGc();
  forceGc();
  let reset = true;
  try {
    fs.writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    reset = false; // the peak then includes the preparation: growth is a lower bound
  }
  const before = procStatus('VmHWM');
  const r = api.prune(input, { state, config, thinkingStripBoundaryTimestamp: boundary, dialect });
  const after = procStatus('VmHWM');
  const growth = after - before;
  return { bytes: input.length, before, after, growth, ratio: growth / input.length, reset, pruned: r.pruned };
}

async function main() {
  const names = process.argv.slice(2).length ? process.argv.slice(2) : NAMES;
  const runtime = typeof Bun !== 'undefined' ? `Bun ${Bun.version}` : `Node ${process.versions.node}`;
  console.log(`${runtime}; fresh Buffer per call (read from a file), GC before each; median of 9`);
  console.log('| corpus | dialect | MB | prune ms | prune MB/s | Pruner.prune ms | Pruner.prune MB/s | mismatches |');
  console.log('|---|---|--:|--:|--:|--:|--:|--:|');
  for (const name of names) {
    if (!corpusAvailable(name)) {
      console.log(`| ${name} | skipped: ../shared/corpus/${name}.json is absent |`);
      continue;
    }
    const corpus = loadCorpus(name);
    for (const dialect of ['2.4.3', '2.9.1']) {
      const r = await benchBuffer(corpus, dialect);
      const bad = Object.values(r.mismatches).reduce((a, b) => a + b, 0);
      const checks = r.referenceAbsent ? 'not checked (no reference)' : `${bad}`;
      console.log(
        `| ${name} | ${dialect} | ${(r.bytes / 1e6).toFixed(2)} | ${r.ms.prune.toFixed(2)} | ${r.mbps.prune.toFixed(0)} | ${r.ms.pruner.toFixed(2)} | ${r.mbps.pruner.toFixed(0)} | ${checks} |`,
      );
    }
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

module.exports = { benchBuffer, peakRss };
