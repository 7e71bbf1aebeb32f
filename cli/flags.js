'use strict';

// The CLI's flags, each defined once with its help text and the commands it
// belongs to, read in two steps as ripgrep does (flags/lowargs.rs,
// flags/hiargs.rs): `parseArgs` reads the argument list raw (no file is
// touched), `resolve` checks every value and every combination and reads
// --config, so a usage error is found before any session file is read and
// is printed once. A usage error is an Error with `usage = true` (and the
// command, for the "try --help" line), which the CLI reports with exit 2.

const fs = require('node:fs');

// The library's own lists and checks, which its public API applies inside
// replay() and tune() but does not export: the CLI checks each flag with
// the same rules before any session file is read.
const { POLICIES, GATED, RELEASES } = require('../js/replay.js');
const { configProblems } = require('../js/settings-check.js');
const { loadCatalog } = require('../js/catalog.js');

const COMMANDS = ['replay', 'tune'];
const BOTH = COMMANDS;

function usageError(message, command = null) {
  const err = new Error(message);
  err.usage = true;
  err.command = command;
  return err;
}

function choice(flag, allowed) {
  return (o, v) => {
    if (!allowed.includes(v)) throw usageError(`${flag} takes ${allowed.length > 1 ? `${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}` : allowed[0]}, not '${v}'`, o.command);
    return v;
  };
}

function nonNegative(flag, positive = false) {
  return (o, text) => {
    const n = Number(text);
    if (text === '' || !Number.isFinite(n) || n < 0 || (positive && n === 0)) {
      throw usageError(`${flag} takes a ${positive ? 'positive' : 'non-negative'} number, not '${text}'`, o.command);
    }
    return n;
  };
}

// What the prefix rule alone reads: under the provider model, prices come
// from pi-ai's catalog and lifetimes from the provider's rules.
const PREFIX_ONLY = "the prefix rule's; the provider model (the default) takes prices from pi-ai's catalog and the cache lifetime from the provider's rules: add --cache-model prefix, or leave it out";

// name, value placeholder (absent for switches), the commands it belongs
// to, help, how a value is read (`read`) and where it goes (`key`).
const FLAGS = [
  { name: '--json', commands: BOTH, help: 'Print one JSON document on stdout instead of the tables (with --help: the fields of that document, with their units). No progress bar.', key: 'json' },
  { name: '--per-file', commands: ['replay'], help: 'With several files: a table per file after the totals (--json always has both).', key: 'perFile' },
  { name: '--renders', commands: ['replay'], help: 'Include every model call: a row per call in each file table, `renders` arrays in --json.', key: 'renders' },
  { name: '--policy', value: 'NAME[,NAME]', commands: ['replay'], help: `Policies to compare (repeatable): ${POLICIES.join(', ')}; or a release behind the cache-aware gate: ${GATED.join(', ')} (docs/GATE.md). Default: the first five. none is always replayed (costs are relative to it).`, key: 'policies', read: (o, v) => [...o.policies, ...v.split(',').filter(Boolean).map((p) => choice('--policy', [...POLICIES, ...GATED])(o, p))] },
  { name: '--contexts', value: 'DIR', commands: ['replay'], help: "Write what each policy sent, a line per model call {k, timestamp, model, gate (on +gate policies), messages} to DIR/<policy>.jsonl, streamed: the arrays the context handler hands back to pi, for pricing them independently. With several files, DIR/<file>/<policy>.jsonl, <file> being the file's path under the folder the files share, without .jsonl. DIR may not be, hold or lie inside a session file or directory of the run; existing files there are not replaced without --force.", key: 'contexts' },
  { name: '--gate', value: 'FILE|JSON', commands: BOTH, help: "The cache-aware gate's settings for the +gate policies (tune: for every configuration's gated twin), as pi's condenseNative.gate takes them: {\"horizon\": \"auto\" or calls, \"budget\": share of the context window}, inline or in a file (default: horizon auto, budget 0.8). tune with {\"enabled\": false} ranks no configuration behind the gate.", key: 'gate' },
  { name: '--config', value: 'FILE', commands: BOTH, help: "pi-condense's settings as JSON: a pi settings file (its contextPrune block is read), that block alone, or a render config. Default: the contextPrune block of pi's settings.json in the agent directory ($PI_CODING_AGENT_DIR, else ~/.pi/agent), as pi-condense reads it; without one, the release's defaults.", key: 'config' },
  { name: '--release', value: '2.4.3|2.9.1', commands: BOTH, help: 'The pi-condense release you run (its row is marked "(yours)"; tune compares against it). Default: the pi-condense pi would load (from the packages of pi\'s settings), else 2.4.3.', key: 'release', read: choice('--release', RELEASES) },
  { name: '--thinking-boundary', value: 'auto|recorded|config', commands: BOTH, help: "Where pi-condense 2.4.3's thinking boundary comes from. auto (default): the boundary the config computes at each flush, which is the one the session recorded when its frontier entries were written under that config (each row says which); recorded: the session's frontier entries; config: the config's own.", key: 'thinkingBoundary', read: choice('--thinking-boundary', ['auto', 'recorded', 'config']) },
  { name: '--cache-model', value: 'provider|prefix', commands: BOTH, help: "provider (default): each call priced as its provider bills it (breakpoints, lookback, lifetime, pi-ai's catalog prices); prefix: every message before the first changed one is read (no provider works so; kept for comparison).", key: 'cacheModel', read: choice('--cache-model', ['provider', 'prefix']) },
  { name: '--retention', value: 'short|long', commands: BOTH, help: "pi's cache retention (PI_CACHE_RETENTION): short (5 min, default) or long (1 h).", key: 'retention', read: choice('--retention', ['short', 'long']) },
  { name: '--model', value: 'PROVIDER/ID', commands: BOTH, help: "Price every call as if this model answered it (a model of pi-ai's catalog). Default: the model the session recorded per call.", key: 'model' },
  { name: '--recorded-policy', value: 'NAME', commands: ['replay'], help: 'The policy in force when the session was recorded; its calls are checked against the usage pi recorded (default none).', key: 'recordedPolicy', read: choice('--recorded-policy', POLICIES) },
  { name: '--chars-per-token', value: 'N', commands: BOTH, help: 'Characters per token, fixed (default: calibrated per model from the usage the session recorded, else 4).', key: 'charsPerToken', read: nonNegative('--chars-per-token', true) },
  { name: '--input-price', value: 'N', commands: BOTH, prefixOnly: true, help: 'Prefix rule only: the price of one input token (default 1).', key: 'inputPrice', read: nonNegative('--input-price') },
  { name: '--cache-write', value: 'X', commands: BOTH, prefixOnly: true, help: 'Prefix rule only: the cache-write price as a multiple of the input price (default 1.25).', key: 'cacheWriteMultiplier', read: nonNegative('--cache-write') },
  { name: '--cache-read', value: 'X', commands: BOTH, prefixOnly: true, help: 'Prefix rule only: the cache-read price as a multiple of the input price (default 0.1).', key: 'cacheReadMultiplier', read: nonNegative('--cache-read') },
  { name: '--cache-ttl', value: 'SECONDS', commands: BOTH, prefixOnly: true, help: 'Prefix rule only: the cache lifetime; a longer gap makes the next call a full write (default 300).', key: 'cacheTtlSeconds', read: nonNegative('--cache-ttl') },
  { name: '--svg', value: 'FILE', commands: BOTH, help: 'Write an SVG chart (replay: cumulative USD and context size per call, per policy; tune: USD against chars sent). Never over a file being replayed, nor over an existing file that is not an SVG of condense-native\'s without --force.', key: 'svg' },
  { name: '--force', commands: BOTH, help: 'Let --svg and --contexts replace existing files that condense-native did not write (never a session file of the run).', key: 'force' },
  { name: '--help', short: '-h', commands: BOTH, help: 'Show this help (with --json: the fields of the JSON document).', key: 'help' },
  { name: '--version', short: '-V', commands: BOTH, help: 'Show the version.', key: 'version' },
];

/** Reads the arguments, without touching files. */
function parseArgs(argv) {
  const o = { command: null, paths: [], policies: [], given: [] };
  let rest = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (rest || !arg.startsWith('-') || arg === '-') {
      if (o.command === null && !rest) o.command = arg;
      else o.paths.push(arg);
      continue;
    }
    if (arg === '--') {
      rest = true;
      if (o.command === null) o.command = 'replay';
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const flag = FLAGS.find((f) => f.name === name || f.short === name);
    if (!flag) throw usageError(`unknown flag ${name}`, o.command);
    o.given.push(flag);
    if (flag.value === undefined) {
      if (eq > 0) throw usageError(`${flag.name} takes no value`, o.command);
      o[flag.key] = true;
      continue;
    }
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || value === '') throw usageError(`${flag.name} needs a value (${flag.value})`, o.command);
    o[flag.key] = flag.read ? flag.read(o, value) : value;
  }
  return o;
}

/**
 * The JSON of a flag's value: the file it names, or (`inline`) the value
 * itself when it is a JSON object. `unreadable` says what a file that
 * cannot be read is.
 */
function readJson(flag, value, command, { inline = false, unreadable = 'cannot read it' } = {}) {
  let text = value;
  if (!inline || !value.trimStart().startsWith('{')) {
    try {
      text = fs.readFileSync(value, 'utf8');
    } catch (e) {
      throw usageError(`${flag} ${value}: ${unreadable} (${e.code || e.message})`, command);
    }
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw usageError(`${flag} ${value}: not JSON (${e.message})`, command);
  }
}

/** A --config file, read and checked. */
function readConfig(file, command) {
  const config = readJson('--config', file, command);
  const problems = configProblems(config);
  if (problems.length > 0) throw usageError(`--config ${file}: ${problems.join('; ')}`, command);
  return config;
}

/** --gate: inline JSON or a file, checked by the gate's own rules. */
function readGate(value, policies, command) {
  if (command === 'replay' && !policies.some((p) => GATED.includes(p))) {
    throw usageError(`--gate sets the gate of the +gate policies: add --policy ${GATED.join(' or --policy ')}`, command);
  }
  const settings = readJson('--gate', value, command, { inline: true, unreadable: 'neither a JSON object nor a file it can read' });
  let checked;
  try {
    checked = require('..').gateSettings(settings, '--gate');
  } catch (e) {
    throw usageError(e.message, command);
  }
  if (command === 'replay' && checked.enabled === false) {
    throw usageError(`--gate ${value} switches the gate off, yet --policy asks for ${policies.filter((p) => GATED.includes(p)).join(', ')}: leave out one or the other`, command);
  }
  return checked;
}

/** Checks the parsed flags and their combination; returns the run. */
function resolve(o) {
  if (o.command === null) o.command = 'replay';
  if (o.help || o.version) return o;
  if (!COMMANDS.includes(o.command)) throw usageError(`unknown command '${o.command}' (the commands are ${COMMANDS.join(', ')} and pi-setup)`, null);
  const command = o.command;
  for (const flag of new Set(o.given)) {
    if (!flag.commands.includes(command)) {
      const why =
        command === 'tune'
          ? { '--policy': 'tune ranks its own grid of configurations', '--renders': 'tune reports totals per configuration', '--per-file': 'tune reports per file in its own table', '--recorded-policy': 'tune checks the recorded usage as none' }[flag.name]
          : null;
      throw usageError(`${command} takes no ${flag.name}${why ? ` (${why})` : ''}`, command);
    }
    if (flag.prefixOnly && o.cacheModel !== 'prefix') throw usageError(`${flag.name} is ${PREFIX_ONLY}`, command);
  }
  if (o.model !== undefined) {
    if (!/^[^/]+\/.+$/.test(o.model)) throw usageError(`--model takes PROVIDER/ID (e.g. anthropic/claude-sonnet-4-5), not '${o.model}'`, command);
    const catalog = loadCatalog();
    const known = Object.keys(catalog);
    if (known.length > 0 && !catalog[o.model]) {
      const provider = o.model.split('/')[0];
      const same = known.filter((k) => k.startsWith(`${provider}/`));
      const hint = same.length ? `${provider}'s: ${same.slice(0, 6).join(', ')}${same.length > 6 ? ', ...' : ''}` : `providers: ${[...new Set(known.map((k) => k.split('/')[0]))].slice(0, 12).join(', ')}`;
      throw usageError(`--model ${o.model} is not in pi-ai's catalog (${hint})`, command);
    }
  }
  const config = o.config !== undefined ? readConfig(o.config, command) : undefined;
  const gate = o.gate !== undefined ? readGate(o.gate, o.policies, command) : undefined;
  const cost = {};
  for (const key of ['cacheModel', 'retention', 'model', 'recordedPolicy', 'charsPerToken', 'inputPrice', 'cacheWriteMultiplier', 'cacheReadMultiplier', 'cacheTtlSeconds', 'thinkingBoundary']) {
    if (o[key] !== undefined) cost[key] = o[key];
  }
  if (gate !== undefined) cost.gate = gate;
  return {
    command,
    paths: o.paths,
    json: o.json === true,
    perFile: o.perFile === true,
    renders: o.renders === true,
    svg: o.svg ?? null,
    contexts: o.contexts ?? null,
    force: o.force === true,
    configFile: o.config ?? null,
    config,
    release: o.release ?? null,
    policies: o.policies.length ? [...new Set(o.policies)] : null,
    options: cost,
  };
}

module.exports = { FLAGS, parseArgs, resolve };
