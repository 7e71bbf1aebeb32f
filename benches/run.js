#!/usr/bin/env node
'use strict';

// `npm run bench`: the render path side by side with pi-condense's own, as
// pi runs it, for each dialect against its own reference release, in Node
// and in Bun. One child process per runtime x corpus file x dialect (so no
// two measurements share a heap) runs the growing-conversation loop and the
// first calls (benches/render.js), the no-op renders, and the Buffer path on
// fresh Buffers (benches/throughput.js); one more fresh child per runtime x
// corpus file x dialect measures the peak RSS growth of one stateless
// prune. The tables (median ms and ratio to the reference, the issues'
// targets beside the rows, every mismatch with the reference) go to stdout
// and, for a full run, to benches/RESULTS.md.
//
//   npm run bench                       everything (with --load); writes benches/RESULTS.md
//   npm run bench -- --quick            small and medium, 5 renders (development)
//   npm run bench -- --only large       one corpus file (repeat or comma-separate)
//   npm run bench -- --dialect 2.9.1    one dialect
//   npm run bench -- --runtime node     one runtime (node or bun)
//   npm run bench -- --node 24          the Node(s) to measure with: `this` (the
//                                       Node running the bench), a major that
//                                       scripts/nodes.js pins (22, 24; fetched
//                                       from npm into the machine's cache), or
//                                       a path to a node binary; repeat or
//                                       comma-separate (default: this,24)
//   npm run bench -- --renders 9        renders per corpus file (default 15)
//   npm run bench -- --load             add session-file loading (benches/load.js)
//   npm run bench -- --out FILE         write the markdown there (a partial
//                                       run writes nothing unless given)
//
// Needs ../shared/corpus (skipped with a note when absent) and
// ../shared/reference (the render rows are skipped without it). Benchmark a
// release build (`npm run build`).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync, execFileSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..');
const RESULTS_FILE = path.join(__dirname, 'RESULTS.md');
const SESSIONS_DIR = path.join(ROOT, '.tmp', 'sessions');
const DIALECTS = ['2.4.3', '2.9.1'];
const RUNTIMES = ['Node', 'Bun'];
const DEFAULT_NODES = ['this', '24'];
const NAMES = ['small', 'medium', 'large', 'huge'];

// ---------------------------------------------------------------------------
// Children

async function childRender(name, dialect, sizes) {
  const { loadCorpus } = require('./corpus.js');
  const { benchRender, benchNoop } = require('./render.js');
  const { benchBuffer } = require('./throughput.js');
  const corpus = loadCorpus(name);
  const log = (what) => process.stderr.write(`  ${runtimeName()} ${name} ${dialect}: ${what}\n`);
  log('growing conversation');
  const render = await benchRender(corpus, dialect, { renders: sizes.renders, cold: sizes.cold });
  log('no-op renders');
  const noop = await benchNoop(corpus, dialect, sizes.noop);
  log('Buffer path');
  const buffer = await benchBuffer(corpus, dialect, sizes.buffer);
  return { messages: corpus.messages.length, fileBytes: corpus.bytes, render, noop, buffer };
}

function childRss(name, dialect) {
  return require('./throughput.js').peakRss(name, dialect);
}

function runtimeName() {
  return typeof Bun !== 'undefined' ? 'Bun' : 'Node';
}

async function child(argv) {
  const [kind, name, dialect, outFile, sizesJson] = argv;
  const { gcAvailable } = require('./timing.js');
  const result = kind === 'rss' ? childRss(name, dialect) : await childRender(name, dialect, JSON.parse(sizesJson));
  const version = typeof Bun !== 'undefined' ? Bun.version : process.versions.node;
  const api = require('..');
  fs.writeFileSync(outFile, JSON.stringify({ runtime: runtimeName(), version, backend: api.backend, gc: gcAvailable, result }));
}

// ---------------------------------------------------------------------------
// Arguments

function usage(message) {
  console.error(`${message}\nusage: npm run bench -- [--quick] [--only NAME[,NAME]] [--dialect 2.4.3|2.9.1] [--runtime node|bun] [--renders N] [--load] [--out FILE]`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { quick: false, names: [], dialects: [], runtimes: [], nodes: [], renders: null, load: false, out: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--quick') opts.quick = true;
    else if (a === '--only') opts.names.push(...value().split(','));
    else if (a === '--dialect') opts.dialects.push(...value().split(','));
    else if (a === '--runtime') opts.runtimes.push(...value().split(',').map((r) => r[0].toUpperCase() + r.slice(1).toLowerCase()));
    else if (a === '--node') opts.nodes.push(...value().split(','));
    else if (a === '--renders') opts.renders = Number(value());
    else if (a === '--load') opts.load = true;
    else if (a === '--out') opts.out = path.resolve(value());
    else usage(`unknown argument ${a}`);
  }
  for (const n of opts.names) if (!NAMES.includes(n)) usage(`unknown corpus file ${n} (${NAMES.join(', ')})`);
  for (const d of opts.dialects) if (!DIALECTS.includes(d)) usage(`unknown dialect ${d} (${DIALECTS.join(', ')})`);
  for (const r of opts.runtimes) if (!RUNTIMES.includes(r)) usage(`unknown runtime ${r} (node, bun)`);
  if (opts.renders !== null && !(Number.isInteger(opts.renders) && opts.renders >= 3)) usage('--renders must be an integer >= 3');
  opts.partial = opts.quick || opts.names.length > 0 || opts.dialects.length > 0 || opts.runtimes.length > 0 || opts.nodes.length > 0 || opts.renders !== null;
  if (!opts.nodes.length) opts.nodes = DEFAULT_NODES.slice();
  if (!opts.names.length) opts.names = opts.quick ? ['small', 'medium'] : NAMES.slice();
  if (!opts.dialects.length) opts.dialects = DIALECTS.slice();
  if (!opts.runtimes.length) opts.runtimes = RUNTIMES.slice();
  // The columns: one per Node asked for, then Bun.
  opts.runtimes = opts.runtimes.flatMap((r) => (r === 'Node' ? opts.nodes.map(nodeRuntime) : [{ label: r, cmd: bunPath(), args: [] }]));
  const renders = opts.renders ?? (opts.quick ? 5 : 15);
  opts.sizes = opts.quick ? { renders, cold: 3, noop: 5, buffer: 5 } : { renders, cold: 5, noop: 9, buffer: 9 };
  return opts;
}

// ---------------------------------------------------------------------------
// Running the children

function bunPath() {
  const local = path.join(ROOT, 'node_modules', '.bin', process.platform === 'win32' ? 'bun.cmd' : 'bun');
  return fs.existsSync(local) ? local : 'bun';
}

// A Node to measure with (--node): this one, a pinned major, or a binary.
function nodeRuntime(spec) {
  let cmd;
  if (spec === 'this') cmd = process.execPath;
  else if (/^\d+$/.test(spec)) {
    try {
      cmd = path.join(require('../scripts/nodes.js').binDir(spec), 'node');
    } catch (err) {
      return { label: `Node ${spec}`, cmd: null, args: [], why: err.message };
    }
  } else cmd = path.resolve(spec);
  let version = null;
  try {
    version = execFileSync(cmd, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().replace(/^v/, '');
  } catch {
    // reported as not available
  }
  return { label: version ? `Node ${version.split('.')[0]}` : `Node ${spec}`, cmd, args: ['--expose-gc'] };
}

const runtimeTable = new Map();

function commandFor(runtime) {
  const entry = runtimeTable.get(runtime);
  if (entry) return entry;
  return { cmd: bunPath(), args: [] };
}

function runtimeVersion(runtime) {
  const { cmd } = commandFor(runtime);
  if (!cmd) return null;
  try {
    return execFileSync(cmd, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim().replace(/^v/, '');
  } catch {
    return null;
  }
}

// Runs one child to its end, its stderr passed through (and kept for a
// failure note); its result comes back in a temporary file.
function spawnChild(runtime, kind, name, dialect, sizes) {
  const { cmd, args } = commandFor(runtime);
  const outFile = path.join(os.tmpdir(), `condense-bench-${process.pid}-${kind}-${runtime}-${name}-${dialect}.json`);
  const childArgs = [...args, __filename, '--child', kind, name, dialect, outFile, JSON.stringify(sizes)];
  const t0 = Date.now();
  return new Promise((resolve) => {
    const proc = spawn(cmd, childArgs, { cwd: ROOT, stdio: ['ignore', 'inherit', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (d) => {
      process.stderr.write(d);
      stderr = (stderr + d).slice(-4000);
    });
    proc.on('close', (code, signal) => {
      const seconds = (Date.now() - t0) / 1000;
      if (code !== 0 || !fs.existsSync(outFile)) {
        const tail = stderr.trim().split('\n').slice(-3).join(' / ');
        resolve({ failed: `exit ${code ?? signal}: ${tail || 'no output'}`, seconds });
        return;
      }
      const out = JSON.parse(fs.readFileSync(outFile, 'utf8'));
      fs.unlinkSync(outFile);
      resolve({ ...out, seconds });
    });
  });
}

// Session-file loading (benches/load.js) on the converted corpus sessions.
function runLoad(opts, runtimes) {
  const out = [];
  const missing = opts.names.filter((n) => !fs.existsSync(path.join(SESSIONS_DIR, `${n}.jsonl`)));
  if (missing.length) {
    execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'corpus-to-session.js'), SESSIONS_DIR, ...missing], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  for (const name of opts.names) {
    for (const runtime of runtimes) {
      const { cmd, args } = commandFor(runtime);
      process.stderr.write(`[${runtime}] session loading, ${name}\n`);
      const r = spawnSync(cmd, [...args, path.join(__dirname, 'load.js'), path.join(SESSIONS_DIR, `${name}.jsonl`), opts.quick ? '3' : '7'], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      out.push({ name, runtime, text: r.status === 0 ? r.stdout.trimEnd() : `failed (exit ${r.status}): ${(r.stderr || '').trim().split('\n').slice(-2).join(' / ')}` });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Tables

const fmtMs = (x) => (!Number.isFinite(x) ? 'n/a' : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3));
const fmtX = (x) => (!Number.isFinite(x) ? 'n/a' : x >= 10 ? `${x.toFixed(1)}×` : `${x.toFixed(2)}×`);

const BIG = ['large', 'huge'];

// The rows of a dialect's table: what each cell shows and the target the
// issues set for it (issue 13 for 2.4.3 and for every path; issue 14 for
// 2.9.1's drop-in and stateless calls).
function rowsFor(dialect) {
  const v24 = dialect === '2.4.3';
  const ratio = (min) => ({ kind: 'ratio', min });
  return [
    { key: 'reference', label: `reference (pi-condense ${dialect} pruneMessages, real indexer)`, kind: 'reference' },
    { key: 'limit', label: 'limit (walk the fresh array + build the stubs)', kind: 'ratio' },
    { key: 'floor', label: 'floor (JSON.stringify of input and output)', kind: 'ratio' },
    { key: 'pureJs', label: 'pure-JS (js/pure, state object)', kind: 'ratio' },
    { key: 'dropIn', label: `drop-in (condense-native/pi-condense-${dialect.slice(0, 3)}), growing`, ...ratio({ large: 25, huge: 20 }) },
    { key: 'dropInPlain', label: 'drop-in, growing, plain indexer (the documented methods only)', kind: 'ratio' },
    { key: 'dropInFirst', label: 'drop-in, first call (fresh indexer)', ...(v24 ? ratio({ large: 1, huge: 1 }) : ratio()) },
    { key: 'dropInInvalidated', label: 'drop-in after invalidate(indexer)', kind: 'ratio' },
    { key: 'stateless', label: 'stateless pruneMessages', ...ratio({ large: 1, huge: 1 }) },
    { key: 'session', label: 'PruneSession.render after one append', ...(v24 ? ratio({ large: 40, huge: 25 }) : ratio()) },
    { key: 'sessionVerify', label: 'PruneSession.render, verify mode', kind: 'ratio' },
    { key: 'sessionFirst', label: 'PruneSession, first render', kind: 'ratio' },
    { key: 'prune', label: 'prune(Buffer), fresh Buffer', kind: 'mbps', min: { large: 1000, huge: 1000 } },
    { key: 'pruner', label: 'Pruner.prune(Buffer), fresh Buffer', kind: 'mbps', min: { large: 1000, huge: 1000 } },
    { key: 'rss', label: 'peak RSS growth, one stateless prune (÷ input)', kind: 'rss', max: { large: 2, huge: 2 } },
    { key: 'noopPureJs', label: 'no-op, pure-JS', kind: 'ms' },
    { key: 'noopStateless', label: 'no-op, stateless pruneMessages (÷ pure-JS no-op)', kind: 'noop', max: { small: 1.2, medium: 1.2, large: 1.2, huge: 1.2 } },
    { key: 'noopSession', label: 'no-op, PruneSession.render (÷ pure-JS no-op)', kind: 'noop', max: { small: 1.2, medium: 1.2, large: 1.2, huge: 1.2 } },
  ];
}

function targetText(row) {
  if (row.min && row.kind === 'ratio') {
    const [a, b] = [row.min.large, row.min.huge];
    return a === b ? `≥ ${a}× (large, huge)` : `≥ ${a}× large, ≥ ${b}× huge`;
  }
  if (row.kind === 'mbps' && row.min) return '≥ 1000 MB/s (large, huge)';
  if (row.kind === 'rss' && row.max) return '≤ 2× (large, huge)';
  if (row.kind === 'noop' && row.max) return '≤ 1.2× (all)';
  return '';
}

// The value of a row in one measured column, and its cell text.
function cellOf(row, m) {
  if (!m) return { text: 'not run' };
  if (m.failed) return { text: 'failed' };
  const r = m.result;
  if (row.kind === 'rss') {
    const rss = m.rss;
    if (!rss) return { text: 'n/a' };
    if (rss.failed) return { text: 'failed' };
    const v = rss.result.ratio;
    return { value: v, text: `${v.toFixed(2)}× (${(rss.result.growth / 1e6).toFixed(0)} MB)${rss.result.reset ? '' : ' ≥'}` };
  }
  if (row.kind === 'mbps') {
    const ms = r.buffer.ms[row.key];
    const v = r.buffer.mbps[row.key];
    return { value: v, text: `${fmtMs(ms)} ms · ${Number.isFinite(v) ? v.toFixed(0) : 'n/a'} MB/s` };
  }
  if (row.key.startsWith('noop')) {
    const ms = r.noop.ms[row.key === 'noopPureJs' ? 'pureJs' : row.key === 'noopStateless' ? 'stateless' : 'session'];
    if (row.kind === 'ms') return { value: ms, text: `${fmtMs(ms)} ms` };
    const v = ms / r.noop.ms.pureJs;
    return { value: v, text: `${fmtMs(ms)} ms · ${fmtX(v)}` };
  }
  if (r.render.skipped) return { text: 'no reference' };
  const ms = r.render.ms[row.key];
  if (row.kind === 'reference') return { value: ms, text: `${fmtMs(ms)} ms` };
  const v = r.render.ms.reference / ms;
  return { value: v, text: `${fmtMs(ms)} ms · ${fmtX(v)}` };
}

// Whether a cell meets the row's target for its corpus file (null: no target there).
function verdict(row, name, value) {
  if (!Number.isFinite(value)) return row.min?.[name] !== undefined || row.max?.[name] !== undefined ? false : null;
  if (row.min && row.min[name] !== undefined) return value >= row.min[name];
  if (row.max && row.max[name] !== undefined) return value <= row.max[name];
  return null;
}

// The mismatch counts of a column: contender -> [mismatches, checked].
function mismatchesOf(m) {
  const out = {};
  if (!m || m.failed) return out;
  const r = m.result;
  const add = (prefix, part) => {
    if (!part || !part.checked) return;
    for (const [k, n] of Object.entries(part.checked)) out[prefix + k] = [part.mismatches[k] ?? 0, n, part.errors?.[k]];
  };
  if (!r.render.skipped) add('', r.render);
  add('noop ', r.noop);
  add('Buffer ', r.buffer);
  return out;
}

const MISMATCH_LABELS = {
  pureJs: 'pure-JS',
  dropIn: 'drop-in, growing',
  dropInPlain: 'drop-in, growing, plain indexer',
  stateless: 'stateless pruneMessages',
  session: 'PruneSession.render',
  sessionVerify: 'PruneSession.render, verify mode',
  dropInFirst: 'drop-in, first call',
  sessionFirst: 'PruneSession, first render',
  dropInInvalidated: 'drop-in after invalidate',
  'noop pureJs': 'no-op, pure-JS',
  'noop stateless': 'no-op, stateless',
  'noop session': 'no-op, PruneSession',
  'Buffer prune': 'prune(Buffer)',
  'Buffer pruner': 'Pruner.prune(Buffer)',
};

function dialectSection(dialect, columns, results) {
  const lines = [];
  const rows = rowsFor(dialect);
  const header = columns.map(([name, runtime]) => `${name} ${runtime}`);
  lines.push(`| contender | target | ${header.join(' | ')} |`);
  lines.push(`|---|---|${columns.map(() => '--:').join('|')}|`);
  const misses = [];
  let met = 0;
  for (const row of rows) {
    const cells = columns.map(([name, runtime]) => {
      const m = results[dialect]?.[name]?.[runtime];
      const c = cellOf(row, m);
      const ok = m && !m.failed ? verdict(row, name, c.value) : null;
      if (ok === true) met++;
      if (ok === false) misses.push(`${row.label}, ${name} ${runtime}: ${c.text} (target ${targetText(row)})`);
      return ok === null ? c.text : `${c.text} ${ok ? '✓' : '✗'}`;
    });
    lines.push(`| ${row.label} | ${targetText(row)} | ${cells.join(' | ')} |`);
  }
  lines.push('');
  lines.push(`Targets: ${met} cells met${misses.length ? `, ${misses.length} missed:` : ', none missed.'}`);
  for (const miss of misses) lines.push(`- missed: ${miss}`);
  lines.push('');

  // Every render checked against the reference.
  const per = columns.map(([name, runtime]) => mismatchesOf(results[dialect]?.[name]?.[runtime]));
  const keys = Object.keys(MISMATCH_LABELS).filter((k) => per.some((p) => p[k]));
  let total = 0;
  let checkedTotal = 0;
  const errors = [];
  if (keys.length) {
    lines.push('Renders that differ from the reference\'s (messages, sizes, diagnostics) / renders checked:');
    lines.push('');
    lines.push(`| contender | ${header.join(' | ')} |`);
    lines.push(`|---|${columns.map(() => '--:').join('|')}|`);
    for (const k of keys) {
      const cells = per.map((p, i) => {
        if (!p[k]) return '—';
        const [bad, n, err] = p[k];
        total += bad;
        checkedTotal += n;
        if (err) errors.push(`${MISMATCH_LABELS[k]}, ${header[i]}: threw ${err}`);
        return bad ? `**${bad} / ${n}**` : `0 / ${n}`;
      });
      lines.push(`| ${MISMATCH_LABELS[k]} | ${cells.join(' | ')} |`);
    }
    lines.push('');
    lines.push(total ? `**${total} of ${checkedTotal} checked renders differ from the reference's.**` : `All ${checkedTotal} checked renders equal the reference's.`);
    for (const e of errors) lines.push(`- ${e}`);
    lines.push('');
  }

  // What the columns ran on.
  const notes = [];
  for (const name of [...new Set(columns.map(([n]) => n))]) {
    const any = [...new Set(columns.map(([, rt]) => rt))].map((rt) => results[dialect]?.[name]?.[rt]).find((m) => m && !m.failed);
    if (!any) continue;
    const r = any.result;
    const rr = r.render;
    const what = rr.skipped
      ? rr.skipped
      : `${rr.renders} renders of the first ${r.messages - rr.renders}…${r.messages - 1} of ${r.messages} messages, a flush of ${rr.flushedResults} result${rr.flushedResults === 1 ? '' : 's'} before render ${Math.floor(rr.renders / 2) + 1}; the limit built ${rr.walked.stubs} stubs at the last render`;
    notes.push(`- ${name}: ${(r.fileBytes / 1e6).toFixed(1)} MB file, ${what}; Buffer ${(r.buffer.bytes / 1e6).toFixed(1)} MB.`);
  }
  for (const [name, runtime] of columns) {
    const m = results[dialect]?.[name]?.[runtime];
    if (m && m.failed) notes.push(`- ${name} ${runtime}: the child failed (${m.failed}).`);
    if (m && m.rss && m.rss.failed) notes.push(`- ${name} ${runtime}: the RSS child failed (${m.rss.failed}).`);
  }
  if (notes.length) {
    lines.push('Inputs:');
    lines.push('');
    lines.push(...notes);
    lines.push('');
  }
  return lines.join('\n');
}

function gitDescription() {
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const subject = execFileSync('git', ['log', '-1', '--format=%s'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'js', 'index.js', 'loader.js', 'benches', ':!benches/RESULTS.md', 'Cargo.toml', 'Cargo.lock'], { cwd: ROOT, encoding: 'utf8' }).trim();
    return `${head.slice(0, 12)} (${subject.length > 90 ? `${subject.slice(0, 90)}…` : subject})${dirty ? '; the work tree has changes in src/, js/, benches/ or the entry files' : ''}`;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

function binaryDescription() {
  const binary = fs.readdirSync(ROOT).find((f) => /^condense-native\..*\.node$/.test(f));
  if (!binary) return 'none next to index.js (the optional platform package, or the pure-JS fallback)';
  const st = fs.statSync(path.join(ROOT, binary));
  return `${binary}, ${(st.size / 1e6).toFixed(1)} MB, built ${st.mtime.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function markdown(opts, columns, results, versions, load, meta) {
  const cpus = os.cpus();
  const lines = [];
  lines.push('# condense-native: render-path benchmark');
  lines.push('');
  lines.push(`Written by \`npm run bench\` (\`benches/run.js\`${opts.argv.length ? ` ${opts.argv.join(' ')}` : ''}) on ${meta.date}; the run took ${meta.seconds.toFixed(0)} s.`);
  lines.push('');
  lines.push('## Machine');
  lines.push('');
  lines.push(`- CPU: ${cpus.length ? cpus[0].model.trim() : 'unknown'}, ${cpus.length} logical cores (${os.availableParallelism ? os.availableParallelism() : cpus.length} available); ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM`);
  lines.push(`- OS: ${os.type()} ${os.release()} ${os.arch()}; load average (1/5/15 min) at the start: ${meta.loadavg.map((x) => x.toFixed(2)).join(' / ')}, at the end: ${meta.loadavgEnd.map((x) => x.toFixed(2)).join(' / ')} (${os.cpus().length} cores: above that, other processes shared the CPU with the run)`);
  for (const runtime of opts.runtimes.map((r) => r.label)) {
    const v = versions[runtime];
    lines.push(`- ${runtime}: ${v ? `${v.version} (${runtime.startsWith('Node') ? '--expose-gc; ' : ''}backend ${v.backend}; forced GC before each timed call: ${v.gc ? 'yes' : 'no'})` : 'not available: its columns are skipped'}`);
  }
  lines.push(`- Code: commit ${gitDescription()}`);
  lines.push(`- Binary: ${binaryDescription()}`);
  lines.push(`- Inputs: ../shared/corpus (${opts.names.join(', ')}); references ../shared/reference/pi-condense-{${opts.dialects.join(',')}}`);
  lines.push('');
  lines.push('## How it is measured');
  lines.push('');
  lines.push(`One child process per runtime × corpus file × dialect. In each: ${opts.sizes.renders} renders of a growing conversation (the first n−${opts.sizes.renders} … n−1 messages), each contender on its own fresh \`structuredClone\` with a full GC before the timed call, one flush (pi-condense summarizing a pending batch: the real indexer and the state object both change) halfway. Medians. Ratio = reference ms / contender ms (higher is faster), both from the same child.`);
  lines.push('');
  lines.push('- **reference**: pi-condense\'s own `pruneMessages` from ../shared/reference with its real `ToolCallIndexer`, filled from the corpus state.');
  lines.push('- **limit**: a walk over the fresh clone reading each message\'s role, timestamp, toolCallId and content length and each block\'s type, id and text length, building a new output array with a fresh stub object `{role, toolCallId, toolName, content: [{type, text}], isError, timestamp}` for each tool result the state has a record for (texts prepared untimed). What any render of a fresh array must at least do.');
  lines.push('- **floor**: `JSON.stringify` of the clone and of the reference\'s output.');
  lines.push('- **drop-in**: `pruneMessages` of `condense-native/pi-condense-2.4` / `-2.9` with the reference\'s signature and the same indexer object every render; **plain indexer**: the same with an object that has only the methods the release\'s render path calls, each forwarding to the real indexer (no private field to read); **first call**: a fresh indexer object holding the same state (nothing kept), on all n messages; **after invalidate**: `invalidate(indexer)` then a render of all n messages (both timed).');
  lines.push('- **stateless**: `pruneMessages(messages, { state, config, thinkingStripBoundaryTimestamp, dialect })`.');
  lines.push('- **PruneSession**: one session per dialect, `setState` at the flush; **verify mode**: `{ verify: true }`; **first render**: a new session on all n messages.');
  lines.push(`- **Buffer**: \`prune(buffer, { state, config, dialect })\` and \`new Pruner(config, { dialect }).setState(state)\` then \`pruner.prune(buffer)\`, each call on a Buffer freshly read from a file (untimed) holding \`JSON.stringify(messages)\` of all n messages, GC before; ${opts.sizes.buffer} calls each; MB/s = Buffer bytes / median.`);
  lines.push('- **peak RSS growth**: in a fresh child, the input prepared and garbage collected, the peak reset (`/proc/self/clear_refs`), then one stateless `prune`; VmHWM after − VmHWM before, over the input\'s bytes.');
  lines.push(`- **no-op**: all n messages, empty state, every config section absent; ${opts.sizes.noop} calls each; shown over the pure-JS no-op (target ≤ 1.2×).`);
  lines.push('- Every render of every contender (and every Buffer result and no-op) is checked against the reference\'s render of the same input (messages, pruned, sizes, 2.9.1 diagnostics in order); the counts are below each table. A target cell is marked ✓ or ✗.');
  lines.push('- Targets: issue 13 for 2.4.3 and for every path (Buffer, RSS, no-op); issue 14 for 2.9.1 (drop-in ≥ 25× large, ≥ 20× huge; stateless ≥ 1.0×). Issue 14 sets no session or first-call target for 2.9.1.');
  lines.push('');
  if (meta.skipped.length) {
    lines.push(...meta.skipped.map((s) => `> ${s}`));
    lines.push('');
  }
  for (const dialect of opts.dialects) {
    lines.push(`## pi-condense ${dialect}`);
    lines.push('');
    lines.push(`Against ../shared/reference/pi-condense-${dialect}. Cells: median ms · ratio.`);
    lines.push('');
    lines.push(dialectSection(dialect, columns, results));
  }
  if (load) {
    lines.push('## Session-file loading (benches/load.js)');
    lines.push('');
    for (const l of load) {
      lines.push(`${l.name}, ${l.runtime}:`);
      lines.push('');
      lines.push('```');
      lines.push(l.text);
      lines.push('```');
      lines.push('');
    }
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------
// Main

async function main() {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') return child(argv.slice(1));
  const opts = parseArgs(argv);
  opts.argv = argv;
  const { corpusAvailable, loadReference } = require('./corpus.js');
  const meta = { date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC', loadavg: os.loadavg(), skipped: [] };
  const t0 = Date.now();

  const present = opts.names.filter((n) => corpusAvailable(n));
  for (const n of opts.names.filter((x) => !present.includes(x))) meta.skipped.push(`Skipped ${n}: ../shared/corpus/${n}.json is absent.`);
  if (!present.length) {
    console.log(`benchmark skipped: no corpus file (${opts.names.join(', ')}) in ../shared/corpus; benches/RESULTS.md left as it is`);
    return;
  }
  for (const d of opts.dialects) {
    if (!(await loadReference(d))) meta.skipped.push(`No reference for ${d} (../shared/reference/pi-condense-${d} is absent): its render rows are skipped, its Buffer results unchecked.`);
  }
  const versions = {};
  const runtimes = [];
  for (const r of opts.runtimes) {
    if (runtimeTable.has(r.label)) continue;
    runtimeTable.set(r.label, r);
    if (runtimeVersion(r.label)) runtimes.push(r.label);
    else meta.skipped.push(`${r.label} is not available (${r.why || r.cmd}): its columns are skipped.`);
  }

  const results = {};
  for (const name of present) {
    for (const dialect of opts.dialects) {
      for (const runtime of runtimes) {
        process.stderr.write(`[${runtime}] ${name} ${dialect}\n`);
        const m = await spawnChild(runtime, 'render', name, dialect, opts.sizes);
        process.stderr.write(`  ${m.failed ? `failed: ${m.failed}` : 'done'} in ${m.seconds.toFixed(0)} s\n`);
        if (!m.failed) versions[runtime] ??= { version: m.version, backend: m.backend, gc: m.gc };
        m.rss = await spawnChild(runtime, 'rss', name, dialect, {});
        ((results[dialect] ??= {})[name] ??= {})[runtime] = m;
      }
    }
  }
  const load = opts.load && present.length ? runLoad({ ...opts, names: present }, runtimes) : null;
  meta.seconds = (Date.now() - t0) / 1000;
  meta.loadavgEnd = os.loadavg();

  const columns = present.flatMap((name) => runtimes.map((runtime) => [name, runtime]));
  const md = markdown(opts, columns, results, versions, load, meta);
  console.log(md);
  const outFile = opts.out ?? (opts.partial ? null : RESULTS_FILE);
  if (outFile) {
    // The section benches/real-pi.js writes (between its markers) stays.
    const old = fs.existsSync(outFile) ? fs.readFileSync(outFile, 'utf8') : '';
    const realPi = /<!-- real-pi:start -->[\s\S]*<!-- real-pi:end -->/.exec(old);
    fs.writeFileSync(outFile, `${md}\n${realPi ? `\n${realPi[0]}\n` : ''}`);
    process.stderr.write(`wrote ${path.relative(process.cwd(), outFile)}\n`);
  } else {
    process.stderr.write('a partial run: benches/RESULTS.md left as it is (--out FILE to write one)\n');
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
