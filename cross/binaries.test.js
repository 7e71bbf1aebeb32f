'use strict';
// What each binary of `npm run build:all` links against and exports, checked
// with binutils' readelf (ELF) and LLVM's objdump/nm (Mach-O):
//   - ELF: napi_register_module_v1 is exported; no static TLS (so the addon
//     loads beside other addons); glibc binaries need no glibc symbol version
//     newer than GLIBC_FLOOR (the oldest glibc the README promises) and only
//     glibc's own libraries; musl binaries need musl's libc and nothing else;
//   - Mach-O: napi_register_module_v1 is exported; the only dylibs are the
//     system's (/usr/lib, /System/Library); the minimum macOS is no newer than
//     MACOS_MIN.
// Every platform built here must be present (XBUILD_PLATFORMS, a comma list,
// narrows the set, as the release workflow does for one binary per job).
// Part of `npm run test:cross`; runs under `node --test`.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const { GLIBC_FLOOR, MACOS_MIN, PLATFORMS, BUILT_HERE, binaryPath } = require('../scripts/xbuild/targets.js');
const { llvmTool, onPath } = require('../scripts/xbuild/runtimes.js');
const { describeBinary, elfLibc } = require('../__test__/helpers/binary');

const platforms = process.env.XBUILD_PLATFORMS ? process.env.XBUILD_PLATFORMS.split(',').filter(Boolean) : BUILT_HERE;

// Libraries a glibc binary may name: glibc's own (libpthread and libdl are
// separate files before glibc 2.34), the dynamic loader, and GCC's unwinder
// (a gcc-linked build needs it; Node itself links it on every glibc system).
const GLIBC_LIBS = new Set(['libc.so.6', 'libpthread.so.0', 'libdl.so.2', 'libm.so.6', 'librt.so.1', 'ld-linux-x86-64.so.2', 'ld-linux-aarch64.so.1', 'libgcc_s.so.1']);
const MUSL_LIBS = new Set(['libc.so']);

function tool(name, find) {
  const file = find(name);
  if (!file) throw new Error(`${name} not found (node scripts/xbuild/runtimes.js install gets it)`);
  return (args) => {
    const r = spawnSync(file, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (r.status !== 0) throw new Error(`${name} ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
}

function compareVersions(a, b) {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] || 0) - (y[i] || 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Facts about one ELF binary, from readelf. */
function elfFacts(file) {
  const readelf = tool('readelf', onPath);
  const dynamic = readelf(['-W', '-d', file]);
  const dynsym = readelf(['-W', '--dyn-syms', file]);
  const versions = readelf(['-W', '--version-info', file]);
  const exported = dynsym
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length >= 8 && f[6] !== 'UND' && f[4] === 'GLOBAL')
    .map((f) => f[7].replace(/@.*$/, ''));
  const flags = dynamic.split('\n').filter((l) => /\((FLAGS|FLAGS_1)\)/.test(l)).join(' ');
  return {
    needed: [...dynamic.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]),
    staticTls: /STATIC_TLS/.test(flags),
    exported,
    glibcVersions: [...new Set([...versions.matchAll(/GLIBC_([0-9.]+)/g)].map((m) => m[1]))].sort(compareVersions),
  };
}

/** Facts about one Mach-O binary, from llvm-objdump and llvm-nm. */
function machoFacts(file) {
  const objdump = tool('llvm-objdump', llvmTool);
  const nm = tool('llvm-nm', llvmTool);
  const headers = objdump(['--macho', '--private-headers', file]);
  const commands = headers.split(/\n(?=Load command \d+)/);
  const dylibs = commands.filter((c) => /cmd LC_(LOAD|LOAD_WEAK|REEXPORT|LAZY_LOAD)_DYLIB\b/.test(c)).map((c) => /name (\S+)/.exec(c)[1]);
  let minos = null;
  for (const c of commands) {
    const build = /cmd LC_BUILD_VERSION[\s\S]*?minos (\S+)/.exec(c);
    const old = /cmd LC_VERSION_MIN_MACOSX[\s\S]*?version (\S+)/.exec(c);
    if (build) minos = build[1];
    else if (old) minos = old[1];
  }
  const exported = nm(['--extern-only', '--defined-only', '--format=just-symbols', file]).split('\n').filter(Boolean);
  return { dylibs, minos, exported };
}

for (const platform of platforms) {
  const p = PLATFORMS[platform];
  assert.ok(p && BUILT_HERE.includes(platform), `XBUILD_PLATFORMS: ${platform} is not built by build:all`);
  const file = binaryPath(platform);

  test(`${platform}: built (npm run build:all), for ${p.os} ${p.machine}`, (t) => {
    assert.ok(fs.existsSync(file), `${path.relative(process.cwd(), file)} is missing: run npm run build:all`);
    t.diagnostic(`${fs.statSync(file).size} bytes`);
    const d = describeBinary(file);
    assert.equal(d.format, p.format);
    assert.equal(d.machine, p.machine);
  });

  if (p.format === 'elf') {
    test(`${platform}: exports napi_register_module_v1, no static TLS, links only ${p.libc}'s libraries`, (t) => {
      const f = elfFacts(file);
      t.diagnostic(`needs ${f.needed.join(', ')}; glibc versions ${f.glibcVersions.join(', ') || 'none'}`);
      assert.ok(f.exported.includes('napi_register_module_v1'), `exported: ${f.exported.join(', ')}`);
      assert.equal(f.staticTls, false, 'DT_FLAGS has STATIC_TLS');
      const allowed = p.libc === 'musl' ? MUSL_LIBS : GLIBC_LIBS;
      assert.deepEqual(f.needed.filter((n) => !allowed.has(n)), [], `needs ${f.needed.join(', ')}`);
      assert.equal(elfLibc(f.needed), p.libc);
      if (p.libc === 'musl') assert.deepEqual(f.glibcVersions, [], 'a musl binary with glibc symbol versions');
    });
    if (p.libc === 'glibc') {
      test(`${platform}: no glibc symbol version newer than ${GLIBC_FLOOR}`, (t) => {
        const f = elfFacts(file);
        const newest = f.glibcVersions[f.glibcVersions.length - 1];
        t.diagnostic(`newest: GLIBC_${newest}`);
        assert.ok(newest, 'no glibc symbol versions at all');
        const tooNew = f.glibcVersions.filter((v) => compareVersions(v, GLIBC_FLOOR) > 0);
        assert.deepEqual(tooNew, [], `needs GLIBC_${tooNew.join(', GLIBC_')}`);
      });
    }
  } else {
    test(`${platform}: exports napi_register_module_v1, system dylibs only, macOS ${MACOS_MIN[platform]} or later`, (t) => {
      const f = machoFacts(file);
      t.diagnostic(`dylibs ${f.dylibs.join(', ')}; minos ${f.minos}; ${f.exported.length} exported symbols`);
      assert.ok(f.exported.includes('_napi_register_module_v1'));
      assert.ok(f.dylibs.includes('/usr/lib/libSystem.B.dylib'), `dylibs: ${f.dylibs.join(', ')}`);
      assert.deepEqual(f.dylibs.filter((d) => !/^\/usr\/lib\/[^/]+\.dylib$|^\/System\/Library\//.test(d)), []);
      assert.ok(f.minos, 'no minimum macOS version recorded');
      assert.ok(compareVersions(f.minos, MACOS_MIN[platform]) <= 0, `needs macOS ${f.minos}`);
    });
  }
}
