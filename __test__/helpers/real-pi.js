'use strict';
// Real pi for __test__/real-pi.test.js and benches/real-pi.js: pi 1.6.0's
// own CLI (the devDependency), the Node that can run it, and agent
// directories holding pi-condense (from ../shared/pi-condense) and
// condense-native's packed tarballs, installed the way `pi install` installs
// npm packages, offline and with nothing of this checkout's environment.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { packRelease } = require('./pack.js');
const { sessionFiles } = require('../../js/session-files.js');

const ROOT = path.join(__dirname, '..', '..');
const FIXTURES = path.join(__dirname, '..', 'fixtures', 'pi-extension');
const SHARED = path.join(ROOT, '..', 'shared', 'pi-condense');
const PI_DIR = path.join(ROOT, 'node_modules', '@earendil-works', 'pi-coding-agent');
const PI_PKG = JSON.parse(fs.readFileSync(path.join(PI_DIR, 'package.json'), 'utf8'));
const PI_CLI = path.join(PI_DIR, PI_PKG.bin.pi);
const RELEASES = ['2.4.3', '2.9.1'];

// pi-condense's settings for the sessions run in pi (the test's and the
// bench's): every batch summarized, chains compressed after one, errors
// purged after a turn, thinking kept for two.
const CONTEXT_PRUNE = Object.freeze({
  enabled: true,
  pruneOn: 'agent-message',
  minBatchChars: 0,
  recoveryGraceTurns: 0,
  chainCompression: { enabled: true, rollingWindow: 1, stripFinalAssistantThinking: true, fuseRangeSummary: true },
  purgeErrors: { enabled: true, cooldownTurns: 1, minArgChars: 20 },
  thinkingStrip: { enabled: true, keepLastTurns: 2 },
});

// pi-condense's entry switched off by pi's package filter, and
// condense-native: the packages of a pi that renders on the addon.
const FILTERED = Object.freeze([{ source: 'npm:pi-condense', extensions: [] }, 'npm:condense-native']);

/** The one session file a pi run left in the agent directory. */
function sessionFileOf(agent) {
  const { files } = sessionFiles([path.join(agent, 'sessions')]);
  if (files.length !== 1) throw new Error(`pi wrote ${files.length} session files for one run`);
  return files[0];
}

// pi's engines, e.g. ">=22.19.0".
function meetsPi(version) {
  const want = /^>=\s*(\d+)\.(\d+)/.exec(PI_PKG.engines.node);
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  return major > Number(want[1]) || (major === Number(want[1]) && minor >= Number(want[2]));
}

/** The Node that runs pi: this one, or under Bun the one on PATH; `{ node }` or `{ why }`. */
function piNode() {
  if (!process.versions.bun) {
    return meetsPi(process.versions.node) ? { node: process.execPath } : { why: `Node ${process.versions.node} is below pi ${PI_PKG.version}'s engines (${PI_PKG.engines.node})` };
  }
  const r = spawnSync('node', ['--version'], { encoding: 'utf8' });
  if (r.status !== 0) return { why: 'no node on PATH to run pi with' };
  return meetsPi(r.stdout.trim()) ? { node: 'node' } : { why: `the node on PATH (${r.stdout.trim()}) is below pi's engines (${PI_PKG.engines.node})` };
}

function run(file, args, options) {
  const r = spawnSync(file, args, { encoding: 'utf8', maxBuffer: 1 << 28, timeout: 180_000, ...options });
  if (r.error || r.status !== 0) {
    throw new Error(`${file} ${args.join(' ')} failed (${r.error ? r.error.message : `exit ${r.status}`}):\n${r.stdout}\n${r.stderr}`);
  }
  return r;
}

// npm, offline, with nothing of this checkout's environment.
function cleanEnv(work, extra = {}) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(npm_|CONDENSE_NATIVE|NODE_OPTIONS$|NODE_PATH$|PI_|FAUX_|CHAIN_)/i.test(key)) continue;
    env[key] = value;
  }
  return Object.assign(env, {
    HOME: path.join(work, 'home'),
    npm_config_cache: path.join(work, 'npm-cache'),
    npm_config_offline: 'true',
    npm_config_registry: 'http://127.0.0.1:9/',
    npm_config_update_notifier: 'false',
    ...extra,
  });
}

/**
 * A scratch folder (removed at exit) with the tarballs packed once:
 * `{ work, env, tarballs, installAgent(release) }`. `installAgent` makes an
 * agent directory with pi-condense `release` and condense-native installed
 * as `pi install` installs npm packages (pi's DefaultPackageManager:
 * package.json "pi-extensions", npm install --prefix <agentDir>/npm
 * --legacy-peer-deps; pi's own packages are its peers, never installed).
 */
function makeWorkspace(prefix = 'condense-real-pi-') {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  process.on('exit', () => fs.rmSync(work, { recursive: true, force: true }));
  fs.mkdirSync(path.join(work, 'home'));
  const env = cleanEnv(work);
  const tarballs = packRelease(work, env);
  for (const r of RELEASES) {
    const out = run('npm', ['pack', '--silent', '--pack-destination', path.join(work, 'tarballs'), path.join(SHARED, r)], { cwd: work, env });
    tarballs[r] = path.join(work, 'tarballs', out.stdout.trim().split('\n').pop());
  }
  const installAgent = (release) => {
    const agent = path.join(work, `agent-${release}`);
    fs.mkdirSync(path.join(agent, 'npm'), { recursive: true });
    fs.writeFileSync(path.join(agent, 'npm', 'package.json'), JSON.stringify({ name: 'pi-extensions', private: true }, null, 2));
    run('npm', ['install', tarballs[release], tarballs.main.file, tarballs.platform.file, '--prefix', path.join(agent, 'npm'), '--legacy-peer-deps', '--no-audit', '--no-fund'], { cwd: work, env });
    for (const name of ['pi-condense', 'condense-native']) {
      if (!fs.existsSync(path.join(agent, 'npm', 'node_modules', name, 'package.json'))) throw new Error(`${name} is not installed in ${agent}`);
    }
    if (fs.existsSync(path.join(agent, 'npm', 'node_modules', '@earendil-works'))) throw new Error("pi's own packages were installed next to the extensions");
    return agent;
  };
  return { work, env, tarballs, installAgent };
}

module.exports = { ROOT, FIXTURES, SHARED, PI_DIR, PI_PKG, PI_CLI, RELEASES, CONTEXT_PRUNE, FILTERED, sessionFileOf, meetsPi, piNode, run, cleanEnv, makeWorkspace };
