'use strict';
// Which pi-condense the user installed, found the way pi finds a package:
// from the `packages` of the project's `.pi/settings.json` (first) and of the
// agent directory's `settings.json`, an `npm:` source under that scope's npm
// folder (`<cwd>/.pi/npm` or `<agentDir>/npm`, where `pi install` puts it),
// a local source resolved from the settings file that names it. A git
// source, or a copy installed some other way, is named with the environment
// variable CONDENSE_NATIVE_PI_CONDENSE (its folder). Also reads the switch:
// `"condenseNative": { "enabled": false }` in either settings file (the
// project's wins) or CONDENSE_NATIVE=off (or false, 0) turns the addon off. And says
// whether pi will load pi-condense's own entry as well (an unfiltered
// package entry, or `-e` on pi's command line): then the extension stands
// down, since two copies of pi-condense register the same tool and pi
// refuses to start.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const NAME = 'pi-condense';
// CONDENSE_NATIVE takes what the setting takes: off (`false` there), and
// on; any other value is named in a warning and leaves the addon on, as a
// setting that is not a boolean does.
const OFF_VALUES = new Set(['0', 'off', 'false']);
const ON_VALUES = new Set(['', '1', 'on', 'true']);

// A JSON file's value, a BOM before it skipped as Node's loader skips it;
// null when it cannot be read or parsed. pi/binary.js reads package.json
// files with it too.
function readJson(file) {
  try {
    return JSON.parse(stripBom(fs.readFileSync(file, 'utf8')));
  } catch {
    return null;
  }
}

function stripBom(text) {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** pi's agent directory: PI_CODING_AGENT_DIR, else ~/.pi/agent (pi's getAgentDir when the host gives none). */
function agentDirOf(host) {
  if (host && typeof host.getAgentDir === 'function') return host.getAgentDir();
  const dir = process.env.PI_CODING_AGENT_DIR;
  if (dir) return dir === '~' ? os.homedir() : dir.startsWith('~/') ? path.join(os.homedir(), dir.slice(2)) : dir;
  return path.join(os.homedir(), '.pi', 'agent');
}

// The settings files pi reads, project first, each with the folder its
// npm packages go to.
function scopes(cwd, agentDir) {
  return [
    { scope: 'project', file: path.join(cwd, '.pi', 'settings.json'), npmRoot: path.join(cwd, '.pi', 'npm') },
    { scope: 'user', file: path.join(agentDir, 'settings.json'), npmRoot: path.join(agentDir, 'npm') },
  ].map((s) => ({ ...s, settings: readJson(s.file) }));
}

function sourceOf(entry) {
  return typeof entry === 'string' ? entry : entry && typeof entry.source === 'string' ? entry.source : null;
}

function nameOfDir(dir) {
  const pkg = readJson(path.join(dir, 'package.json'));
  return pkg && typeof pkg.name === 'string' ? pkg.name : null;
}

/**
 * Where pi looks for a `packages` source of the settings scope `s` (`{
 * file, npmRoot }`), by its package manager's rules (pi's
 * core/package-manager.js, parseSource and getNpmInstallPath): `{ kind:
 * 'npm', name, dir }` under the scope's npm folder; `{ kind: 'git' }` (not
 * looked into); `{ kind: 'local', dir }` for anything else, a path from the
 * folder of the settings file (`~` the home).
 */
function sourceDir(source, s) {
  const npm = /^npm:((?:@[^/@]+\/)?[^@]+)(?:@.*)?$/.exec(source.trim());
  if (npm) return { kind: 'npm', name: npm[1], dir: path.join(s.npmRoot, 'node_modules', ...npm[1].split('/')) };
  if (/^(git:|github:|https?:|ssh:|git@)/.test(source)) return { kind: 'git', dir: null };
  const local = source.trim();
  const dir = local === '~' ? os.homedir() : local.startsWith('~/') ? path.join(os.homedir(), local.slice(2)) : path.resolve(path.dirname(s.file), local);
  return { kind: 'local', dir };
}

// The folder a settings entry's source is installed in, when it is
// pi-condense; null otherwise.
function installedDir(source, s) {
  const { kind, name, dir } = sourceDir(source, s);
  if (kind === 'npm') return name === NAME ? dir : null;
  return dir !== null && nameOfDir(dir) === NAME ? dir : null;
}

/**
 * Whether a settings entry's source names pi-condense: `npm:pi-condense`
 * (any version, installed or not: pi installs a missing one at start), a
 * git source whose repository is named pi-condense, a local path holding
 * its package.json. `file` is the settings file the entry is in.
 */
function namesPiCondense(source, file) {
  if (typeof source !== 'string') return false;
  const npm = /^npm:((?:@[^/@]+\/)?[^@]+)(?:@.*)?$/.exec(source);
  if (npm) return npm[1] === NAME;
  if (/^(git:|https?:|ssh:|git@)/.test(source)) return /(^|[/:])pi-condense(\.git)?(@[^/]*)?\/?$/.test(source);
  const local = source.startsWith('~/') ? path.join(os.homedir(), source.slice(2)) : path.resolve(path.dirname(file), source);
  return nameOfDir(local) === NAME;
}

// Whether pi loads the entry file of a package declared with `entry` (a
// settings `packages` item): a string, or an object without an `extensions`
// filter, loads it; `"extensions": []` loads none. A non-empty filter loads
// it unless it excludes it (`!`/`-` of its file name or of `*`, `**`,
// `*.ts`), or names only other files; anything unclear counts as loading,
// the side on which standing down keeps pi starting.
const ENTRY_NAMES = new Set(['index.ts', './index.ts', '*', '**', '**/*', '*.ts', '**/*.ts']);

function excludesEntry(patterns, names = ENTRY_NAMES) {
  return patterns.some((p) => typeof p === 'string' && (p.startsWith('!') || p.startsWith('-')) && names.has(p.slice(1)));
}

function loadsEntry(entry, names = ENTRY_NAMES) {
  if (typeof entry === 'string') return true;
  if (!entry || typeof entry !== 'object' || !Array.isArray(entry.extensions)) return true;
  const patterns = entry.extensions.filter((p) => typeof p === 'string');
  if (patterns.length === 0) return false;
  const bare = (p) => p.slice(1);
  if (excludesEntry(patterns, names)) return false;
  const includes = patterns.filter((p) => !/^[!+-]/.test(p));
  const forced = patterns.some((p) => p.startsWith('+') && names.has(bare(p)));
  if (includes.length > 0 && !forced && !includes.some((p) => names.has(p) || /[*?[{]/.test(p))) return false;
  return true;
}

/**
 * The pi-condense entry pi goes by, as pi dedupes packages: the project's
 * settings over the user's (a project entry with `"autoload": false` is a
 * delta over the user's, which then counts too). Returns `{ scope, file,
 * index, entry, source, loadsOwn }` of the entry whose filter decides, or
 * null when neither settings file declares pi-condense.
 */
function piCondenseEntry(cwd, agentDir) {
  const found = [];
  for (const s of scopes(cwd, agentDir)) {
    const packages = s.settings && Array.isArray(s.settings.packages) ? s.settings.packages : [];
    const index = packages.findIndex((entry) => namesPiCondense(sourceOf(entry), s.file));
    if (index < 0) continue;
    const entry = packages[index];
    found.push({ scope: s.scope, file: s.file, index, entry, source: sourceOf(entry), loadsOwn: loadsEntry(entry) });
  }
  if (found.length === 0) return null;
  const [first, user] = found;
  const delta = first.scope === 'project' && first.entry && typeof first.entry === 'object' && first.entry.autoload === false;
  if (!delta || user === undefined) return delta ? { ...first, loadsOwn: false } : first;
  // A delta only switches files off (or on) over the user's entry.
  const patterns = Array.isArray(first.entry.extensions) ? first.entry.extensions : [];
  return excludesEntry(patterns) ? { ...first, loadsOwn: false } : user;
}

/**
 * pi-condense folders pi's command line loads as extensions of their own
 * (`-e`/`--extension <path>`): each such path inside a pi-condense package
 * (or `npm:pi-condense`).
 */
function piCondenseOnCommandLine(argv, cwd) {
  const out = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    let value = null;
    if (a === '-e' || a === '--extension') value = argv[++i];
    else if (typeof a === 'string' && a.startsWith('--extension=')) value = a.slice('--extension='.length);
    if (typeof value !== 'string') continue;
    if (/^npm:/.test(value)) {
      if (namesPiCondense(value, path.join(cwd, 'x'))) out.push(value);
      continue;
    }
    let dir = path.resolve(cwd, value);
    for (let up = 0; up < 4 && dir !== path.dirname(dir); up++, dir = path.dirname(dir)) {
      const name = nameOfDir(dir);
      if (name === NAME) out.push(value);
      if (name !== null) break;
    }
  }
  return out;
}

/**
 * Why pi loads pi-condense's own extension besides this package's, or
 * null: `{ how, file, source, entry, scope }` for a settings entry, `{ how,
 * arg }` for the command line.
 */
function ownEntryLoaded(cwd, agentDir, argv = process.argv) {
  const e = piCondenseEntry(cwd, agentDir);
  if (e && e.loadsOwn) return { how: 'settings', ...e };
  const args = piCondenseOnCommandLine(argv, cwd);
  if (args.length > 0) return { how: 'command line', arg: args[0] };
  return null;
}

/** The filtered form of a pi-condense settings entry: its source (and any other keys), no extensions. */
function filteredEntry(entry) {
  if (typeof entry === 'string') return { source: entry, extensions: [] };
  return { ...entry, extensions: [] };
}

/**
 * Where pi-condense is installed: `{ dir, version, how }`, or `{ dir: null,
 * why }` when no settings file declares one that is on disk.
 */
function locatePiCondense(cwd, agentDir, env = process.env) {
  if (env.CONDENSE_NATIVE_PI_CONDENSE) {
    const dir = path.resolve(env.CONDENSE_NATIVE_PI_CONDENSE);
    const pkg = readJson(path.join(dir, 'package.json'));
    if (!pkg || pkg.name !== NAME) return { dir: null, why: `CONDENSE_NATIVE_PI_CONDENSE=${dir} holds no ${NAME} package.json` };
    return { dir, version: String(pkg.version), how: 'CONDENSE_NATIVE_PI_CONDENSE' };
  }
  for (const s of scopes(cwd, agentDir)) {
    const packages = s.settings && Array.isArray(s.settings.packages) ? s.settings.packages : [];
    for (const entry of packages) {
      const source = sourceOf(entry);
      const dir = source && installedDir(source, s);
      if (!dir) continue;
      const pkg = readJson(path.join(dir, 'package.json'));
      if (pkg && pkg.name === NAME) return { dir, version: String(pkg.version), how: `${source} in ${s.file}` };
    }
  }
  return { dir: null, why: `no ${NAME} package is declared in ${scopes(cwd, agentDir).map((s) => s.file).join(' or ')} and installed` };
}

/** Why the addon is switched off, or null: the environment first, then the settings (project over user). */
function switchedOff(cwd, agentDir, env = process.env) {
  const value = env.CONDENSE_NATIVE;
  if (value !== undefined && OFF_VALUES.has(String(value).trim().toLowerCase())) return `CONDENSE_NATIVE=${value}`;
  for (const s of scopes(cwd, agentDir)) {
    const block = s.settings && s.settings.condenseNative;
    if (block && typeof block === 'object' && typeof block.enabled === 'boolean') {
      return block.enabled ? null : `"condenseNative": { "enabled": false } in ${s.file}`;
    }
  }
  return null;
}

/**
 * Warnings for a switch that is not read: CONDENSE_NATIVE of another value
 * than off/false/0 or on/true/1 (`no`, `banana`), a `condenseNative.enabled`
 * that is not a boolean (`"no"`, `0`, `null`). Such a value does not switch
 * the addon off; the warning names it (and the file), and says what is read.
 */
function switchWarnings(cwd, agentDir, env = process.env) {
  const out = [];
  const value = env.CONDENSE_NATIVE;
  if (value !== undefined && !OFF_VALUES.has(String(value).trim().toLowerCase()) && !ON_VALUES.has(String(value).trim().toLowerCase())) {
    out.push(`CONDENSE_NATIVE=${value} is not off, false or 0 (nor on, true or 1): not read, condense-native stays on (CONDENSE_NATIVE=off switches it off)`);
  }
  for (const s of scopes(cwd, agentDir)) {
    const block = s.settings && typeof s.settings === 'object' ? s.settings.condenseNative : undefined;
    if (block === undefined) continue;
    if (block === null || typeof block !== 'object' || Array.isArray(block)) {
      out.push(`"condenseNative" in ${s.file} is ${JSON.stringify(block)}, not an object: not read (write "condenseNative": { "enabled": false } to switch condense-native off)`);
    } else if ('enabled' in block && typeof block.enabled !== 'boolean') {
      out.push(`"condenseNative": { "enabled": ${JSON.stringify(block.enabled)} } in ${s.file} is not true or false: not read, condense-native stays on (write false to switch it off)`);
    }
  }
  return out;
}

/**
 * The gate's settings (`"condenseNative": { "gate": {...} }`, docs/GATE.md):
 * `{ settings, file }` from the first settings file that has them (the
 * project's, then the user's), or null. Checked by the native gate, which
 * names what is wrong.
 */
function gateSettingsOf(cwd, agentDir) {
  for (const s of scopes(cwd, agentDir)) {
    const block = s.settings && typeof s.settings === 'object' ? s.settings.condenseNative : undefined;
    if (block && typeof block === 'object' && !Array.isArray(block) && block.gate !== undefined) return { settings: block.gate, file: s.file };
  }
  return null;
}

/**
 * pi's `compaction.reserveTokens` while its automatic compaction is on
 * (pi's settings: the project's over the user's, pi's defaults: on, 16,384;
 * core/settings-manager.js), else null: the gate's holds stay under the
 * window less it, where pi would compact.
 */
function compactionReserveOf(cwd, agentDir) {
  const merged = {};
  for (const s of [...scopes(cwd, agentDir)].reverse()) {
    const block = s.settings && typeof s.settings === 'object' ? s.settings.compaction : undefined;
    if (block && typeof block === 'object' && !Array.isArray(block)) Object.assign(merged, block);
  }
  if (merged.enabled === false) return null;
  return Number.isSafeInteger(merged.reserveTokens) && merged.reserveTokens >= 0 ? merged.reserveTokens : 16384;
}

/**
 * pi-condense's own master switch, `contextPrune.enabled` in the agent
 * directory's settings.json (the only file pi-condense reads it from; off
 * unless true): `{ on, file, why }`. While it is off pi-condense renders
 * nothing.
 */
function prunerSwitch(agentDir) {
  const file = path.join(agentDir, 'settings.json');
  const settings = readJson(file);
  const value = settings && settings.contextPrune && typeof settings.contextPrune === 'object' ? settings.contextPrune.enabled : undefined;
  if (value === true) return { on: true, file, why: `"contextPrune": { "enabled": true } in ${file}` };
  return { on: false, file, why: value === false ? `"contextPrune": { "enabled": false } in ${file}` : `contextPrune.enabled is unset in ${file}, and pi-condense's default is off` };
}

/** The drop-in for a pi-condense version: '2.4' for 2.4.x, '2.9' for 2.9.x, null for any other. */
function dropInFor(version) {
  const m = /^(\d+)\.(\d+)\./.exec(version || '');
  if (!m) return null;
  const line = `${m[1]}.${m[2]}`;
  return line === '2.4' || line === '2.9' ? line : null;
}

module.exports = {
  agentDirOf,
  sourceDir,
  nameOfDir,
  locatePiCondense,
  switchedOff,
  switchWarnings,
  gateSettingsOf,
  compactionReserveOf,
  dropInFor,
  prunerSwitch,
  namesPiCondense,
  loadsEntry,
  ownEntryLoaded,
  filteredEntry,
  readJson,
  stripBom,
};
