'use strict';
// The loader, the platform packages and the binaries agree, for each of the
// eight published platforms. A child process pretends to be that platform
// (process.platform, process.arch, and the libc the loader detects: glibc
// through the diagnostic report, musl through its loader in /lib) and loads
// loader.js next to a stand-in package for every platform: it must pick the
// stand-in of exactly that platform. The picked package's package.json must
// make npm install it there (os, cpu, libc), and its binary, where
// `npm run build:all` (or the release) put one in npm/<platform>/, must be
// built for that platform (format, machine, libc from its headers).
// Runs under `node --test` and `bun test`.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const { PLATFORMS, BUILT_HERE, binaryPath } = require('../scripts/xbuild/targets.js');
const { describeBinary, elfLibc } = require('./helpers/binary');

const ROOT = path.join(__dirname, '..');

// loader.js with the JS fallback beside it, and a stand-in package for every
// platform, each answering with its own name.
function makeProject() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-native-platforms-'));
  fs.copyFileSync(path.join(ROOT, 'loader.js'), path.join(dir, 'loader.js'));
  fs.mkdirSync(path.join(dir, 'js'));
  for (const f of ['pure.js', 'fallback.js']) fs.copyFileSync(path.join(ROOT, 'js', f), path.join(dir, 'js', f));
  for (const platform of Object.keys(PLATFORMS)) {
    const pkg = path.join(dir, 'node_modules', `condense-native-${platform}`);
    fs.mkdirSync(pkg, { recursive: true });
    fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: `condense-native-${platform}`, main: 'index.js' }));
    // Answers a function for any name the loader requires, and its platform.
    fs.writeFileSync(
      path.join(pkg, 'index.js'),
      `module.exports = new Proxy({ standIn: ${JSON.stringify(platform)} }, {
         get: (target, name) => (name in target ? target[name] : function standIn() {}),
       });`,
    );
  }
  return dir;
}

// Runs the loader in a child that pretends to be `sim`; returns what it picked.
function pick(dir, sim) {
  const code = `
    const fs = require('node:fs');
    const sim = ${JSON.stringify(sim)};
    Object.defineProperty(process, 'platform', { value: sim.platform, configurable: true, enumerable: true });
    Object.defineProperty(process, 'arch', { value: sim.arch, configurable: true, enumerable: true });
    const header = sim.libc === 'glibc' ? { glibcVersionRuntime: '2.17' } : {};
    Object.defineProperty(process, 'report', { value: { getReport: () => ({ header }) }, configurable: true });
    const readdirSync = fs.readdirSync;
    fs.readdirSync = function (dir, ...rest) {
      if (sim.platform === 'linux' && (dir === '/lib' || dir === '/usr/lib')) {
        return sim.libc === 'musl' ? ['ld-musl-' + sim.muslArch + '.so.1'] : ['ld-linux.so.2'];
      }
      return readdirSync.call(this, dir, ...rest);
    };
    const l = require('./loader.js');
    console.log(JSON.stringify({ backend: l.backend, target: l.target, libc: l.libc, standIn: l.standIn ?? null, errors: l.loadErrors }));`;
  const env = { ...process.env };
  delete env.CONDENSE_NATIVE_FORCE_FALLBACK;
  const r = spawnSync(process.execPath, ['-e', code], { cwd: dir, env, encoding: 'utf8' });
  assert.equal(r.status, 0, `child failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

const project = makeProject();
process.on('exit', () => fs.rmSync(project, { recursive: true, force: true }));

for (const [platform, p] of Object.entries(PLATFORMS)) {
  test(`${platform}: the loader picks condense-native-${platform}, whose package installs there`, () => {
    const sim = { platform: p.os, arch: p.arch, libc: p.libc, muslArch: p.machine };
    const got = pick(project, sim);
    assert.equal(got.libc, p.libc, 'detected libc');
    assert.equal(got.backend, 'native');
    assert.equal(got.target, platform);
    assert.equal(got.standIn, platform, 'the binding came from the package of that platform');
    assert.deepEqual(got.errors, []);

    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'npm', platform, 'package.json'), 'utf8'));
    const file = path.basename(binaryPath(platform));
    assert.equal(pkg.name, `condense-native-${platform}`);
    assert.equal(pkg.main, file);
    assert.deepEqual(pkg.files, [file]);
    assert.deepEqual(pkg.os, [p.os]);
    assert.deepEqual(pkg.cpu, [p.arch]);
    if (p.libc) assert.deepEqual(pkg.libc, [p.libc]);
    else assert.equal(pkg.libc, undefined);
  });

  const file = binaryPath(platform);
  const skip = fs.existsSync(file)
    ? false
    : BUILT_HERE.includes(platform)
      ? `npm/${platform}/${path.basename(file)} is not built (npm run build:all builds it)`
      : `npm/${platform}/${path.basename(file)} is built only by the release workflow`;
  test(`${platform}: the binary in its package is built for ${p.os} ${p.machine}${p.libc ? ` ${p.libc}` : ''}`, { skip }, () => {
    const d = describeBinary(file);
    assert.equal(d.format, p.format, 'file format');
    assert.equal(d.machine, p.machine, 'machine');
    if (p.format === 'elf') assert.equal(elfLibc(d.needed), p.libc, `libc (needs ${d.needed.join(', ')})`);
  });
}

test('every napi.targets entry has a row here, and no other', () => {
  const { TRIPLES } = require('../scripts/prepare-publish.js');
  const targets = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).napi.targets;
  assert.deepEqual(targets.map((t) => TRIPLES[t]).sort(), Object.keys(PLATFORMS).sort());
  for (const [platform, p] of Object.entries(PLATFORMS)) assert.equal(TRIPLES[p.triple], platform);
});
