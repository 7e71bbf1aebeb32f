'use strict';

// What a replay or a tune renders "yours" with when the user names no
// config: the settings and the release pi-condense runs with on this
// machine, found the way pi-condense and pi find them, each with where it
// came from, so a report can say "contextPrune from ~/.pi/agent/settings.json,
// pi-condense 2.9.1 installed" instead of guessing silently.
//
// - Settings: pi-condense reads one file, `<agentDir>/settings.json`
//   (its src/config.ts `settingsPath`: pi's getAgentDir, which honours
//   PI_CODING_AGENT_DIR), and merges its `contextPrune` block over its
//   defaults. A project's `.pi/settings.json` is pi's, not pi-condense's: a
//   `contextPrune` block there is not read by pi-condense, and the report
//   says so rather than using it.
// - Release: the pi-condense package pi would load (pi/locate.js, the
//   extension's own finder): 2.4.x renders as 2.4.3, 2.9.x as 2.9.1.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { agentDirOf, locatePiCondense, dropInFor } = require('../pi/locate.js');
const { configProblems, unknownKeys } = require('../js/settings-check.js');

const RELEASE_OF_LINE = { 2.4: '2.4.3', 2.9: '2.9.1' };
const DEFAULT_RELEASE = '2.4.3';

/** A path for reading: the home directory as `~`. */
function shown(file) {
  const home = os.homedir();
  return home && (file === home || file.startsWith(`${home}${path.sep}`)) ? `~${file.slice(home.length)}` : file;
}

function readObject(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if (e.code === 'ENOENT') return { absent: true };
    return { error: `cannot read it (${e.code || e.message})` };
  }
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { error: `not JSON (${e.message})` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { error: 'does not hold a JSON object' };
  return { value };
}

// pi's own `compaction` settings in a settings file (pi reads them from
// the same file), or null.
const compactionOf = (settings) => settings?.compaction ?? null;

// pi's `cacheWarming` mode in a settings file, or null (pi's default,
// idle).
const cacheWarmingOf = (settings) => settings?.cacheWarming ?? null;

/**
 * What is wrong with pi's own keys the replay reads (`compaction`,
 * `cacheWarming`), as lines: checked by the replay's own rules through the
 * binding (src/replay/options.rs, src/replay/compaction.rs).
 */
function piKeyProblems(settings) {
  const keys = { compaction: compactionOf(settings), cacheWarming: cacheWarmingOf(settings) };
  if (keys.compaction === null && keys.cacheWarming === null) return [];
  // The binding itself: this check is the CLI's, so the public API does
  // not carry it.
  const native = require('../loader.js');
  if (typeof native.checkPiSettings !== 'function') return [];
  const result = native.checkPiSettings(JSON.stringify(keys));
  return result.errorMessage ? [result.errorMessage.replace(/^config: /, '')] : [];
}

/**
 * The user's pi-condense settings: `{ config, file, exists, source,
 * enabled, notes }` where `config` is pi's settings object to pass as a
 * replay's `config` (null: the release's defaults), `file` the settings
 * file pi-condense reads (whether or not it `exists`), `source` says where
 * the settings came from in a few words, `enabled` is pi-condense's master
 * switch (on only when `contextPrune.enabled` is true; the Rust copy of
 * the rule is `Settings::pruning_on` in src/replay/settings.rs), and
 * `notes` are lines worth a warning (a key pi-condense does not read).
 * Throws `{ usage: true }` errors for a settings file that exists but
 * cannot be used: not JSON, or a value of the wrong type (its key path
 * and the value named).
 */
function findUserSettings({ env = process.env, cwd = process.cwd() } = {}) {
  const agentDir = agentDirOf(null);
  const file = path.join(agentDir, 'settings.json');
  const notes = [];
  const project = path.join(cwd, '.pi', 'settings.json');
  const p = readObject(project);
  if (p.value && p.value.contextPrune !== undefined && path.resolve(project) !== path.resolve(file)) {
    notes.push(`${shown(project)} has a contextPrune block, which pi-condense does not read (it reads only ${shown(file)}): not used`);
  }
  const read = readObject(file);
  if (read.error) {
    const err = new Error(`${shown(file)}: ${read.error}; fix it, or name the settings with --config FILE`);
    err.usage = true;
    throw err;
  }
  if (read.absent) {
    return { config: null, file, exists: false, agentDir, source: `no ${shown(file)}: pi-condense's defaults`, enabled: false, compaction: null, cacheWarming: null, notes };
  }
  const block = read.value.contextPrune;
  // A value pi-condense cannot use is the user's to fix, named once here
  // before any session is read (as --config names it), not per session.
  const problems = [...configProblems(read.value), ...piKeyProblems(read.value)];
  if (problems.length > 0) {
    const err = new Error(`${shown(file)}: ${problems.join('; ')}; fix it there, or name other settings with --config FILE`);
    err.usage = true;
    throw err;
  }
  notes.push(...unknownKeys(read.value).map((line) => `${shown(file)}: ${line}`));
  if (block === undefined) {
    notes.push(`${shown(file)} has no contextPrune block: pi-condense's defaults`);
    return { config: null, file, exists: true, agentDir, source: `pi-condense's defaults (${shown(file)} has no contextPrune)`, enabled: false, compaction: compactionOf(read.value), cacheWarming: cacheWarmingOf(read.value), notes };
  }
  return {
    config: read.value,
    file,
    exists: true,
    agentDir,
    source: `contextPrune from ${shown(file)}`,
    enabled: block !== null && typeof block === 'object' && block.enabled === true,
    compaction: compactionOf(read.value),
    cacheWarming: cacheWarmingOf(read.value),
    notes,
  };
}

/**
 * The release the user runs: `{ release, source, installed }`; `installed`
 * is the version found (null when none is), `release` what renders it.
 */
function findRelease({ env = process.env, cwd = process.cwd() } = {}) {
  const agentDir = agentDirOf(null);
  const found = locatePiCondense(cwd, agentDir, env);
  if (!found.dir) {
    return { release: DEFAULT_RELEASE, installed: null, source: `pi-condense not installed: ${DEFAULT_RELEASE} assumed (--release to choose)` };
  }
  const line = dropInFor(found.version);
  if (line === null) {
    return {
      release: DEFAULT_RELEASE,
      installed: found.version,
      source: `pi-condense ${found.version} installed, which is neither 2.4.x nor 2.9.x: ${DEFAULT_RELEASE} assumed (--release to choose)`,
    };
  }
  return { release: RELEASE_OF_LINE[line], installed: found.version, source: `pi-condense ${found.version} installed` };
}

module.exports = { compactionOf, cacheWarmingOf, piKeyProblems, findUserSettings, findRelease, shown };
