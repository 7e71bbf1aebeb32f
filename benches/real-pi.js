#!/usr/bin/env node
'use strict';

// `npm run bench:real-pi`: condense-native where a pi user feels it. Real pi
// (pi 1.6.0's own CLI, print mode, pi-ai's faux provider: no network) with
// pi-condense and condense-native installed as `pi install` installs them
// (__test__/helpers/real-pi.js), on a ladder of session sizes. For each
// pi-condense release one session is built by pi-condense itself in pi
// (the scripted session of __test__/fixtures/pi-extension/faux-model.js,
// pi-condense alone, every batch summarized); each size is that session cut
// before a prompt, so it holds what pi-condense wrote up to there. Then, per
// size, interleaved rounds of
//
//   own    condense-native installed, CONDENSE_NATIVE=off: pi-condense's own
//          render
//   addon  condense-native rendering
//
// each a fresh copy of the session opened with `pi --session` and driven
// for a few prompts (4 model calls each). Per model call it records
// (fixtures/pi-extension/chain-timer.js) the whole `context` handler chain
// (every extension's handler and pi's work between them) and pi's whole work
// before the request (turn_start to the provider's call: pi's clone of the
// context, the chain, the conversion to the provider's payload). Medians:
// the first render after opening the session apart from the rest. Every
// request the model receives must be byte-equal between own and addon; a
// difference is reported and fails the run.
//
// pi-condense flushes (summarizes the pending batches, compresses a new
// chain, moves the thinking boundary) at the end of every prompt, and
// during a prompt when the context jumps: the renders after such a flush
// read new records, a new chain and a new boundary. The second table splits
// the renders into those (fixtures/pi-extension/chain-timer.js tells them by
// the entries pi-condense wrote since the previous model call) and the
// quiet ones, with the chain and condense-native's own timer of the render
// (the `pruneMessages` call, own or addon).
//
//   node benches/real-pi.js                         the ladder, both releases, Node 24
//   node benches/real-pi.js --sizes 10,100          some sizes
//   node benches/real-pi.js --release 2.4.3         one release
//   node benches/real-pi.js --rounds 5 --prompts 3  rounds per size, prompts per run
//   node benches/real-pi.js --min-messages 0        the addon's crossover (CONDENSE_NATIVE_MIN_MESSAGES):
//                                                   0 renders natively at every size (after the
//                                                   first render), to measure where it pays
//   node benches/real-pi.js --node 22,24            the Nodes to run pi with (22, 24 pinned by
//                                                   scripts/nodes.js, `this`, or a path), or
//                                                   `pi-binary`: pi's own Bun binary
//                                                   (scripts/pi-binary.js)
//   node benches/real-pi.js --out FILE              write the section there (default: into
//                                                   benches/RESULTS.md, between its markers)
//   node benches/real-pi.js --gate                  a third mode per round, gated: the addon with
//                                                   `condenseNative.gate` on (the model priced as
//                                                   Sonnet): the gate's share of each render
//   node benches/real-pi.js --no-write              print only
//   node benches/real-pi.js --cache DIR             where the built sessions and the project
//                                                   folder pi runs in are kept between runs
//                                                   (default ~/.cache/condense-native-real-pi)

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { CROSSOVER } = require('../pi/route.js');
const { FIXTURES, PI_PKG, PI_CLI, RELEASES, CONTEXT_PRUNE, FILTERED, sessionFileOf, meetsPi, run, cleanEnv, makeWorkspace } = require('../__test__/helpers/real-pi.js');

const ROOT = path.join(__dirname, '..');
const RESULTS_FILE = path.join(__dirname, 'RESULTS.md');
const START = '<!-- real-pi:start -->';
const END = '<!-- real-pi:end -->';

function usage(message) {
  process.stderr.write(`real-pi bench: ${message}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = {
    sizes: [10, 100, 500, 2000, 5000],
    releases: RELEASES,
    rounds: 3,
    prompts: 3,
    node: '24',
    out: RESULTS_FILE,
    write: true,
    cache: path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'condense-native-real-pi'),
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--sizes') {
      opts.sizes = value().split(',').map(Number);
      if (opts.sizes.some((n) => !Number.isInteger(n) || n < 2)) usage('--sizes takes whole numbers of messages, at least 2');
    } else if (a === '--release') {
      opts.releases = value().split(',');
      if (opts.releases.some((r) => !RELEASES.includes(r))) usage(`--release takes ${RELEASES.join(', ')}`);
    } else if (a === '--rounds' || a === '--prompts') {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 1) usage(`${a} takes a whole number >= 1`);
      opts[a.slice(2)] = n;
    } else if (a === '--node') opts.node = value();
    else if (a === '--min-messages') {
      opts.minMessages = value();
      if (!/^\d+$/.test(opts.minMessages)) usage('--min-messages takes a whole number');
    }
    else if (a === '--out') opts.out = path.resolve(value());
    else if (a === '--cache') opts.cache = path.resolve(value());
    else if (a === '--no-write') opts.write = false;
    else if (a === '--gate') opts.gate = true;
    else usage(`unknown argument '${a}'`);
  }
  return opts;
}

function nodeBinary(which) {
  if (which === 'this') return process.execPath;
  if (which === 'pi-binary') return require('../scripts/pi-binary.js').piBinary();
  if (/^\d+$/.test(which)) return path.join(require('../scripts/nodes.js').binDir(which), 'node');
  return path.resolve(which);
}

const median = (list) => (list.length === 0 ? NaN : [...list].sort((a, b) => a - b)[list.length >> 1]);
// The nearest-rank 90th percentile: the render a user waits longest for, but
// one in ten (after a flush, a new chain).
const p90 = (list) => (list.length === 0 ? NaN : [...list].sort((a, b) => a - b)[Math.ceil(list.length * 0.9) - 1]);
const lines = (file) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

// The project folder pi runs in (the same path for every run: pi puts it
// into the system prompt), with the notes the script reads.
function project(root, prompts) {
  const dir = path.join(root, 'project');
  fs.mkdirSync(path.join(dir, 'notes'), { recursive: true });
  for (let p = 1; p <= prompts; p++) {
    const file = path.join(dir, 'notes', `f${p}.txt`);
    if (!fs.existsSync(file)) fs.writeFileSync(file, `Notes ${p}: ${'the ledger balances once the importer runs. '.repeat(40 + (p % 40))}`);
  }
  return dir;
}

function prompt(p) {
  return `Prompt ${p}: go on with the task.`;
}

function pi(ctx, agent, { packages, prompts, session, envExtra = {}, clockStart, extra = {} }) {
  fs.writeFileSync(path.join(agent, 'settings.json'), JSON.stringify({ packages, contextPrune: CONTEXT_PRUNE, ...extra }, null, 2));
  const env = cleanEnv(ctx.work, { PI_CODING_AGENT_DIR: agent, PI_OFFLINE: '1', FAUX_CALLS: String(prompts.length * 6 + 50), ...envExtra });
  if (clockStart) env.FROZEN_CLOCK_START = String(clockStart);
  // pi's CLI under a Node (the clock preloaded), or pi's binary (the clock
  // as its first extension).
  const args = ctx.piBinary
    ? ['--print', '--model', 'faux/scripted', '--tools', 'read,bash', '-e', path.join(FIXTURES, 'frozen-clock-extension.js')]
    : ['-r', path.join(FIXTURES, 'frozen-clock.js'), PI_CLI, '--print', '--model', 'faux/scripted', '--tools', 'read,bash'];
  if (session) args.push('--session', session);
  args.push('-e', path.join(FIXTURES, 'chain-timer.js'), '-e', path.join(FIXTURES, 'faux-model.js'), ...prompts);
  return run(ctx.piBinary || ctx.node, args, { cwd: ctx.cwd, env, timeout: 3_600_000 });
}

// The session pi-condense builds alone, long enough for the largest size,
// kept in the cache folder (--cache) for the next run: a session depends on
// the release, the prompt count, the fixtures and pi, named below.
function buildSession(ctx, agent, release, messages) {
  const count = Math.ceil(messages / 8) + 4; // 8 to 9 messages per prompt
  project(ctx.cache, count + 200);
  // The fixtures' code, without their comments.
  const fixtures = ['faux-model.js', 'frozen-clock.js']
    .map((f) => fs.readFileSync(path.join(FIXTURES, f), 'utf8').replace(/^\s*\/\/.*$/gm, ''))
    .join('\n');
  const key = require('node:crypto').createHash('sha256').update(`${release}\n${count}\n${PI_PKG.version}\n${JSON.stringify(CONTEXT_PRUNE)}\n${fixtures}`).digest('hex').slice(0, 12);
  const file = path.join(ctx.cache, `session-${release}-${count}-${key}.jsonl`);
  if (fs.existsSync(file)) return { file, prompts: count };
  fs.rmSync(path.join(agent, 'sessions'), { recursive: true, force: true });
  const t0 = Date.now();
  pi(ctx, agent, { packages: ['npm:pi-condense'], prompts: Array.from({ length: count }, (_, i) => prompt(i + 1)) });
  const written = sessionFileOf(agent);
  fs.copyFileSync(written, `${file}.tmp`);
  fs.renameSync(`${file}.tmp`, file);
  process.stderr.write(`pi-condense ${release}: built a session of ${count} prompts in ${((Date.now() - t0) / 1000).toFixed(0)} s (${file})\n`);
  return { file, prompts: count };
}

// The session cut before the first prompt that would take it past `size`
// messages: every entry pi-condense wrote up to there is kept.
function cutSession(built, size, out) {
  const all = lines(built.file);
  let messages = 0;
  let cut = all.length;
  let lastTime = 0;
  for (let i = 0; i < all.length; i++) {
    const e = JSON.parse(all[i]);
    if (e.type !== 'message') continue;
    if (e.message.role === 'user' && messages + 1 > size && messages > 0) {
      cut = i;
      break;
    }
    messages++;
    if (typeof e.message.timestamp === 'number') lastTime = Math.max(lastTime, e.message.timestamp);
  }
  if (cut === all.length && messages < size * 0.9) throw new Error(`the built session has ${messages} messages, fewer than ${size}`);
  fs.writeFileSync(out, `${all.slice(0, cut).join('\n')}\n`);
  return { file: out, messages, clockStart: lastTime + 60_000 };
}

function measureOnce(ctx, agent, cut, mode, prompts) {
  const session = path.join(ctx.work, 'open.jsonl');
  fs.copyFileSync(cut.file, session);
  const chain = path.join(ctx.work, 'chain.jsonl');
  const requests = path.join(ctx.work, 'requests.jsonl');
  fs.rmSync(chain, { force: true });
  fs.rmSync(requests, { force: true });
  const envExtra = { CHAIN_LOG: chain, FAUX_LOG: requests };
  if (mode === 'own') envExtra.CONDENSE_NATIVE = 'off';
  else if (ctx.minMessages !== undefined) envExtra.CONDENSE_NATIVE_MIN_MESSAGES = ctx.minMessages;
  const extra = {};
  if (mode === 'gated') {
    extra.condenseNative = { gate: { enabled: true } };
    envExtra.FAUX_COST = JSON.stringify({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 });
  }
  pi(ctx, agent, { packages: FILTERED, prompts, session, envExtra, clockStart: cut.clockStart, extra });
  const calls = lines(chain).map((l) => JSON.parse(l));
  return { calls, requests: lines(requests).filter((l) => l.startsWith('{"kind":"agent"')) };
}

function benchRelease(ctx, opts, release, agent) {
  const built = buildSession(ctx, agent, release, Math.max(...opts.sizes));
  const measurePrompts = Array.from({ length: opts.prompts }, (_, i) => prompt(built.prompts + 1 + i));
  const rows = [];
  for (const size of opts.sizes) {
    const cut = cutSession(built, size, path.join(ctx.work, `cut-${release}-${size}.jsonl`));
    const modeTimes = () => ({ first: [], rest: [], send: [], split: { quiet: { chain: [], render: [] }, after: { chain: [], render: [] } } });
    const got = { own: modeTimes(), addon: modeTimes(), gated: { rest: [], render: [], gate: [] } };
    let mismatches = 0;
    for (let round = 0; round < opts.rounds; round++) {
      const order = round % 2 === 0 ? ['own', 'addon'] : ['addon', 'own'];
      const runs = {};
      if (opts.gate) {
        // The gate renders every call on the addon, the first one too.
        const calls = measureOnce(ctx, agent, cut, 'gated', measurePrompts).calls.filter((c) => typeof c.gateMs === 'number' && c.path === 'native');
        if (calls.length === 0) throw new Error(`${release} ${size}: no gated render was timed`);
        for (const c of calls.slice(1)) {
          got.gated.rest.push(c.chainMs);
          got.gated.render.push(c.renderMs);
          got.gated.gate.push(c.gateMs);
        }
      }
      for (const mode of order) {
        runs[mode] = measureOnce(ctx, agent, cut, mode, measurePrompts);
        const calls = runs[mode].calls.filter((c) => typeof c.chainMs === 'number');
        if (calls.length === 0) throw new Error(`${release} ${size}: no model call was timed (${mode})`);
        // The addon renders natively at and above its crossover, after the
        // first render; pi-condense's own function renders every own call.
        const crossover = ctx.crossover(release);
        const wrong = (c) => {
          if (mode === 'own' || c.messages < crossover) return c.path !== 'own' && 'own';
          return calls[0].messages >= crossover && c.path !== 'native' && 'native';
        };
        const off = calls.slice(1).filter(wrong);
        if (off.length > 0) {
          throw new Error(`${release} ${size} (${mode}): ${off.length} of ${calls.length - 1} renders took the ${off[0].path ?? 'unannounced'} path, not ${wrong(off[0])}`);
        }
        got[mode].first.push(calls[0].chainMs);
        got[mode].messages = calls[0].messages; // what the first render saw
        for (const c of calls.slice(1)) got[mode].rest.push(c.chainMs);
        for (const c of calls.slice(1)) {
          if (typeof c.change !== 'boolean' || typeof c.renderMs !== 'number') continue;
          const part = got[mode].split[c.change ? 'after' : 'quiet'];
          part.chain.push(c.chainMs);
          part.render.push(c.renderMs);
        }
        for (const c of calls) if (typeof c.beforeSendMs === 'number') got[mode].send.push(c.beforeSendMs);
      }
      const a = runs.own.requests;
      const b = runs.addon.requests;
      if (a.length !== b.length || a.some((r, n) => r !== b[n])) mismatches++;
    }
    const row = { release, size, messages: got.addon.messages ?? cut.messages, rounds: opts.rounds, mismatches };
    for (const mode of ['own', 'addon']) {
      row[mode] = { render: median(got[mode].rest), p90: p90(got[mode].rest), first: median(got[mode].first), send: median(got[mode].send), renders: got[mode].rest.length };
      for (const part of ['quiet', 'after']) {
        const t = got[mode].split[part];
        row[mode][part] = { chain: median(t.chain), render: median(t.render), renders: t.render.length };
      }
    }
    if (opts.gate) row.gated = { chain: median(got.gated.rest), render: median(got.gated.render), gate: median(got.gated.gate), share: median(got.gated.gate.map((g, n) => g / got.gated.render[n])) };
    rows.push(row);
    process.stderr.write(
      `${ctx.nodeVersion} ${release} ${row.messages} messages: own ${row.own.render.toFixed(3)} ms (first ${row.own.first.toFixed(2)}), ` +
        `addon ${row.addon.render.toFixed(3)} ms (first ${row.addon.first.toFixed(2)}), ${mismatches} mismatching rounds; ` +
        `condense-native's timer, quiet / after a change: own ${row.own.quiet.render.toFixed(2)} / ${row.own.after.render.toFixed(2)} ms, ` +
        `addon ${row.addon.quiet.render.toFixed(2)} / ${row.addon.after.render.toFixed(2)} ms (${row.addon.after.renders} of ${row.addon.renders} after a change)\n`,
    );
  }
  return rows;
}

const fmt = (ms) => (ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3));
const ratio = (a, b) => `${(a / b).toFixed(2)}x`;

function markdown(rows, meta) {
  const out = [START, '## In real pi', ''];
  out.push(
    `Written by \`node benches/real-pi.js${meta.argv.length ? ` ${meta.argv.join(' ')}` : ''}\` on ${meta.date}; pi ${PI_PKG.version} on ${meta.nodeVersion}; ` +
      `${meta.cpus}; load average at the start ${meta.loadStart}, at the end ${meta.loadEnd}; code ${meta.commit}. The run took ${meta.seconds} s.`,
  );
  out.push('');
  out.push(
    "Per model call, median ms of the whole `context` handler chain (every extension's handler and pi's work between them) over " +
      `${meta.prompts * 4 - 1} renders x ${meta.rounds} interleaved rounds per size, the first render after \`pi --session\` opened the session apart; ` +
      "own = condense-native installed with CONDENSE_NATIVE=off (pi-condense's own render), addon = condense-native rendering; own/addon above 1 is faster. " +
      '"p90": the 90th percentile of the same renders (those after a flush or a new chain ask the indexer more). ' +
      "\"pi before send\" is pi's whole work per call before the request goes out (turn_start to the provider's call: its clone of the context, the chain, the conversion to the payload), addon. " +
      'Sessions: built by pi-condense alone in pi (fixtures/pi-extension/faux-model.js, every batch summarized), cut before a prompt; ' +
      '"messages" is what the first render after opening saw (pi\'s context: the session\'s messages and pi-condense\'s summary messages). ' +
      'Every request the model received was compared, own against addon, byte for byte.',
  );
  out.push('');
  out.push('| runtime | release | messages | own | addon | own/addon | p90: own | p90: addon | own/addon | first: own | first: addon | own/addon | pi before send | mismatching rounds |');
  out.push('|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of rows) {
    out.push(
      `| ${r.node} | ${r.release} | ${r.messages.toLocaleString('en-US')} | ${fmt(r.own.render)} | ${fmt(r.addon.render)} | ${ratio(r.own.render, r.addon.render)} | ` +
        `${fmt(r.own.p90)} | ${fmt(r.addon.p90)} | ${ratio(r.own.p90, r.addon.p90)} | ` +
        `${fmt(r.own.first)} | ${fmt(r.addon.first)} | ${ratio(r.own.first, r.addon.first)} | ${fmt(r.addon.send)} | ${r.mismatches} of ${r.rounds} |`,
    );
  }
  out.push('');
  out.push(
    'The same renders split: "after a change" are those after pi-condense wrote what its render reads (records, a summary, a chain, its frontier: a flush, ' +
      'at the end of every prompt and when the context jumps), "quiet" the others. Median ms of the whole chain, and of the render alone as condense-native\'s own timer takes it ' +
      "(the `pruneMessages` call: pi-condense's own function, or the addon).",
  );
  out.push('');
  out.push('| runtime | release | messages | after a change | chain: own, quiet | own, after | addon, quiet | addon, after | render: own, quiet | own, after | addon, quiet | addon, after |');
  out.push('|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const r of rows) {
    out.push(
      `| ${r.node} | ${r.release} | ${r.messages.toLocaleString('en-US')} | ${r.addon.after.renders} of ${r.addon.renders} | ` +
        `${fmt(r.own.quiet.chain)} | ${fmt(r.own.after.chain)} | ${fmt(r.addon.quiet.chain)} | ${fmt(r.addon.after.chain)} | ` +
        `${fmt(r.own.quiet.render)} | ${fmt(r.own.after.render)} | ${fmt(r.addon.quiet.render)} | ${fmt(r.addon.after.render)} |`,
    );
  }
  if (rows.some((r) => r.gated)) {
    out.push('');
    out.push(
      "With `--gate`, a third run per round with `condenseNative.gate` on (docs/GATE.md; the faux model priced as Sonnet): per model call after the first, median ms of the chain, of condense-native's render (the gate included) and of the gate's choice alone, " +
        "and the median of the gate's share of each render.",
    );
    out.push('');
    out.push('| runtime | release | messages | chain, gated | render, gated | gate | gate share of the render |');
    out.push('|---|---|--:|--:|--:|--:|--:|');
    for (const r of rows.filter((x) => x.gated)) {
      out.push(`| ${r.node} | ${r.release} | ${r.messages.toLocaleString('en-US')} | ${fmt(r.gated.chain)} | ${fmt(r.gated.render)} | ${fmt(r.gated.gate)} | ${(r.gated.share * 100).toFixed(1)}% |`);
    }
  }
  out.push(END);
  return out.join('\n');
}

function writeSection(file, section) {
  const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const a = old.indexOf(START);
  const b = old.indexOf(END);
  const next = a >= 0 && b > a ? `${old.slice(0, a)}${section}${old.slice(b + END.length)}` : `${old.trimEnd()}${old ? '\n\n' : ''}${section}\n`;
  fs.writeFileSync(file, next);
}

function main() {
  const argv = process.argv.slice(2);
  const opts = parseArgs(argv);
  const nodes = opts.node.split(',').map((which) => {
    const binary = nodeBinary(which.trim());
    if (which.trim() === 'pi-binary') {
      const bun = execFileSync(path.join(ROOT, 'node_modules', '.bin', 'bun'), ['--version'], { encoding: 'utf8' }).trim();
      return { binary: null, piBinary: binary, version: `pi's binary (Bun ${bun})` };
    }
    const version = execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim().replace(/^v/, '');
    if (!meetsPi(version)) usage(`Node ${version} is below pi's engines (${PI_PKG.engines.node}): --node 22, 24 or pi-binary`);
    return { binary, version: `Node ${version}` };
  });
  const started = Date.now();
  const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' / ');
  const loadStart = load();
  const ws = makeWorkspace('condense-bench-real-pi-');
  // The size from which the addon renders (CONDENSE_NATIVE_MIN_MESSAGES,
  // else the extension's crossover for the release).
  const crossover = (release) => (opts.minMessages !== undefined ? Number(opts.minMessages) : CROSSOVER[release.split('.').slice(0, 2).join('.')]);
  const ctx = { work: ws.work, node: null, cwd: null, minMessages: opts.minMessages, crossover };
  fs.mkdirSync(opts.cache, { recursive: true });
  ctx.cache = opts.cache;
  ctx.cwd = project(opts.cache, 0);
  const agents = Object.fromEntries(opts.releases.map((release) => [release, ws.installAgent(release)]));
  const rows = [];
  for (const node of nodes) {
    ctx.node = node.binary;
    ctx.piBinary = node.piBinary || null;
    ctx.nodeVersion = node.version;
    for (const release of opts.releases) {
      for (const row of benchRelease(ctx, opts, release, agents[release])) rows.push({ ...row, node: node.version });
    }
  }
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {}
  const cpus = os.cpus();
  const md = markdown(rows, {
    argv,
    date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
    nodeVersion: nodes.map((n) => n.version).join(', '),
    cpus: `${cpus.length} logical cores (${cpus[0] ? cpus[0].model.trim() : 'unknown CPU'})`,
    loadStart,
    loadEnd: load(),
    commit,
    seconds: ((Date.now() - started) / 1000).toFixed(0),
    prompts: opts.prompts,
    rounds: opts.rounds,
  });
  process.stdout.write(`${md}\n`);
  if (opts.write) {
    writeSection(opts.out, md);
    process.stderr.write(`written: ${opts.out}\n`);
  }
  const bad = rows.filter((r) => r.mismatches > 0);
  if (bad.length > 0) {
    process.stderr.write(`real-pi bench: requests differ between own and addon in ${bad.map((r) => `${r.release}/${r.messages}`).join(', ')}\n`);
    process.exitCode = 1;
  }
}

main();
