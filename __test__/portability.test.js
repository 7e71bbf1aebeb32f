'use strict';
// Portability of the x86-64 binary: it is built for the baseline x86-64 CPU
// (no target-cpu; the scan's own vector code is SSE2, part of that baseline),
// and the crates that use wider instructions (memchr, simdutf8) pick them at
// run time. Node runs under QEMU user mode with CPU models that lack AVX/AVX2
// (Nehalem) and SSE4.2 too (Core 2 Duo); the addon must load there and give
// the same results as on the host CPU, for the sample session and every
// conformance vector.
//
// A control shows the check has teeth: a program that executes one AVX2
// instruction dies with SIGILL under the same QEMU CPU model (it needs rustc,
// and is skipped without it).
//
// Skips itself unless this is x86-64 Linux with qemu-x86_64 on PATH (Debian:
// apt-get install qemu-user) and a local build of the addon.
// Runs under `node --test` and `bun test` (either way, Node runs in QEMU).

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawnSync } = require('node:child_process');
const { localNative } = require('./helpers/local-native.js');

const ROOT = path.join(__dirname, '..');
const LOADER = path.join(ROOT, 'loader.js');
const CPUS = ['Nehalem', 'core2duo'];

function findOnPath(name) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    const file = dir && path.join(dir, name);
    if (file && fs.existsSync(file) && fs.statSync(file).isFile()) return file;
  }
  return null;
}

const QEMU = findOnPath('qemu-x86_64');
const NODE = typeof Bun !== 'undefined' ? findOnPath('node') : process.execPath;
const RUSTC = findOnPath('rustc');

const native = process.platform === 'linux' && process.arch === 'x64' ? localNative() : null;
const skip =
  process.platform !== 'linux' || process.arch !== 'x64'
    ? 'x86-64 Linux only'
    : !QEMU
      ? 'qemu-x86_64 not found (apt-get install qemu-user)'
      : !native
        ? 'no local build of the addon (npm run build)'
        : !NODE
          ? 'node not found'
          : false;

// Runs in the guest (and on the host, for the reference): loads the binding
// through the loader and prints a digest of every result.
const GUEST = `
'use strict';
const fs = require('node:fs');
const crypto = require('node:crypto');
const [loaderPath, samplePath, helpersPath] = process.argv.slice(2);
delete process.env.CONDENSE_NATIVE_FORCE_FALLBACK;
const binding = require(loaderPath);
const { loadVectors } = require(helpersPath);
const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');
const json = (v) => (v === undefined || v === null ? null : JSON.stringify(v));
function digest(fn) {
  try {
    const r = fn();
    return { ...r, messages: r.messages === null ? null : sha(r.messages) };
  } catch (e) {
    return { error: e.code };
  }
}
const sample = JSON.parse(fs.readFileSync(samplePath, 'utf8'));
const out = {
  backend: binding.backend,
  target: binding.target,
  sample: digest(() => binding.pruneBytes(Buffer.from(JSON.stringify(sample.messages)), json(sample.state), json(sample.config), sample.thinkingBoundaryTimestamp)),
  sizeOf: binding.sizeOf(Buffer.from(JSON.stringify(sample.messages))),
  vectors: {},
};
for (const c of loadVectors()) {
  if (c.group === 'boundary') {
    out.vectors[c.name] = binding.computeThinkingBoundary(c.assistantTimestamps, c.keepLastTurns, c.prev ?? null);
    continue;
  }
  out.vectors[c.name] = [Buffer.from(JSON.stringify(c.messages) ?? 'null'), Buffer.from(c.rawMessages)].map((bytes) =>
    digest(() => binding.pruneBytes(bytes, json(c.state), json(c.config), c.thinkingBoundaryTimestamp ?? null)),
  );
}
process.stdout.write(JSON.stringify(out));
`;

function runGuest(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-native-qemu-'));
  try {
    const script = path.join(dir, 'guest.js');
    fs.writeFileSync(script, GUEST);
    const args = [script, LOADER, path.join(ROOT, 'sample', 'session.json'), path.join(__dirname, 'helpers', 'vectors.js')];
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const r = spawnSync(prefix[0] || NODE, [...prefix.slice(1), ...(prefix.length ? [NODE] : []), ...args], {
      encoding: 'utf8',
      env,
      maxBuffer: 64 * 1024 * 1024,
    });
    assert.equal(r.status, 0, `guest failed (${r.signal || r.status}): ${r.stderr}`);
    return JSON.parse(r.stdout);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

let hostResult;
function host() {
  hostResult ??= runGuest([]);
  return hostResult;
}

test('control: QEMU CPU models without AVX2 hide it and trap its instructions', { skip: skip || (!RUSTC && 'rustc not found'), timeout: 60_000 }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-native-probe-'));
  try {
    const src = path.join(dir, 'probe.rs');
    const exe = path.join(dir, 'probe');
    fs.writeFileSync(
      src,
      `use std::arch::x86_64::*;
#[target_feature(enable = "avx2")]
unsafe fn avx2_add(a: i32) -> i32 {
    let v = _mm256_add_epi32(_mm256_set1_epi32(a), _mm256_set1_epi32(1));
    _mm256_extract_epi32::<0>(v)
}
fn main() {
    println!("avx2={}", is_x86_feature_detected!("avx2"));
    println!("sum={}", unsafe { avx2_add(std::hint::black_box(41)) });
}
`,
    );
    // Unoptimized, so the AVX2 instructions stay in the code.
    const build = spawnSync(RUSTC, ['-C', 'opt-level=0', '-o', exe, src], { encoding: 'utf8' });
    assert.equal(build.status, 0, build.stderr);
    const max = spawnSync(QEMU, ['-cpu', 'max', exe], { encoding: 'utf8' });
    assert.equal(max.status, 0, max.stderr);
    assert.equal(max.stdout, 'avx2=true\nsum=42\n');
    for (const cpu of CPUS) {
      const r = spawnSync(QEMU, ['-cpu', cpu, exe], { encoding: 'utf8' });
      assert.equal(r.stdout, 'avx2=false\n', cpu);
      assert.ok(r.signal === 'SIGILL' || r.status === 132, `${cpu}: expected SIGILL, got ${r.signal || r.status}`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

for (const cpu of CPUS) {
  test(`the addon runs on a ${cpu} CPU (no AVX2) and agrees with the host CPU`, { skip, timeout: 120_000 }, () => {
    const guest = runGuest([QEMU, '-cpu', cpu]);
    assert.equal(guest.backend, 'native');
    assert.equal(guest.target, native.target);
    assert.ok(guest.sample.pruned, 'the sample is pruned');
    const reference = host();
    assert.deepEqual(guest.sample, reference.sample);
    assert.equal(guest.sizeOf, reference.sizeOf);
    assert.equal(Object.keys(guest.vectors).length, Object.keys(reference.vectors).length);
    for (const name of Object.keys(reference.vectors)) {
      assert.deepEqual(guest.vectors[name], reference.vectors[name], name);
    }
    // And the digest matches the pure-JS implementation's output bytes.
    const pure = require('../js/pure.js');
    const sample = JSON.parse(fs.readFileSync(path.join(ROOT, 'sample', 'session.json'), 'utf8'));
    const expected = pure.pruneMessages(sample.messages, {
      state: sample.state,
      config: sample.config,
      thinkingStripBoundaryTimestamp: sample.thinkingBoundaryTimestamp,
    });
    assert.equal(guest.sample.afterChars, expected.afterChars);
    assert.equal(guest.sample.messages, crypto.createHash('sha256').update(JSON.stringify(expected.messages)).digest('hex'));
  });
}
