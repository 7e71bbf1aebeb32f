'use strict';

// The replay CLI's flags, each defined once with its help text, read in two
// steps as ripgrep does (flags/lowargs.rs, flags/hiargs.rs): `parseArgs`
// reads the argument list raw (no file is touched), `resolve` checks the
// values and builds the options of a run (reading --config). A usage error
// is an Error with `usage = true`, which the CLI reports with exit code 2.

const fs = require('node:fs');

const POLICIES = ['none', 'config', 'no-thinking-strip', 'live-thinking-strip', '2.9.1'];

function usageError(message) {
  const err = new Error(message);
  err.usage = true;
  return err;
}

function nonNegative(name, text, positive = false) {
  const n = Number(text);
  if (text === undefined || text === '' || !Number.isFinite(n) || n < 0 || (positive && n === 0)) {
    throw usageError(`${name} takes a ${positive ? 'positive' : 'non-negative'} number, not '${text ?? ''}'`);
  }
  return n;
}

// name, value placeholder (absent for switches), help, and what it sets.
const FLAGS = [
  { name: '--json', help: 'Print one JSON document on stdout instead of the table (format below). No progress bar.', set: (o) => { o.json = true; } },
  { name: '--renders', help: 'Include every render: per-render rows in the table, `renders` arrays in --json.', set: (o) => { o.renders = true; } },
  { name: '--svg', value: 'FILE', help: 'Write an SVG chart: context size per model call before pruning and after, one series per policy, cache-write spikes marked.', set: (o, v) => { o.svg = v; } },
  { name: '--config', value: 'FILE', help: "pi-condense's config as JSON: pi's settings file (its contextPrune block is read), that block alone, or a render config. Default: the release's documented defaults.", set: (o, v) => { o.config = v; } },
  { name: '--policy', value: 'NAME[,NAME]', help: `Policies to compare (repeatable): ${POLICIES.join(', ')}. Default: all. none is always replayed (costs are relative to it).`, set: (o, v) => { o.policies.push(...v.split(',').filter(Boolean)); } },
  { name: '--cache-model', value: 'NAME', help: "provider (default): each call priced by its provider's cache rules (breakpoints, lookback, lifetime, catalog prices); prefix: every message before the first changed one is read (no provider works so).", set: (o, v) => { o.cost.cacheModel = v; } },
  { name: '--retention', value: 'short|long', help: "pi's cache retention (PI_CACHE_RETENTION): short (5 min, default) or long (1 h).", set: (o, v) => { o.cost.retention = v; } },
  { name: '--model', value: 'PROVIDER/ID', help: "Price every call as if this model answered it (default: the model the session recorded per call).", set: (o, v) => { o.cost.model = v; } },
  { name: '--recorded-policy', value: 'NAME', help: 'The policy in force when the session was recorded; its calls are checked against the usage pi recorded (default none).', set: (o, v) => { o.cost.recordedPolicy = v; } },
  { name: '--chars-per-token', value: 'N', help: 'Characters per token, fixed (default: calibrated per model from the usage the session recorded, else 4).', set: (o, v) => { o.cost.charsPerToken = nonNegative('--chars-per-token', v, true); } },
  { name: '--input-price', value: 'N', help: 'Price of one input token; costs are in this unit (default 1).', set: (o, v) => { o.cost.inputPrice = nonNegative('--input-price', v); } },
  { name: '--cache-write', value: 'X', help: 'Cache-write price as a multiple of the input price (default 1.25).', set: (o, v) => { o.cost.cacheWriteMultiplier = nonNegative('--cache-write', v); } },
  { name: '--cache-read', value: 'X', help: 'Cache-read price as a multiple of the input price (default 0.1).', set: (o, v) => { o.cost.cacheReadMultiplier = nonNegative('--cache-read', v); } },
  { name: '--cache-ttl', value: 'SECONDS', help: 'Prompt-cache lifetime; a longer gap between model calls makes the next one a full write (default 300).', set: (o, v) => { o.cost.cacheTtlSeconds = nonNegative('--cache-ttl', v); } },
  { name: '--release', value: '2.4.3|2.9.1', help: 'tune: the pi-condense release you run now (default 2.4.3); with --config, your current settings.', set: (o, v) => { o.release = v; } },
  { name: '--help', short: '-h', help: 'Show this help.', set: (o) => { o.help = true; } },
  { name: '--version', short: '-V', help: 'Show the version.', set: (o) => { o.version = true; } },
];

/** Reads the arguments after the command name, without touching files. */
function parseArgs(argv) {
  const o = { command: null, paths: [], json: false, renders: false, svg: null, config: null, policies: [], cost: {}, help: false, version: false };
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
    if (!flag) throw usageError(`unknown flag ${name}`);
    if (flag.value === undefined) {
      if (eq > 0) throw usageError(`${flag.name} takes no value`);
      flag.set(o);
      continue;
    }
    let value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw usageError(`${flag.name} needs a value (${flag.value})`);
    flag.set(o, value);
  }
  return o;
}

/** Checks the parsed flags and reads --config; returns the run's settings. */
function resolve(o) {
  if (o.help || o.version) return o;
  if (o.command === null) o.command = 'replay';
  if (o.command !== 'replay' && o.command !== 'tune') throw usageError(`unknown command '${o.command}' (the commands are replay and tune)`);
  if (o.release !== undefined && !['2.4.3', '2.9.1'].includes(o.release)) throw usageError(`--release takes 2.4.3 or 2.9.1, not '${o.release}'`);
  for (const p of o.policies) {
    if (!POLICIES.includes(p)) throw usageError(`unknown policy '${p}' (known: ${POLICIES.join(', ')})`);
  }
  let config = null;
  if (o.config !== null) {
    let text;
    try {
      text = fs.readFileSync(o.config, 'utf8');
    } catch (e) {
      throw usageError(`--config ${o.config}: cannot read it (${e.code || e.message})`);
    }
    try {
      config = JSON.parse(text);
    } catch (e) {
      throw usageError(`--config ${o.config}: not JSON (${e.message})`);
    }
    if (config === null || typeof config !== 'object' || Array.isArray(config)) {
      throw usageError(`--config ${o.config}: must hold a JSON object`);
    }
  }
  return {
    ...o,
    replayOptions: {
      policies: o.policies.length ? [...new Set(o.policies)] : null,
      config,
      renders: o.renders || o.svg !== null,
      ...o.cost,
    },
  };
}

module.exports = { FLAGS, POLICIES, parseArgs, resolve, usageError };
