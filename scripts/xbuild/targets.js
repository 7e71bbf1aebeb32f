'use strict';
// The eight published targets in one table: how scripts/build-all.sh builds
// each one on a Linux x86-64 machine (cargo-zigbuild + zig), and what the
// tests expect of the binary it produces (file format, machine, libc, oldest
// glibc or macOS it may need). The two Windows targets are built only by the
// release workflow, on Windows runners.
//
//   node scripts/xbuild/targets.js list          # the platforms built here
//   node scripts/xbuild/targets.js env PLATFORM  # KEY=VALUE lines for its build
//
// GLIBC_FLOOR is the oldest glibc the README promises for the Linux gnu
// binaries: the build links against zig's glibc 2.17 symbol set (the
// `.2.17` suffix of the zig target), and cross/binaries.test.js fails on any
// symbol version newer than it.

const path = require('node:path');

const GLIBC_FLOOR = '2.17';

// Rust's own default deployment targets, so a cross build asks for no newer
// macOS than a native cargo build would.
const MACOS_MIN = { 'darwin-x64': '10.12', 'darwin-arm64': '11.0' };

const PLATFORMS = {
  'linux-x64-gnu': { triple: 'x86_64-unknown-linux-gnu', zigTarget: `x86_64-unknown-linux-gnu.${GLIBC_FLOOR}`, os: 'linux', arch: 'x64', libc: 'glibc', format: 'elf', machine: 'x86_64' },
  'linux-x64-musl': { triple: 'x86_64-unknown-linux-musl', zigTarget: 'x86_64-unknown-linux-musl', os: 'linux', arch: 'x64', libc: 'musl', format: 'elf', machine: 'x86_64' },
  'linux-arm64-gnu': { triple: 'aarch64-unknown-linux-gnu', zigTarget: `aarch64-unknown-linux-gnu.${GLIBC_FLOOR}`, os: 'linux', arch: 'arm64', libc: 'glibc', format: 'elf', machine: 'aarch64' },
  'linux-arm64-musl': { triple: 'aarch64-unknown-linux-musl', zigTarget: 'aarch64-unknown-linux-musl', os: 'linux', arch: 'arm64', libc: 'musl', format: 'elf', machine: 'aarch64' },
  'darwin-x64': { triple: 'x86_64-apple-darwin', zigTarget: 'x86_64-apple-darwin', os: 'darwin', arch: 'x64', libc: null, format: 'macho', machine: 'x86_64' },
  'darwin-arm64': { triple: 'aarch64-apple-darwin', zigTarget: 'aarch64-apple-darwin', os: 'darwin', arch: 'arm64', libc: null, format: 'macho', machine: 'aarch64' },
  'win32-x64-msvc': { triple: 'x86_64-pc-windows-msvc', zigTarget: null, os: 'win32', arch: 'x64', libc: null, format: 'pe', machine: 'x86_64' },
  'win32-arm64-msvc': { triple: 'aarch64-pc-windows-msvc', zigTarget: null, os: 'win32', arch: 'arm64', libc: null, format: 'pe', machine: 'aarch64' },
};

/** The platforms scripts/build-all.sh builds (all but Windows). */
const BUILT_HERE = Object.keys(PLATFORMS).filter((p) => PLATFORMS[p].zigTarget);

const ROOT = path.join(__dirname, '..', '..');

function binaryPath(platform, root = ROOT) {
  return path.join(root, 'npm', platform, `condense-native.${platform}.node`);
}

/** Environment of one platform's build, beyond what napi build sets itself. */
function buildEnv(platform) {
  const p = PLATFORMS[platform];
  if (!p || !p.zigTarget) throw new Error(`${platform} is not built by scripts/build-all.sh`);
  const env = {};
  if (p.os === 'darwin') {
    env.MACOSX_DEPLOYMENT_TARGET = MACOS_MIN[platform];
    // mimalloc includes CommonCrypto headers for macOS 10.15 and later; zig
    // has no macOS SDK headers beyond libc, so the two it needs come from here.
    env[`CFLAGS_${p.triple.replace(/-/g, '_')}`] = `-isystem ${path.join(__dirname, 'macos-include')}`;
  }
  return env;
}

module.exports = { GLIBC_FLOOR, MACOS_MIN, PLATFORMS, BUILT_HERE, binaryPath, buildEnv };

if (require.main === module) {
  const [command, platform] = process.argv.slice(2);
  if (command === 'list') {
    console.log(BUILT_HERE.join('\n'));
  } else if (command === 'env' && platform) {
    if (!BUILT_HERE.includes(platform)) {
      console.error(`unknown platform ${platform}; built here: ${BUILT_HERE.join(', ')}`);
      process.exitCode = 2;
    } else {
      console.log(`ZIG_TARGET=${PLATFORMS[platform].zigTarget}`);
      for (const [k, v] of Object.entries(buildEnv(platform))) console.log(`${k}=${v}`);
    }
  } else {
    console.error('usage: node scripts/xbuild/targets.js list | env PLATFORM');
    process.exitCode = 2;
  }
}
