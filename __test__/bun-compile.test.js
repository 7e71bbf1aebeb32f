'use strict';
// pi's release binary is a `bun build --compile` program that loads each
// extension, and what the extension requires, from the package folder on
// disk through jiti's static build (`jiti/static`, no native tries, pi's
// modules as virtual modules). This test compiles such a program here (the
// jiti pi 1.6.0 ships, bundled into the binary as pi's build bundles it),
// installs condense-native from its packed tarballs into a folder the way
// pi installs a package, and has the compiled program load an extension
// file there that requires the addon both ways pi's binary reaches an
// extension's dependencies: through jiti (the extension's own `require`)
// and through Node's `createRequire` (as pi/extension.js loads condense-
// native's modules). Each must load the native binary (not the JS
// fallback) and render the bundled sample as js/pure.js does, with the
// drop-in too.
//
// pi's binary is compiled with --compile-autoload-package-json (its
// build:binary script, read here): without it a compiled program reads no
// package.json at run time, so neither the platform package (its `main` is
// the .node file) nor the drop-ins (package `exports`) resolve, and the addon
// runs on its JS fallback after the fallback warning. Both are checked.
//
// Skips without Bun (node_modules/.bin/bun), without a local build of the
// addon, and on other platforms than Linux and macOS.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { packRelease, localBinary } = require('./helpers/pack.js');
const pure = require('../js/pure.js');

const ROOT = path.join(__dirname, '..');
const BUN = path.join(ROOT, 'node_modules', '.bin', process.platform === 'win32' ? 'bun.cmd' : 'bun');
const PI_PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', '@earendil-works', 'pi-coding-agent', 'package.json'), 'utf8'));
const SAMPLE = JSON.parse(fs.readFileSync(path.join(ROOT, 'sample', 'session.json'), 'utf8'));

const skip = !['linux', 'darwin'].includes(process.platform)
  ? `compiled Bun programs are checked on Linux and macOS, not ${process.platform}`
  : !fs.existsSync(BUN)
    ? 'no Bun in node_modules/.bin (npm ci installs it)'
    : !localBinary()
      ? 'no local build of the addon (npm run build)'
      : false;

// The compiled program: pi's loader in miniature.
const PROGRAM = `
import { createJiti } from 'jiti/static';
const [file, input, output] = process.argv.slice(2);
const jiti = createJiti(import.meta.url, { moduleCache: false, tryNative: false, virtualModules: {} });
const extension = await jiti.import(file, { default: true });
const result = await extension(input);
await Bun.write(output, JSON.stringify(result));
`;

// The extension, in the folder the package is installed in.
const EXTENSION = `
'use strict';
const fs = require('node:fs');
const { createRequire } = require('node:module');
module.exports = function render(input) {
  const { messages, state, config, thinkingBoundaryTimestamp } = JSON.parse(fs.readFileSync(input, 'utf8'));
  const out = {};
  for (const [via, load] of [['jiti', require], ['createRequire', createRequire(__filename)]]) {
    const api = load('condense-native');
    const r = api.pruneMessages(messages, { state, config, thinkingStripBoundaryTimestamp: thinkingBoundaryTimestamp });
    out[via] = { backend: api.backend, pruned: r.pruned, afterChars: r.afterChars, text: JSON.stringify(r.messages) };
  }
  let dropIn;
  try {
    dropIn = createRequire(__filename)('condense-native/pi-condense-2.4');
  } catch (err) {
    out.dropIn = { error: err.message.split(String.fromCharCode(10))[0] };
    return out;
  }
  const indexer = {
    isSummarized: (id) => Object.hasOwn(state.records, id) || Object.hasOwn(state.dedupAliases, id),
    getRecord: (id) => state.records[id],
    getShortRefForToolCallId: (id) => state.shortRefs[id],
    getChainEntries: () => state.chains,
    getPerBatchSummaryTextForToolCallIds: () => '',
    findChainEntryByBlockId: () => undefined,
  };
  const d = dropIn.pruneMessages(messages, indexer, config.chainCompression, config.errorPurge, config.thinkingStrip, config.protection, config.recoveryGraceTurns, thinkingBoundaryTimestamp ?? undefined);
  out.dropIn = { pruned: d.pruned, afterChars: d.afterChars };
  return out;
};
`;

// The --compile flags of pi's own build:binary script (autoload switches).
function piCompileFlags() {
  const script = (PI_PKG.scripts && PI_PKG.scripts['build:binary']) || '';
  const flags = script.match(/--(?:no-)?compile-autoload-[\w-]+/g) || [];
  assert.ok(flags.includes('--compile-autoload-package-json'), `pi ${PI_PKG.version}'s build:binary no longer says --compile-autoload-package-json: ${script}`);
  return flags;
}

function run(file, args, options) {
  const r = spawnSync(file, args, { encoding: 'utf8', maxBuffer: 1 << 26, timeout: 300_000, ...options });
  if (r.error || r.status !== 0) throw new Error(`${file} ${args.join(' ')} failed (${r.error ? r.error.message : `exit ${r.status}`}):\n${r.stdout}\n${r.stderr}`);
  return r;
}

test("a bun build --compile program loads the addon from an installed package as pi's binary loads an extension's dependencies", { skip, timeout: 600_000 }, () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-bun-compile-'));
  try {
    const env = { ...process.env, HOME: path.join(work, 'home'), npm_config_cache: path.join(work, 'npm-cache'), npm_config_offline: 'true', npm_config_registry: 'http://127.0.0.1:9/' };
    for (const key of Object.keys(env)) if (/^(npm_(?!config_)|CONDENSE_NATIVE)/i.test(key)) delete env[key];
    fs.mkdirSync(env.HOME);
    const tarballs = packRelease(work, env);

    // The package folder, as pi's npm install leaves it.
    const pkgDir = path.join(work, 'agent', 'npm');
    fs.mkdirSync(pkgDir, { recursive: true });
    fs.writeFileSync(path.join(pkgDir, 'package.json'), JSON.stringify({ name: 'pi-extensions', private: true }));
    run('npm', ['install', tarballs.main.file, tarballs.platform.file, '--prefix', pkgDir, '--legacy-peer-deps', '--no-audit', '--no-fund'], { cwd: work, env });
    const extension = path.join(pkgDir, 'extension.js');
    fs.writeFileSync(extension, EXTENSION);

    const input = path.join(work, 'sample.json');
    fs.writeFileSync(input, JSON.stringify(SAMPLE));
    const want = pure.pruneMessages(SAMPLE.messages, { state: SAMPLE.state, config: SAMPLE.config, thinkingStripBoundaryTimestamp: SAMPLE.thinkingBoundaryTimestamp });

    // The program, compiled with the jiti of pi's own dependencies, once with
    // pi's flags and once with package.json autoload off.
    const src = path.join(ROOT, '.tmp', `bun-compile-${process.pid}.mjs`);
    fs.mkdirSync(path.dirname(src), { recursive: true });
    fs.writeFileSync(src, PROGRAM);
    const flags = piCompileFlags();
    const variants = [
      { name: "pi's flags", flags, backend: 'native' },
      { name: 'no package.json autoload', flags: flags.filter((f) => f !== '--compile-autoload-package-json').concat('--no-compile-autoload-package-json'), backend: 'js' },
    ];
    try {
      for (const v of variants) {
        const binary = path.join(work, `pi-like-${v.backend}`);
        run(BUN, ['build', '--compile', ...v.flags, src, '--outfile', binary], { cwd: ROOT, env });
        const output = path.join(work, `out-${v.backend}.json`);
        const r = run(binary, [extension, input, output], { cwd: work, env });
        const got = JSON.parse(fs.readFileSync(output, 'utf8'));
        for (const via of ['jiti', 'createRequire']) {
          assert.equal(got[via].backend, v.backend, `${v.name}, ${via}: backend`);
          assert.equal(got[via].pruned, true);
          assert.equal(got[via].afterChars, want.afterChars, `${v.name}, ${via}: afterChars`);
          assert.equal(got[via].text, JSON.stringify(want.messages), `${v.name}, ${via}: the render differs from js/pure.js`);
        }
        if (v.backend === 'native') {
          assert.doesNotMatch(r.stderr, /CONDENSE_NATIVE_FALLBACK/, `${v.name}: the compiled program fell back to JS`);
          assert.equal(got.dropIn.pruned, true, `${v.name}: the drop-in did not load: ${got.dropIn.error}`);
        } else {
          assert.match(r.stderr, /CONDENSE_NATIVE_FALLBACK/, `${v.name}: no fallback warning`);
          assert.match(got.dropIn.error, /Cannot find module 'condense-native\/pi-condense-2\.4'/, `${v.name}: the drop-in resolved without package.json`);
        }
      }
    } finally {
      fs.rmSync(src, { force: true });
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
});
