'use strict';
// Whether a copy of condense-native holds a native binary for this
// platform, seen from outside the process that would load it, and the
// command that brings one: for `condense-native pi-setup`, which checks the
// copy it writes into pi's settings, and for the extension's status, which
// names the fix when the addon did not load. It looks where the loader
// (loader.js) looks: a local build beside the package's loader.js
// (`condense-native.<platform>-<arch>[-<abi>].node`) and the platform
// package its optionalDependencies bring (`condense-native-<platform>-
// <arch>[-<abi>]`) in a node_modules folder at or above the package, as
// Node resolves it. A clone (it holds Cargo.toml) is built; an installed
// copy gets its platform package.

const fs = require('node:fs');
const path = require('node:path');
const { readJson } = require('./locate.js');

const PACKAGE = 'condense-native';

/**
 * `{ file }`: the binary a copy of condense-native at `dir` would load
 * here (a local build, or the platform package's folder); or `{ file:
 * null, fix }`: the command that brings one, in a sentence.
 */
function binaryOf(dir, { platform = process.platform, arch = process.arch } = {}) {
  const prefix = `${platform}-${arch}`;
  let names = [];
  try {
    names = fs.readdirSync(dir);
  } catch {
    // no folder: nothing found, the fix below
  }
  const local = names.find((n) => n.startsWith(`${PACKAGE}.${prefix}`) && n.endsWith('.node'));
  if (local) return { file: path.join(dir, local) };
  for (let at = dir; ; at = path.dirname(at)) {
    const modules = path.basename(at) === 'node_modules' ? at : path.join(at, 'node_modules');
    let found = [];
    try {
      found = fs.readdirSync(modules).filter((n) => n.startsWith(`${PACKAGE}-${prefix}`));
    } catch {
      // no node_modules here
    }
    if (found.length > 0) return { file: path.join(modules, found[0]) };
    if (at === path.dirname(at)) break;
  }
  if (fs.existsSync(path.join(dir, 'Cargo.toml'))) {
    return { file: null, fix: `run \`npm ci && npm run build\` in ${dir} (a Rust toolchain builds the addon)` };
  }
  const pkg = readJson(path.join(dir, 'package.json'));
  const wanted = Object.keys((pkg && pkg.optionalDependencies) || {}).filter((n) => n.startsWith(`${PACKAGE}-${prefix}`));
  if (pkg !== null && wanted.length === 0 && pkg.optionalDependencies) {
    return { file: null, fix: `no binary is published for ${prefix}: pi-condense renders with its own code here` };
  }
  const name = wanted.length > 0 ? wanted[0] : `${PACKAGE}-${prefix}${platform === 'linux' ? '-gnu' : platform === 'win32' ? '-msvc' : ''}`;
  const root = path.basename(path.dirname(dir)) === 'node_modules' ? path.dirname(path.dirname(dir)) : dir;
  return { file: null, fix: `install the platform package: \`npm install ${name}\` in ${root}${wanted.length > 1 ? ` (${wanted.slice(1).join(', ')} on another libc)` : ''}` };
}

module.exports = { binaryOf };
