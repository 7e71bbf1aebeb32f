'use strict';

// The `condense-native` command: `replay` (does pruning save me money?),
// `tune` (which settings should I run?) and `pi-setup`. This file holds the
// contract every command keeps, ripgrep's (STYLE.md 9): every usage error
// found before any session file is read and printed once, naming the flag,
// the value and what is allowed; results on stdout, errors and warnings on
// stderr prefixed "condense-native:", a bad file named with its line and
// the run going on past it; progress only on a terminal and never with
// --json; a broken pipe ending the run quietly; the exit status of each
// command's help. What runs is settled here once for both commands: the
// settings and release (yours, or the flags'), the session files, and the
// files --svg and --contexts write (outputs.js).

const fs = require('node:fs');
const path = require('node:path');

const { parseArgs, resolve } = require('./flags.js');
const { helpText, jsonHelp } = require('./help.js');
// The library's internals the public API does not export: how paths name
// session files (tune() expands them the same way), the checks of a
// settings file, and the policies a replay runs.
const { sessionFiles } = require('../js/session-files.js');
const { piSettingsWithoutBlock, unknownKeys } = require('../js/settings-check.js');
const { POLICIES } = require('../js/replay.js');
const { compactionOf, cacheWarmingOf, piKeyProblems, findUserSettings, findRelease, shown } = require('./user-settings.js');
const { refusal, contextsRefusal, contextsDirs } = require('./outputs.js');

const NAME = 'condense-native';
const SAMPLE = path.join(__dirname, '..', 'sample', 'session.jsonl');
// The first line of every SVG condense-native writes (svg.js, tune.js), by
// which --svg knows a file it may replace.
const SVG_MARK = '<!-- written by condense-native -->';

const EXIT = { OK: 0, FOUND: 1, ERROR: 2 };

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

/**
 * The settings and release a run renders "yours" with, where each came
 * from, and the settings file they came from (`file`, with whether it
 * `exists`): --config's, else the one pi-condense reads.
 */
function settingsOf(run) {
  const notes = [];
  let config;
  let source;
  let file;
  let exists = true;
  let enabled = null;
  let compaction = null;
  let cacheWarming = null;
  if (run.config !== undefined) {
    config = run.config;
    compaction = compactionOf(config);
    cacheWarming = cacheWarmingOf(config);
    const problems = piKeyProblems(config);
    if (problems.length > 0) {
      const err = new Error(`--config ${run.configFile}: ${problems.join('; ')}`);
      err.usage = true;
      throw err;
    }
    source = `--config ${run.configFile}`;
    file = path.resolve(run.configFile);
    if (piSettingsWithoutBlock(config)) {
      notes.push(`--config ${run.configFile} has no contextPrune block: pi-condense's defaults`);
    }
    notes.push(...unknownKeys(config).map((line) => `--config ${run.configFile}: ${line}`));
  } else {
    const found = findUserSettings();
    ({ config, source, file, exists, enabled, compaction, cacheWarming } = found);
    notes.push(...found.notes);
  }
  const release = run.release ? { release: run.release, source: `--release ${run.release}`, installed: null } : findRelease();
  return { config, source, file, exists, enabled, compaction, cacheWarming, release: release.release, releaseSource: release.source, installed: release.installed, notes };
}

/** Whether `file` starts as an SVG condense-native wrote (its mark in the first bytes). */
function svgOfOurs(file) {
  try {
    const fd = fs.openSync(file, 'r');
    const buf = Buffer.alloc(256);
    const n = fs.readSync(fd, buf, 0, 256, 0);
    fs.closeSync(fd);
    return buf.subarray(0, n).toString('utf8').includes(SVG_MARK);
  } catch {
    return false;
  }
}

/** The first reason the run may not write what its flags ask for (outputs.js), or null. */
function outputRefusal(run, files) {
  const isDir = (p) => {
    try {
      return fs.statSync(p).isDirectory();
    } catch {
      return false;
    }
  };
  const dirs = run.paths.filter(isDir);
  const inputs = { files, dirs };
  if (run.svg !== null) {
    const refused = refusal('--svg', [run.svg], inputs, { force: run.force, isOurs: svgOfOurs, ours: 'SVG' });
    if (refused) return refused;
  }
  if (run.contexts !== null) {
    const policies = [...new Set(['none', ...(run.policies ?? POLICIES)])];
    const targets = [...contextsDirs(run.contexts, files).values()].flatMap((d) => policies.map((p) => path.join(d, `${p}.jsonl`)));
    const refused = contextsRefusal(run.contexts, targets, inputs, run.force);
    if (refused) return refused;
  }
  return null;
}

async function main(argv, io = { stdout: process.stdout, stderr: process.stderr }) {
  if (argv[0] === 'pi-setup') return require('./pi-setup.js').piSetupMain(argv.slice(1), io);
  // The API names its call in an argument error (`replayAsync: ...`), which
  // the CLI's user never made: such a name is left out of what is printed.
  const errorLine = (text) => io.stderr.write(`${NAME}: ${text.replace(/(^|: )(replayAsync|tuneAsync): /g, '$1')}\n`);
  const usage = (message, command) => {
    errorLine(`error: ${message}`);
    errorLine(`try '${NAME} ${command ?? 'replay'} --help'`);
    return EXIT.ERROR;
  };
  let run;
  try {
    run = resolve(parseArgs(argv));
  } catch (e) {
    if (!e.usage) throw e;
    return usage(e.message, e.command);
  }
  const out = makeStdout(io.stdout);
  if (run.help) {
    out(`${run.json ? jsonHelp(run.command) : helpText(run.command)}\n`);
    return EXIT.OK;
  }
  if (run.version) {
    out(`${NAME} ${require('../package.json').version}\n`);
    return EXIT.OK;
  }
  let settings;
  try {
    settings = settingsOf(run);
  } catch (e) {
    if (!e.usage) throw e;
    return usage(e.message, run.command);
  }
  const { files, problems, notes } = run.paths.length ? sessionFiles(run.paths) : { files: [SAMPLE], problems: [], notes: [] };
  const refused = outputRefusal(run, files);
  if (refused) return usage(refused, run.command);
  for (const p of problems) errorLine(`${p.path}: ${p.message}`);
  for (const note of settings.notes) errorLine(`warning: ${note}`);
  for (const n of notes) errorLine(`warning: ${n.path}: ${n.message}`);
  const errors = problems.map((p) => ({ file: p.path, error: { code: 'ERR_CONDENSE_IO', message: p.message, line: null } }));
  if (files.length === 0) {
    if (run.json) out(`${JSON.stringify({ errors })}\n`);
    return EXIT.ERROR;
  }
  const ctx = { out, errorLine, stderr: io.stderr, EXIT, settings, files, errors, sample: SAMPLE, svgMark: SVG_MARK, shown };
  if (run.command === 'tune') return require('./tune.js').tuneMain(run, ctx);
  return require('./replay.js').replayMain(run, ctx);
}

module.exports = { main };
