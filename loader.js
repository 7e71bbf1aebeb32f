'use strict';

// Finds the native binding for this platform, or falls back to the pure-JS
// implementation with the same surface (js/fallback.js).
//
// Order of attempts, for each binary that fits this platform (on Linux the
// detected libc's first, then the other one's, in case detection was wrong):
//   1. ./condense-native.<target>.node next to this file (a local build);
//   2. the optional package condense-native-<target> (what `npm install`
//      brings in through optionalDependencies).
// The first one that loads and has the expected exports wins. When none
// does, or CONDENSE_NATIVE_FORCE_FALLBACK is set, the pure-JS object is
// used and a warning (code CONDENSE_NATIVE_FALLBACK) is emitted once per
// process, naming the platform and what was tried.
//
// libc detection uses Node's own diagnostic report rather than the
// detect-libc package: `header.glibcVersionRuntime` is the glibc version the
// running process actually uses (gnu_get_libc_version), which is the right
// question (a system can have both libcs installed), and it costs no
// dependency. Where the report is missing or inconclusive, the filesystem
// tells (musl's dynamic loader, /usr/bin/ldd's text).

const fs = require('node:fs');
const path = require('node:path');

const BINARY_NAME = 'condense-native';
const PACKAGE_NAME = 'condense-native';
const FORCE_ENV = 'CONDENSE_NATIVE_FORCE_FALLBACK';
const WARNING_CODE = 'CONDENSE_NATIVE_FALLBACK';
const WARNED = Symbol.for('condense-native.fallback-warned');

// What the native binding must provide for this package to use it.
const REQUIRED_EXPORTS = ['pruneBytes', 'NativePruner', 'NativeEngine', 'computeThinkingBoundary', 'sizeOf'];

// Every target a binary is published for (napi-rs's platform names).
const TARGETS = {
  linux: {
    x64: { glibc: 'linux-x64-gnu', musl: 'linux-x64-musl' },
    arm64: { glibc: 'linux-arm64-gnu', musl: 'linux-arm64-musl' },
  },
  darwin: { x64: 'darwin-x64', arm64: 'darwin-arm64' },
  win32: { x64: 'win32-x64-msvc', arm64: 'win32-arm64-msvc' },
};

const SUPPORTED = [];
for (const archs of Object.values(TARGETS)) {
  for (const entry of Object.values(archs)) {
    if (typeof entry === 'string') SUPPORTED.push(entry);
    else SUPPORTED.push(...Object.values(entry));
  }
}

function isTruthyEnv(value) {
  return value !== undefined && value !== '' && value !== '0' && value.toLowerCase() !== 'false';
}

function libcFromReport() {
  const report = process.report;
  if (!report || typeof report.getReport !== 'function') return null;
  // Network details are slow to gather and not needed here.
  const hasExclude = 'excludeNetwork' in report;
  const savedExclude = hasExclude ? report.excludeNetwork : undefined;
  try {
    if (hasExclude) report.excludeNetwork = true;
    const header = report.getReport().header;
    if (!header) return null;
    return header.glibcVersionRuntime ? 'glibc' : 'no-glibc';
  } catch {
    return null;
  } finally {
    if (hasExclude) report.excludeNetwork = savedExclude;
  }
}

function libcFromFilesystem() {
  for (const dir of ['/lib', '/usr/lib']) {
    try {
      if (fs.readdirSync(dir).some((f) => f.startsWith('ld-musl-'))) return 'musl';
    } catch {
      // no such directory
    }
  }
  try {
    const ldd = fs.readFileSync('/usr/bin/ldd', 'latin1');
    if (ldd.includes('musl')) return 'musl';
    if (/GNU C Library|glibc|GLIBC/.test(ldd)) return 'glibc';
  } catch {
    // no ldd script
  }
  return null;
}

/** 'glibc' | 'musl' on Linux, null elsewhere. */
function detectLibc() {
  if (process.platform !== 'linux') return null;
  const fromReport = libcFromReport();
  if (fromReport === 'glibc') return 'glibc';
  const fromFs = libcFromFilesystem();
  if (fromFs) return fromFs;
  // A report without a glibc version comes from a runtime not built on glibc.
  return fromReport === 'no-glibc' ? 'musl' : 'glibc';
}

/** The binaries that can run here, best first; [] where none is built. */
function targetsFor(platform, arch, libc) {
  const entry = TARGETS[platform] && TARGETS[platform][arch];
  if (!entry) return [];
  if (typeof entry === 'string') return [entry];
  const first = libc === 'musl' ? 'musl' : 'glibc';
  const second = first === 'musl' ? 'glibc' : 'musl';
  return [entry[first], entry[second]];
}

function describeError(err) {
  if (err && err.code === 'MODULE_NOT_FOUND') return 'not installed';
  const message = err && err.message ? err.message.split('\n')[0] : String(err);
  return message;
}

function hasRequiredExports(binding) {
  return (
    binding !== null &&
    (typeof binding === 'object' || typeof binding === 'function') &&
    REQUIRED_EXPORTS.every((name) => typeof binding[name] === 'function')
  );
}

function tryLoad(targets, attempts) {
  for (const target of targets) {
    const candidates = [
      { label: `./${BINARY_NAME}.${target}.node`, file: path.join(__dirname, `${BINARY_NAME}.${target}.node`) },
      { label: `${PACKAGE_NAME}-${target}`, request: `${PACKAGE_NAME}-${target}` },
    ];
    for (const candidate of candidates) {
      // A local build is optional: only report it when it is there and fails.
      if (candidate.file && !fs.existsSync(candidate.file)) continue;
      let binding;
      try {
        binding = require(candidate.file || candidate.request);
      } catch (err) {
        attempts.push(`${candidate.label} (${describeError(err)})`);
        continue;
      }
      if (!hasRequiredExports(binding)) {
        attempts.push(`${candidate.label} (loaded, but lacks ${REQUIRED_EXPORTS.join('/')}: stale or foreign binary)`);
        continue;
      }
      return { binding, target };
    }
  }
  return null;
}

function platformLabel(libc) {
  return `${process.platform}-${process.arch}${libc ? ` (${libc})` : ''}`;
}

function warnOnce(message) {
  if (globalThis[WARNED]) return;
  globalThis[WARNED] = true;
  process.emitWarning(message, { code: WARNING_CODE });
}

function load() {
  const libc = detectLibc();
  const targets = targetsFor(process.platform, process.arch, libc);
  const attempts = [];
  const fallbackNote =
    'using the pure-JavaScript implementation instead (same results, slower).';

  // `cause`: why no binary answers; the warning adds what answers instead.
  let cause;
  let reason;
  if (isTruthyEnv(process.env[FORCE_ENV])) {
    cause = `${FORCE_ENV} is set: not loading a native binary on ${platformLabel(libc)}`;
    reason = `${cause}; ${fallbackNote}`;
  } else {
    const found = tryLoad(targets, attempts);
    if (found) {
      return { binding: found.binding, backend: 'native', target: found.target, libc, attempts, cause: null };
    }
    if (targets.length === 0) {
      cause = `no native binary is published for ${platformLabel(libc)} (binaries exist for ${SUPPORTED.join(', ')})`;
      reason = `${cause}; ${fallbackNote}`;
    } else {
      const tried = attempts.length > 0 ? attempts.join('; ') : targets.map((t) => `${PACKAGE_NAME}-${t}`).join(', ');
      cause = `no native binary could be loaded on ${platformLabel(libc)}; tried ${tried}`;
      reason =
        `${cause}. ` +
        `${fallbackNote} Reinstalling without --omit=optional / --no-optional ` +
        `brings in the ${PACKAGE_NAME}-${targets[0]} package.`;
    }
  }
  warnOnce(`condense-native: ${reason}`);
  return { binding: require('./js/fallback.js'), backend: 'js', target: null, libc, attempts, cause };
}

const loaded = load();

// The binding's own exports plus which backend answered. A fresh object, so
// the native module's exports are never modified.
module.exports = Object.freeze(
  Object.assign({}, loaded.binding, {
    backend: loaded.backend,
    target: loaded.target,
    libc: loaded.libc,
    loadErrors: Object.freeze(loaded.attempts.slice()),
    // Why no native binary answers (the warning's first part), null when
    // one does: for pi's extension, which says it in its status.
    fallbackReason: loaded.cause,
  }),
);
