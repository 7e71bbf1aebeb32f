'use strict';
// `/condense-native` tells the truth (issue 47): through pi's own extension
// loader and runner (__test__/helpers/pi-status.js, a child process per
// case, over a pi-condense 2.4.3 stand-in whose own render is the pure-JS
// oracle), the status counts the renders each path took, says that the
// gate sends every render to the addon, counts pi-condense's own renders
// in a fallback instead of saying "no render yet", and names why the addon
// did not load with the command that fixes it. Runs under `node --test`
// (under `bun test` it skips: see underBun).

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const { backend } = require('..');
const { standIn } = require('./helpers/pi-status.js');

const ROOT = path.join(__dirname, '..');
const HELPER = path.join(__dirname, 'helpers', 'pi-status.js');
// Under Bun, pi loads an extension without jiti, so the extension cannot
// route pi-condense's import at all (it says so, and pi-condense runs as it
// is): these cases are pi on Node's (real-pi.test.js runs pi's binary too).
const underBun = process.versions.bun ? 'pi under Bun loads extensions without jiti: no route to count' : false;
const native = underBun || (backend === 'native' ? false : 'no native binary loads here');

// Runs a session of context events of `sizes` messages, then /condense-native.
function session({ sizes, settings = null, env = {}, extension } = {}) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-status-'));
  const agent = path.join(work, 'agent');
  fs.mkdirSync(agent);
  if (settings) fs.writeFileSync(path.join(agent, 'settings.json'), JSON.stringify(settings));
  const piCondense = standIn(path.join(work, 'pi-condense'));
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CONDENSE_NATIVE')));
  const r = spawnSync(process.execPath, [HELPER, JSON.stringify({ work, sizes, extension })], {
    encoding: 'utf8',
    env: { ...clean, PI_CODING_AGENT_DIR: agent, CONDENSE_NATIVE_PI_CONDENSE: piCondense, ...env },
  });
  assert.equal(r.status, 0, r.stderr);
  const heard = JSON.parse(r.stdout);
  assert.equal(heard.statuses.length, 1);
  return { ...heard, status: heard.statuses[0] };
}

const counts = (status) => /over (\d+) renders? \((\d+) on the addon, (\d+) on pi-condense's own\)/.exec(status)?.slice(1).map(Number);

test('the status counts the renders each path took: below the crossover and at a session start pi-condense\'s own, then the addon', { skip: native }, () => {
  const s = session({ sizes: [10, 80, 90] });
  assert.deepEqual(s.renders, ['own', 'own', 'native']);
  assert.match(s.status, /^render engine: condense-native \(native addon, the 2\.4 drop-in\); pi-condense 2\.4\.3; below 60 messages, and for the first render after a session opens, pi-condense's own render \(faster there\); last render [\d.]+ ms on the addon, /);
  assert.deepEqual(counts(s.status), [3, 1, 2]);
});

test('with the gate on, the status says every render is the addon\'s, and counts them so', { skip: native }, () => {
  const s = session({ sizes: [10, 80, 90], settings: { condenseNative: { gate: { enabled: true } } } });
  assert.deepEqual(s.renders, ['native', 'native', 'native']);
  assert.match(s.status, /; the gate is on, so every render is the addon's \(the gate reads its slots\), whatever the size; gate \(horizon auto, budget 0\.8\): 3 applies /);
  assert.doesNotMatch(s.status, /below 60 messages/);
  assert.deepEqual(counts(s.status), [3, 3, 0]);
});

test("in a fallback the status counts pi-condense's own renders (not \"no render yet\") and says why, with the fix", { skip: underBun }, () => {
  const forced = session({ sizes: [10, 80], env: { CONDENSE_NATIVE_FORCE_FALLBACK: '1' } });
  assert.deepEqual(forced.renders, ['own', 'own']);
  assert.match(forced.status, /^render engine: pi-condense's own \(JavaScript\); pi-condense 2\.4\.3; loaded as it is: CONDENSE_NATIVE_FORCE_FALLBACK is set: not loading a native binary on /);
  assert.doesNotMatch(forced.status, /no render yet/);
  assert.deepEqual(counts(forced.status), [2, 0, 2]);

  // A clone with no binary built: the build that makes one is named, in the
  // warning and in the status.
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-status-clone-'));
  for (const name of ['package.json', 'Cargo.toml', 'index.js', 'loader.js', 'js', 'pi']) fs.cpSync(path.join(ROOT, name), path.join(copy, name), { recursive: true });
  const built = session({ sizes: [10], extension: path.join(copy, 'pi', 'extension.js') });
  const why = `loaded as it is: no native binary for ${process.platform}-${process.arch}: run \`npm ci && npm run build\` in ${copy} (a Rust toolchain builds the addon)`;
  assert.deepEqual(built.warnings, [`condense-native: ${why}`]);
  assert.ok(built.status.includes(`; ${why}; last render `), built.status);
  assert.deepEqual(counts(built.status), [1, 0, 1]);
});
