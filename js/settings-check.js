'use strict';

// The types of pi-condense's settings, checked before a replay or a tune
// renders with them. pi-condense itself never complains: its `normalize`
// (src/config.ts) puts a default in place of a top-level value of the wrong
// type and passes a nested section on as it is, so `"cooldownTurns": "two"`
// silently prunes on another schedule. A replay that did the same would
// answer for settings nobody runs, so a value of the wrong type is an error
// naming its key path, the type wanted and the value found. Keys this file
// does not know are pi-condense's other settings (summarizer, spill, ...),
// which the render does not read; they are left alone, and a key no
// release reads is a warning naming the nearest known one. The native side
// (src/replay/settings.rs) reads the same sections and trusts this check.

// The sections the render reads, as pi's settings.json spells them (the
// `contextPrune` block) and as the render config spells them (SPEC 2.3).
const NUMBER = 'a number >= 0';
const SECTIONS = {
  chainCompression: { enabled: 'boolean', rollingWindow: NUMBER, stripFinalAssistantThinking: 'boolean', fuseRangeSummary: 'boolean' },
  purgeErrors: { enabled: 'boolean', cooldownTurns: NUMBER, minArgChars: NUMBER },
  thinkingStrip: { enabled: 'boolean', keepLastTurns: NUMBER },
};
const BLOCK_SCALARS = {
  enabled: 'boolean',
  recoveryGraceTurns: NUMBER,
  protectedTools: 'an array of strings',
  protectedPaths: 'an array of strings',
};

function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array (${JSON.stringify(value).slice(0, 40)})`;
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)}`;
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

function fits(type, value) {
  if (type === 'boolean') return typeof value === 'boolean';
  if (type === NUMBER) return typeof value === 'number' && Number.isFinite(value) && value >= 0;
  if (type === 'an array of strings') return Array.isArray(value) && value.every((v) => typeof v === 'string');
  if (type === 'an object') return value !== null && typeof value === 'object' && !Array.isArray(value);
  return false;
}

/** Problems with `value` at `where` against `type`, appended to `out`. */
function check(where, type, value, out) {
  if (value === undefined) return;
  if (!fits(type, value)) out.push(`${where} must be ${type === 'boolean' ? 'a boolean' : type}, not ${describe(value)}`);
}

function checkSection(where, fields, value, out) {
  if (value === undefined) return;
  if (!fits('an object', value)) {
    out.push(`${where} must be an object, not ${describe(value)}`);
    return;
  }
  for (const [name, type] of Object.entries(fields)) check(`${where}.${name}`, type, value[name], out);
}

/**
 * The problems of a config in any of the shapes a replay takes (pi's
 * settings file, its `contextPrune` block, or a render config), each naming
 * its key path from `prefix` (e.g. `--config FILE: contextPrune.purgeErrors
 * .cooldownTurns must be a number >= 0, not the string "two"`). Empty when
 * the render can use it.
 */
function configProblems(config) {
  const out = [];
  if (!fits('an object', config)) return [`the config must be an object, not ${describe(config)}`];
  const render = config.errorPurge !== undefined || config.protection !== undefined;
  if (render) {
    checkSection('chainCompression', SECTIONS.chainCompression, config.chainCompression, out);
    checkSection('errorPurge', SECTIONS.purgeErrors, config.errorPurge, out);
    checkSection('thinkingStrip', SECTIONS.thinkingStrip, config.thinkingStrip, out);
    checkSection('protection', { protectedTools: BLOCK_SCALARS.protectedTools, protectedPaths: BLOCK_SCALARS.protectedPaths }, config.protection, out);
    check('recoveryGraceTurns', NUMBER, config.recoveryGraceTurns, out);
    return out;
  }
  const inSettings = config.contextPrune !== undefined;
  const block = inSettings ? config.contextPrune : config;
  const at = inSettings ? 'contextPrune.' : '';
  if (inSettings && !fits('an object', block)) return [`contextPrune must be an object, not ${describe(block)}`];
  for (const [name, fields] of Object.entries(SECTIONS)) checkSection(`${at}${name}`, fields, block[name], out);
  for (const [name, type] of Object.entries(BLOCK_SCALARS)) check(`${at}${name}`, type, block[name], out);
  return out;
}

// Every key of pi-condense's `contextPrune` block, both releases (their
// src/types.ts ContextPruneConfig; thinkingStrip is 2.4.x's), and of its
// sections: a key outside these is read by no release, so a typo
// (`thinkingstrip`) would silently run the defaults.
const BLOCK_KEYS = [
  'enabled', 'showPruneStatusLine', 'summarizerModel', 'summarizerThinking', 'pruneOn', 'batchingMode', 'quietOversizedSkips',
  'minBatchChars', 'recoveryGraceTurns', 'summarizerIdleTimeoutMs', 'summarizerMaxTimeoutMs', 'protectedTools', 'protectedPaths',
  'chainCompression', 'purgeErrors', 'thinkingStrip', 'dedupByContentHash', 'autoBudgetThreshold', 'spillThreshold',
  'spillPreviewBytes', 'budgetTurnDelta',
];

// The edit distance of two keys, case counted as a small difference.
function distance(a, b) {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j];
      const same = a[i - 1] === b[j - 1] ? 0 : a[i - 1].toLowerCase() === b[j - 1].toLowerCase() ? 0.5 : 1;
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diag + same);
      diag = up;
    }
  }
  return row[b.length];
}

function nearest(key, known) {
  return known.reduce((best, k) => (distance(key, k) < distance(key, best) ? k : best));
}

/**
 * The keys of a config's `contextPrune` block (or of the bare block) that
 * pi-condense does not read, each as a line naming its key path and the
 * nearest known key. A render config, and a pi settings file without the
 * block, have none.
 */
function unknownKeys(config) {
  if (!fits('an object', config) || config.errorPurge !== undefined || config.protection !== undefined) return [];
  if (piSettingsWithoutBlock(config)) return [];
  const inSettings = config.contextPrune !== undefined;
  const block = inSettings ? config.contextPrune : config;
  if (!fits('an object', block)) return [];
  const at = inSettings ? 'contextPrune.' : '';
  const out = [];
  const say = (where, key, known) => out.push(`${where}${key} is not a pi-condense setting: not read (did you mean ${where}${nearest(key, known)}?)`);
  for (const key of Object.keys(block)) {
    if (!BLOCK_KEYS.includes(key)) say(at, key, BLOCK_KEYS);
    else if (SECTIONS[key] && fits('an object', block[key])) {
      for (const inner of Object.keys(block[key])) if (!(inner in SECTIONS[key])) say(`${at}${key}.`, inner, Object.keys(SECTIONS[key]));
    }
  }
  return out;
}

// pi's own top-level settings and pi-condense's keys: a config object with
// some of the first and none of the second is a pi settings file without a
// `contextPrune` block (pi-condense then runs on its defaults). The same
// rule as `looks_like_pi_settings` in src/replay/settings.rs, which decides
// what the replay renders with; this copy lets the CLI say so.
const PI_KEYS = ['defaultProvider', 'defaultModel', 'defaultThinkingLevel', 'theme', 'compaction', 'cacheWarming', 'retry', 'packages', 'extensions'];
const CONDENSE_KEYS = ['chainCompression', 'purgeErrors', 'thinkingStrip', 'protectedTools', 'protectedPaths', 'recoveryGraceTurns', 'pruneOn'];

/** Whether `config` is a pi settings file that holds no contextPrune block. */
function piSettingsWithoutBlock(config) {
  return fits('an object', config) && config.contextPrune === undefined && PI_KEYS.some((k) => k in config) && !CONDENSE_KEYS.some((k) => k in config);
}

module.exports = { configProblems, unknownKeys, piSettingsWithoutBlock };
