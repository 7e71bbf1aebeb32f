#!/usr/bin/env node
'use strict';

// pi's release binary, built here the way pi builds it: `bun build
// --compile` with the flags of pi 1.6.0's `build:binary` script, then the
// files its `copy-binary-assets` script puts beside the binary. pi's build
// compiles its TypeScript sources; the npm package carries their compiled
// JavaScript (dist/bun/cli.js and the two workers' dist/*.js), so those are
// the entry points here. The Bun is the devDependency (node_modules/.bin/bun).
// For benches/real-pi.js (`--node pi-binary`): condense-native where users
// of pi's binary run it.
//
//   node scripts/pi-binary.js [DIR]   builds into DIR (default: the machine's
//                                     cache, per pi and Bun version) and prints
//                                     the binary's path

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..');
const PI_DIR = path.join(ROOT, 'node_modules', '@earendil-works', 'pi-coding-agent');
const BUN = path.join(ROOT, 'node_modules', '.bin', process.platform === 'win32' ? 'bun.cmd' : 'bun');

// pi 1.6.0 package.json, scripts."build:binary": the compile flags.
const COMPILE_FLAGS = ['--compile', '--no-compile-autoload-bunfig', '--no-compile-autoload-dotenv', '--compile-autoload-package-json'];
// Its entries (src/*.ts there), as the package ships them.
const ENTRIES = ['dist/bun/cli.js', 'dist/utils/image-resize-worker.js', 'dist/extensions/codemode/worker.js'];

function copy(from, to) {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.cpSync(from, to, { recursive: true });
}

function copyMatching(dir, suffix, toDir) {
  for (const name of fs.readdirSync(dir)) if (name.endsWith(suffix)) copy(path.join(dir, name), path.join(toDir, name));
}

// pi 1.6.0 package.json, scripts."copy-binary-assets", from the package's
// layout: what the binary reads beside itself.
function copyAssets(out) {
  for (const name of ['package.json', 'README.md', 'CHANGELOG.md', 'docs', 'examples']) {
    if (fs.existsSync(path.join(PI_DIR, name))) copy(path.join(PI_DIR, name), path.join(out, name));
  }
  const photon = require.resolve('@silvia-odwyer/photon-node/photon_rs_bg.wasm', { paths: [PI_DIR] });
  copy(photon, path.join(out, 'photon_rs_bg.wasm'));
  copyMatching(path.join(PI_DIR, 'dist', 'modes', 'interactive', 'theme'), '.json', path.join(out, 'theme'));
  copyMatching(path.join(PI_DIR, 'dist', 'modes', 'interactive', 'assets'), '.png', path.join(out, 'assets'));
  const html = path.join(PI_DIR, 'dist', 'core', 'export-html');
  for (const name of ['template.html', 'template.css', 'template.js']) copy(path.join(html, name), path.join(out, 'export-html', name));
  copyMatching(path.join(html, 'vendor'), '.js', path.join(out, 'export-html', 'vendor'));
}

/** Builds pi's binary into `out` (once per pi and Bun version) and returns its path. */
function piBinary(out) {
  const piVersion = JSON.parse(fs.readFileSync(path.join(PI_DIR, 'package.json'), 'utf8')).version;
  const bunVersion = execFileSync(BUN, ['--version'], { encoding: 'utf8' }).trim();
  const dir = out || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'condense-native-pi-binary', `pi-${piVersion}-bun-${bunVersion}`);
  const binary = path.join(dir, process.platform === 'win32' ? 'pi.exe' : 'pi');
  if (fs.existsSync(binary) && fs.existsSync(path.join(dir, 'package.json'))) return binary;
  fs.mkdirSync(dir, { recursive: true });
  execFileSync(BUN, ['build', ...COMPILE_FLAGS, ...ENTRIES, '--outfile', binary], { cwd: PI_DIR, stdio: ['ignore', 'ignore', 'inherit'] });
  copyAssets(dir);
  const version = execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  if (version !== piVersion) throw new Error(`the built binary says it is pi ${version}, not ${piVersion}`);
  return binary;
}

if (require.main === module) process.stdout.write(`${piBinary(process.argv[2] && path.resolve(process.argv[2]))}\n`);

module.exports = { piBinary };
