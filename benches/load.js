#!/usr/bin/env node
'use strict';
// Session loading, side by side in one process (run it under Node and
// under Bun): loadSession against what pi and pi-condense do on a resume,
// pi's SessionManager.open + buildSessionContext plus the reference
// indexer's reconstructFromSession, on the huge corpus session converted by
// scripts/corpus-to-session.js. Also the native load without making JS
// objects (the JSON texts only: what a native replay starts from) and the
// peak RSS of one load, each in a fresh child process.
//
//   node benches/load.js [session.jsonl] [runs]
//   bun benches/load.js [session.jsonl] [runs]

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const { peakRssMiB } = require('./peak-rss.js');

const ROOT = path.join(__dirname, '..');
const runtime = process.versions.bun ? `bun ${process.versions.bun}` : `node ${process.versions.node}`;

async function main() {
  const file = path.resolve(process.argv[2] || path.join(ROOT, '.tmp', 'sessions', 'huge.jsonl'));
  const runs = Number(process.argv[3] || 7);
  if (process.argv[2] === '--rss') return rss(process.argv[3], process.argv[4]);
  if (!fs.existsSync(file)) {
    console.error(`${file} is missing: run node scripts/corpus-to-session.js first`);
    process.exit(1);
  }
  const { importPi, importReference } = require('../__test__/helpers/pi-session.js');
  const pi = await importPi();
  const reference = await importReference();
  const { loadSession } = require('..');
  const native = require('../loader.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loadbench-'));
  const copy = path.join(dir, 'session.jsonl');
  fs.copyFileSync(file, copy);

  const contenders = {
    'pi open + buildSessionContext + reconstructFromSession': () => {
      const sm = pi.SessionManager.open(copy, dir);
      const messages = sm.buildSessionContext().messages.filter((m) => m.role !== 'system');
      if (reference) {
        const branch = sm.getBranch();
        new reference['2.4.3']().reconstructFromSession({ sessionManager: { getBranch: () => branch } });
      }
      return messages.length;
    },
    'loadSession (JS objects)': () => loadSession(file).messages.length,
    // The native load hands back one JSON text (since issue 43): its length.
    'native load, JSON texts only (no JS objects)': () => native.loadSessionFile(file, null, null).json.length,
  };
  const times = {};
  for (const name of Object.keys(contenders)) times[name] = [];
  for (let r = 0; r < runs; r++) {
    for (const [name, fn] of Object.entries(contenders)) {
      if (global.gc) global.gc();
      const t0 = performance.now();
      const n = fn();
      times[name].push(performance.now() - t0);
      if (!n) throw new Error(`${name}: no messages`);
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const spread = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return `${s[0].toFixed(0)}-${s[s.length - 1].toFixed(0)}`;
  };
  const base = median(times[Object.keys(contenders)[0]]);
  console.log(`${runtime}, ${path.basename(file)} (${fs.statSync(file).size} bytes), ${runs} runs${reference ? '' : ' (reference absent: pi only)'}`);
  for (const [name, xs] of Object.entries(times)) {
    console.log(`  ${name.padEnd(56)} median ${median(xs).toFixed(1).padStart(7)} ms  (range ${spread(xs)})  ${(base / median(xs)).toFixed(1)}x`);
  }
  for (const which of ['baseline', 'pi-modules', 'pi', 'loadSession', 'native']) {
    const out = execFileSync(process.execPath, [__filename, '--rss', which, file], { encoding: 'utf8' });
    console.log(`  peak RSS, ${which.padEnd(12)} ${out.trim()} MiB`);
  }
}

// One load in this fresh process, then its peak RSS. `baseline` loads this
// package only, `pi-modules` pi and the reference only: subtract them.
async function rss(which, file) {
  const { importPi, importReference } = require('../__test__/helpers/pi-session.js');
  if (which === 'pi') {
    const pi = await importPi();
    const reference = await importReference();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loadbench-'));
    const copy = path.join(dir, 'session.jsonl');
    fs.copyFileSync(file, copy);
    const sm = pi.SessionManager.open(copy, dir);
    sm.buildSessionContext();
    if (reference) new reference['2.4.3']().reconstructFromSession({ sessionManager: { getBranch: () => sm.getBranch() } });
    fs.rmSync(dir, { recursive: true, force: true });
  } else if (which === 'pi-modules') {
    await importPi();
    await importReference();
  } else if (which === 'loadSession') {
    require('..').loadSession(file);
  } else if (which === 'native') {
    require('../loader.js').loadSessionFile(file, null, null);
  } else {
    require('..');
  }
  console.log(peakRssMiB());
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
