'use strict';
// Which pi-condense the user installed, found the way pi finds a package:
// from the `packages` of the project's `.pi/settings.json` (first) and of the
// agent directory's `settings.json`, an `npm:` source under that scope's npm
// folder (`<cwd>/.pi/npm` or `<agentDir>/npm`, where `pi install` puts it),
// a local source resolved from the settings file that names it. A git
// source, or a copy installed some other way, is named with the environment
// variable CONDENSE_NATIVE_PI_CONDENSE (its folder). Also reads the switch:
// `"condenseNative": { "enabled": false }` in either settings file (the
// project's wins) or CONDENSE_NATIVE=off turns the addon off.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const NAME = 'pi-condense';
const OFF_VALUES = new Set(['0', 'off', 'false', 'no', 'js']);

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
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

// The folder a settings entry's source is installed in, when it is
// pi-condense; null otherwise.
function installedDir(source, s) {
  const npm = /^npm:((?:@[^/@]+\/)?[^@]+)(?:@.*)?$/.exec(source);
  if (npm) return npm[1] === NAME ? path.join(s.npmRoot, 'node_modules', NAME) : null;
  if (/^(git:|https?:|ssh:|git@)/.test(source)) return null;
  const local = source.startsWith('~/') ? path.join(os.homedir(), source.slice(2)) : path.resolve(path.dirname(s.file), source);
  return nameOfDir(local) === NAME ? local : null;
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

/** The drop-in for a pi-condense version: '2.4' for 2.4.x, '2.9' for 2.9.x, null for any other. */
function dropInFor(version) {
  const m = /^(\d+)\.(\d+)\./.exec(version || '');
  if (!m) return null;
  const line = `${m[1]}.${m[2]}`;
  return line === '2.4' || line === '2.9' ? line : null;
}

module.exports = { agentDirOf, locatePiCondense, switchedOff, dropInFor };
