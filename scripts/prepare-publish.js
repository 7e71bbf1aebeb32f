#!/usr/bin/env node
'use strict';
// Readies the main package and the per-platform packages (npm/<platform>/)
// for `npm pack` / `npm publish`:
//   - checks that npm/ holds exactly one package per napi.targets entry, named
//     condense-native-<platform>, with the main package's version (or sets it,
//     with --sync-versions);
//   - with --require-binaries, checks that every platform package holds its
//     .node file (the release refuses to publish a partial set);
//   - writes optionalDependencies (every platform package at the main
//     package's version) into the main package.json.
//
// The optional dependencies are added here, at pack time, and not kept in
// the repository's package.json: while a version's platform packages are not
// on the registry yet, `npm ci` in the repository would fail on them.
//
//   node scripts/prepare-publish.js [--dir DIR] [--sync-versions] [--require-binaries] [--check]
//
// --dir: the package root to work on (default: the repository root);
// --check: change nothing, only report problems.

const fs = require('node:fs');
const path = require('node:path');

// Rust target triple -> napi-rs platform name (npm/<platform>, file suffix).
const TRIPLES = {
  'x86_64-unknown-linux-gnu': 'linux-x64-gnu',
  'x86_64-unknown-linux-musl': 'linux-x64-musl',
  'aarch64-unknown-linux-gnu': 'linux-arm64-gnu',
  'aarch64-unknown-linux-musl': 'linux-arm64-musl',
  'x86_64-apple-darwin': 'darwin-x64',
  'aarch64-apple-darwin': 'darwin-arm64',
  'x86_64-pc-windows-msvc': 'win32-x64-msvc',
  'aarch64-pc-windows-msvc': 'win32-arm64-msvc',
};

function readJson(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

function writeJson(file, value) {
  fs.writeFileSync(file, JSON.stringify(value, null, 2) + '\n');
}

/** The platform packages the main package at `dir` publishes. */
function platformPackages(dir) {
  const pkg = readJson(path.join(dir, 'package.json'));
  const napi = pkg.napi || {};
  const binaryName = napi.binaryName || pkg.name;
  return (napi.targets || []).map((triple) => {
    const platform = TRIPLES[triple];
    if (!platform) throw new Error(`napi.targets: unknown target ${triple}`);
    const packageDir = path.join(dir, 'npm', platform);
    return {
      triple,
      platform,
      name: `${pkg.name}-${platform}`,
      dir: packageDir,
      binary: path.join(packageDir, `${binaryName}.${platform}.node`),
    };
  });
}

function prepare(dir, { syncVersions = false, requireBinaries = false, check = false } = {}) {
  const mainFile = path.join(dir, 'package.json');
  const main = readJson(mainFile);
  const packages = platformPackages(dir);
  const problems = [];

  const expectedDirs = new Set(packages.map((p) => p.platform));
  const npmDir = path.join(dir, 'npm');
  for (const entry of fs.existsSync(npmDir) ? fs.readdirSync(npmDir) : []) {
    if (!expectedDirs.has(entry)) problems.push(`npm/${entry} is not in napi.targets`);
  }

  for (const p of packages) {
    const file = path.join(p.dir, 'package.json');
    if (!fs.existsSync(file)) {
      problems.push(`npm/${p.platform}/package.json is missing`);
      continue;
    }
    const pkg = readJson(file);
    if (pkg.name !== p.name) problems.push(`npm/${p.platform}: name is ${pkg.name}, expected ${p.name}`);
    if (pkg.main !== path.basename(p.binary)) problems.push(`npm/${p.platform}: main is ${pkg.main}, expected ${path.basename(p.binary)}`);
    if (pkg.version !== main.version) {
      if (syncVersions && !check) {
        pkg.version = main.version;
        writeJson(file, pkg);
      } else {
        problems.push(`npm/${p.platform}: version ${pkg.version} differs from the main package's ${main.version}`);
      }
    }
    if (requireBinaries && !fs.existsSync(p.binary)) {
      problems.push(`npm/${p.platform}/${path.basename(p.binary)} is missing (not built or not downloaded)`);
    }
  }

  if (problems.length > 0) {
    const err = new Error(`cannot prepare the packages:\n  - ${problems.join('\n  - ')}`);
    err.problems = problems;
    throw err;
  }

  const optionalDependencies = Object.fromEntries(packages.map((p) => [p.name, main.version]));
  if (!check) {
    main.optionalDependencies = optionalDependencies;
    writeJson(mainFile, main);
  }
  return { main: main.name, version: main.version, packages, optionalDependencies };
}

function main(argv) {
  const args = argv.slice(2);
  const options = { syncVersions: false, requireBinaries: false, check: false };
  let dir = path.join(__dirname, '..');
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--dir') dir = path.resolve(args[++i]);
    else if (a === '--sync-versions') options.syncVersions = true;
    else if (a === '--require-binaries') options.requireBinaries = true;
    else if (a === '--check') options.check = true;
    else {
      console.error(`unknown argument ${a}`);
      return 2;
    }
  }
  try {
    const result = prepare(dir, options);
    const verb = options.check ? 'would list' : 'lists';
    console.log(`${result.main}@${result.version} ${verb} ${result.packages.length} platform packages as optionalDependencies:`);
    for (const p of result.packages) console.log(`  ${p.name} (${p.triple})`);
    return 0;
  } catch (err) {
    console.error(err.message);
    return 1;
  }
}

module.exports = { TRIPLES, platformPackages, prepare };

if (require.main === module) process.exitCode = main(process.argv);
