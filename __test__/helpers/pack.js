'use strict';
// The release tarballs of this checkout, for the tests that install
// condense-native the way its users do (npm, pi, a Bun-compiled program):
// the main package with its published `files`, npm/ and the
// optionalDependencies scripts/prepare-publish.js writes, and this
// machine's platform package holding the binary `npm run build` made. Packed
// offline into `work`, once per work folder.

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..', '..');
const MAIN = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

function hostTarget() {
  const { platform, arch } = process;
  if (platform === 'linux') {
    const report = process.report && process.report.getReport ? process.report.getReport() : null;
    return `linux-${arch}-${report && report.header && report.header.glibcVersionRuntime ? 'gnu' : 'musl'}`;
  }
  if (platform === 'darwin') return `darwin-${arch}`;
  if (platform === 'win32') return `win32-${arch}-msvc`;
  return `${platform}-${arch}`;
}

/** The local build of the addon for this machine, or null (`npm run build` makes it). */
function localBinary() {
  const file = path.join(ROOT, `${MAIN.napi.binaryName}.${hostTarget()}.node`);
  return fs.existsSync(file) ? file : null;
}

// The files the main package publishes (its `files`, with `dir/*.ext`
// expanded).
function publishedFiles() {
  const out = [];
  for (const entry of MAIN.files) {
    const m = /^(.*)\/\*(\.[\w.]+)$/.exec(entry);
    if (!m) {
      out.push(entry);
      continue;
    }
    for (const f of fs.readdirSync(path.join(ROOT, m[1]))) if (f.endsWith(m[2])) out.push(`${m[1]}/${f}`);
  }
  return out;
}

// One `npm pack`: { file, files (sorted paths), info (npm's report) }.
function npmPack(dir, destination, env) {
  const r = spawnSync('npm', ['pack', '--json', '--pack-destination', destination], { cwd: dir, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`npm pack in ${dir} failed: ${r.stderr}`);
  const info = JSON.parse(r.stdout)[0];
  return { file: path.join(destination, info.filename), files: info.files.map((f) => f.path).sort(), info };
}

/**
 * Packs the main package and a platform package (`target`, holding
 * `binary`; by default this machine's and the local build) into
 * `work/tarballs`; returns `{ main, platform, target }`, each tarball as
 * `{ file, files, info }`.
 */
function packRelease(work, env = process.env, { target = hostTarget(), binary = localBinary() } = {}) {
  if (!binary) throw new Error('no local build of the addon (npm run build)');
  const stage = path.join(work, 'stage');
  fs.rmSync(stage, { recursive: true, force: true });
  fs.mkdirSync(stage, { recursive: true });
  for (const entry of ['package.json', 'README.md', 'LICENSE', 'npm', ...publishedFiles()]) {
    const from = path.join(ROOT, entry);
    if (fs.existsSync(from)) fs.cpSync(from, path.join(stage, entry), { recursive: true });
  }
  for (const platform of fs.readdirSync(path.join(stage, 'npm'))) {
    for (const f of fs.readdirSync(path.join(stage, 'npm', platform))) {
      if (f.endsWith('.node')) fs.rmSync(path.join(stage, 'npm', platform, f));
    }
  }
  const platformDir = path.join(stage, 'npm', target);
  fs.copyFileSync(binary, path.join(platformDir, path.basename(binary)));
  require('../../scripts/prepare-publish.js').prepare(stage);
  const tarballs = path.join(work, 'tarballs');
  fs.mkdirSync(tarballs, { recursive: true });
  return { main: npmPack(stage, tarballs, env), platform: npmPack(platformDir, tarballs, env), target };
}

module.exports = { packRelease, publishedFiles, localBinary, hostTarget, MAIN };
