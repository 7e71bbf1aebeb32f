'use strict';

// `condense-native replay [session.jsonl | dir]...`: replays pi session
// files and reports what each pruning policy sends and what it costs in
// prompt-cache writes (the contract of ripgrep, STYLE.md 9): results on
// stdout, errors on stderr prefixed "condense-native:" and naming the file
// and line, the run going on past a bad file, progress only on a terminal
// and never with --json, a broken pipe ending the run quietly, and the
// exit status of the help text below.

const fs = require('node:fs');
const path = require('node:path');

const { FLAGS, parseArgs, resolve } = require('./flags.js');
const { fileTable, rendersTable } = require('./table.js');
const { svgOf } = require('./svg.js');
const { makeProgress } = require('./progress.js');

const NAME = 'condense-native';
const SAMPLE = path.join(__dirname, '..', '..', 'sample', 'session.jsonl');

const EXIT = { OK: 0, FOUND: 1, ERROR: 2 };

function helpText() {
  const flags = FLAGS.map((f) => {
    const names = [f.short, f.name].filter(Boolean).join(', ') + (f.value ? ` ${f.value}` : '');
    return `  ${names}\n      ${f.help}`;
  }).join('\n');
  return `Usage: ${NAME} replay [FLAGS] [session.jsonl | DIR]...
       ${NAME} tune [FLAGS] [session.jsonl | DIR]...

Replays every model call of each pi session file (a directory: every *.jsonl
under it; no path: the bundled sample session) as pi-condense would have
rendered it, under each pruning policy, and prints what each policy sends
and what it costs with a provider that caches the prompt prefix.

tune replays the files under a grid of pi-condense's render-time settings
(both releases, chain compression, error purge, recovery grace, the 2.4.3
thinking strip, and no pruning), prices each as the provider bills it, and
recommends the cheapest with its saving over your current settings
(--config, --release) and the contextPrune block to paste into pi's
settings.json; with several sessions the choice is made on half of them and
checked on the other half.

Policies: none (no pruning), config (pi-condense 2.4.3 with the config and
the flush-gated thinking boundary), no-thinking-strip, live-thinking-strip
(the keep-window counted at every render, as before the flush-gated fix),
2.9.1 (pi-condense 2.9.1).

Flags:
${flags}

Exit status:
  0  every file was replayed and the flush-gated invariant held under
     every flush-gated policy (all but live-thinking-strip);
  1  every file was replayed, and some render of a flush-gated policy
     changed history between two flushes (listed in the report);
  2  a usage error, or some file could not be replayed (each named on
     stderr with its line; the other files are still replayed).

--json prints one JSON document:
  {"files": [{"file", "modelCalls", "cost", "policies": [...]}
             | {"file", "error": {"code", "message", "line"}}],
   "summary": {"files", "failed", "modelCalls", "invariantBroken",
               "elapsedMs"}}
where each policy object is replay()'s (README, "Replay"): policy, config,
charsSent, inputTokens, cacheWriteTokens, cacheReadTokens, cacheWriteChars,
cacheReadChars, cost, costVsNone, invariant {flushGated, checked, broken,
violations}, and with --renders a renders array (charsBefore, charsAfter,
breakIndex, cacheReadChars, cacheWriteChars, prefixHash, ...).`;
}

/** Session files named by the arguments, directories walked (sorted). */
function sessionFiles(paths, report) {
  const out = [];
  const walk = (dir) => {
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      report(dir, { code: 'ERR_CONDENSE_IO', message: `cannot read the directory: ${e.code || e.message}` });
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && e.name.endsWith('.jsonl')) out.push(p);
    }
  };
  for (const p of paths) {
    let stat = null;
    try {
      stat = fs.statSync(p);
    } catch {
      stat = null;
    }
    if (stat && stat.isDirectory()) walk(p);
    else out.push(p);
  }
  return out;
}

/** Writes to stdout; a closed pipe ends the run quietly with status 0. */
function makeStdout(stdout) {
  let closed = false;
  stdout.on('error', (e) => {
    if (e.code === 'EPIPE') {
      closed = true;
      process.exit(EXIT.OK);
    }
    throw e;
  });
  return (text) => {
    if (!closed) stdout.write(text);
  };
}

async function main(argv, io = { stdout: process.stdout, stderr: process.stderr }) {
  if (argv[0] === 'pi-setup') return require('./pi-setup.js').piSetupMain(argv.slice(1), io);
  const started = process.hrtime.bigint();
  const errorLine = (text) => io.stderr.write(`${NAME}: ${text}\n`);
  let run;
  try {
    run = resolve(parseArgs(argv));
  } catch (e) {
    if (!e.usage) throw e;
    errorLine(`error: ${e.message}`);
    errorLine(`try '${NAME} replay --help'`);
    return EXIT.ERROR;
  }
  const out = makeStdout(io.stdout);
  if (run.help) {
    out(`${helpText()}\n`);
    return EXIT.OK;
  }
  if (run.version) {
    out(`${NAME} ${require('../../package.json').version}\n`);
    return EXIT.OK;
  }
  if (run.command === 'tune') {
    return require('./tune.js').tuneMain(run, { out, errorLine, stderr: io.stderr, sample: SAMPLE, EXIT });
  }
  const { replayAsync } = require('../../index.js');
  const failures = [];
  const fail = (file, { code, message, line }) => {
    failures.push({ file, error: { code, message, line: line ?? null } });
    errorLine(`${line ? `${file}:${line}` : file}: ${message}`);
  };
  const files = run.paths.length ? sessionFiles(run.paths, fail) : [SAMPLE];
  // Files are named as given; the default sample relative to the cwd.
  const display = (f) => (run.paths.length ? f : path.relative(process.cwd(), SAMPLE) || SAMPLE);
  const progress = !run.json && io.stderr.isTTY ? makeProgress(io.stderr) : null;
  const results = [];
  let broken = 0;
  let calls = 0;
  for (const [i, file] of files.entries()) {
    const name = display(file);
    try {
      const onProgress = progress ? (done, total) => progress.update(i, files.length, name, done, total) : null;
      if (progress) progress.update(i, files.length, name, 0, 0);
      const result = await replayAsync(file, { ...run.replayOptions, onProgress });
      if (progress) progress.clear();
      results.push({ file: name, result });
      calls += result.modelCalls;
      broken += result.policies.filter((p) => p.invariant.flushGated && p.invariant.broken > 0).length;
      if (!run.json) {
        out(`${results.length > 1 ? '\n' : ''}${fileTable(name, result)}\n`);
        if (run.renders) out(`\n${rendersTable(result)}\n`);
      }
    } catch (e) {
      if (progress) progress.clear();
      if (typeof e.code !== 'string' || !e.code.startsWith('ERR_CONDENSE_')) throw e;
      // The API's message starts with the file (and line) it names.
      const prefix = e.line ? `${file}:${e.line}: ` : `${file}: `;
      const message = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
      fail(name, { code: e.code, message, line: e.line });
    }
  }
  if (run.svg !== null) {
    try {
      fs.writeFileSync(run.svg, svgOf(results));
    } catch (e) {
      errorLine(`${run.svg}: cannot write the SVG (${e.code || e.message})`);
      failures.push({ file: run.svg, error: { code: 'ERR_CONDENSE_IO', message: e.message, line: null } });
    }
  }
  if (run.json) {
    const doc = {
      files: [
        ...results.map(({ file, result }) => ({ file, ...result })),
        ...failures.map(({ file, error }) => ({ file, error })),
      ],
      summary: {
        files: results.length + failures.length,
        failed: failures.length,
        modelCalls: calls,
        invariantBroken: broken,
        elapsedMs: Number(process.hrtime.bigint() - started) / 1e6,
      },
    };
    out(`${JSON.stringify(doc)}\n`);
  }
  if (failures.length > 0) return EXIT.ERROR;
  return broken > 0 ? EXIT.FOUND : EXIT.OK;
}

module.exports = { main, helpText, EXIT };
