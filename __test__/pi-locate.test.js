'use strict';
// pi/locate.js: which pi-condense the pi package loads and whether the
// addon is switched off, read from settings files the way pi reads its
// `packages` (project first, then the agent directory), in a scratch tree.
// Runs under `node --test` and `bun test`.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { locatePiCondense, switchedOff, switchWarnings, dropInFor, ownEntryLoaded, loadsEntry, prunerSwitch } = require('../pi/locate.js');

function tree() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-locate-'));
  const cwd = path.join(root, 'project');
  const agent = path.join(root, 'agent');
  fs.mkdirSync(path.join(cwd, '.pi'), { recursive: true });
  fs.mkdirSync(agent, { recursive: true });
  const pkg = (dir, version, name = 'pi-condense') => {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, version }));
    return dir;
  };
  const settings = (file, value) => fs.writeFileSync(file, JSON.stringify(value));
  return { root, cwd, agent, pkg, settings, done: () => fs.rmSync(root, { recursive: true, force: true }) };
}

test('pi-condense is found from the settings packages, the project before the agent directory', () => {
  const t = tree();
  try {
    assert.equal(locatePiCondense(t.cwd, t.agent, {}).dir, null);
    assert.match(locatePiCondense(t.cwd, t.agent, {}).why, /no pi-condense package is declared/);

    // User scope: npm:pi-condense with the package filter, installed where pi installs it.
    t.settings(path.join(t.agent, 'settings.json'), { packages: [{ source: 'npm:pi-condense@2.4.3', extensions: [] }, 'npm:condense-native'] });
    assert.equal(locatePiCondense(t.cwd, t.agent, {}).dir, null, 'declared but not installed');
    const user = t.pkg(path.join(t.agent, 'npm', 'node_modules', 'pi-condense'), '2.4.3');
    assert.deepEqual(locatePiCondense(t.cwd, t.agent, {}), { dir: user, version: '2.4.3', how: `npm:pi-condense@2.4.3 in ${path.join(t.agent, 'settings.json')}` });

    // Project scope wins: a local path, resolved from the settings file.
    const local = t.pkg(path.join(t.root, 'checkout'), '2.9.1');
    t.settings(path.join(t.cwd, '.pi', 'settings.json'), { packages: ['../../checkout', 'npm:something-else'] });
    assert.equal(locatePiCondense(t.cwd, t.agent, {}).dir, local);
    assert.equal(locatePiCondense(t.cwd, t.agent, {}).version, '2.9.1');

    // A local path holding another package is not pi-condense.
    t.settings(path.join(t.cwd, '.pi', 'settings.json'), { packages: [path.relative(path.join(t.cwd, '.pi'), t.pkg(path.join(t.root, 'other'), '1.0.0', 'other'))] });
    assert.equal(locatePiCondense(t.cwd, t.agent, {}).dir, user);

    // The variable names a folder, over everything.
    assert.equal(locatePiCondense(t.cwd, t.agent, { CONDENSE_NATIVE_PI_CONDENSE: local }).dir, local);
    assert.match(locatePiCondense(t.cwd, t.agent, { CONDENSE_NATIVE_PI_CONDENSE: t.root }).why, /holds no pi-condense package\.json/);
  } finally {
    t.done();
  }
});

test('the addon is switched off by CONDENSE_NATIVE (off, false, 0) or condenseNative.enabled, the project over the agent directory; another CONDENSE_NATIVE is a warning', () => {
  const t = tree();
  try {
    assert.equal(switchedOff(t.cwd, t.agent, {}), null);
    for (const v of ['off', 'OFF', '0', 'false', ' False ']) assert.equal(switchedOff(t.cwd, t.agent, { CONDENSE_NATIVE: v }), `CONDENSE_NATIVE=${v}`);
    for (const v of ['on', '1', 'true', '']) {
      assert.equal(switchedOff(t.cwd, t.agent, { CONDENSE_NATIVE: v }), null);
      assert.deepEqual(switchWarnings(t.cwd, t.agent, { CONDENSE_NATIVE: v }), []);
    }
    // What the setting does not take either is named, and the addon stays
    // on (as with "enabled": "no").
    for (const v of ['no', 'js', 'banana']) {
      assert.equal(switchedOff(t.cwd, t.agent, { CONDENSE_NATIVE: v }), null, v);
      assert.deepEqual(switchWarnings(t.cwd, t.agent, { CONDENSE_NATIVE: v }), [
        `CONDENSE_NATIVE=${v} is not off, false or 0 (nor on, true or 1): not read, condense-native stays on (CONDENSE_NATIVE=off switches it off)`,
      ]);
    }
    t.settings(path.join(t.agent, 'settings.json'), { condenseNative: { enabled: false } });
    assert.match(switchedOff(t.cwd, t.agent, {}), /"condenseNative": \{ "enabled": false \} in .*agent/);
    t.settings(path.join(t.cwd, '.pi', 'settings.json'), { condenseNative: { enabled: true } });
    assert.equal(switchedOff(t.cwd, t.agent, {}), null, 'the project switches it back on');
    assert.equal(switchedOff(t.cwd, t.agent, { CONDENSE_NATIVE: 'off' }), 'CONDENSE_NATIVE=off', 'the environment wins');
  } finally {
    t.done();
  }
});

test('a condenseNative.enabled that is not a boolean is a warning naming the value, and the addon stays on', () => {
  const t = tree();
  try {
    assert.deepEqual(switchWarnings(t.cwd, t.agent), []);
    t.settings(path.join(t.agent, 'settings.json'), { condenseNative: { enabled: 'no' } });
    assert.equal(switchedOff(t.cwd, t.agent, {}), null);
    const [only, ...rest] = switchWarnings(t.cwd, t.agent);
    assert.deepEqual(rest, []);
    assert.equal(only, `"condenseNative": { "enabled": "no" } in ${path.join(t.agent, 'settings.json')} is not true or false: not read, condense-native stays on (write false to switch it off)`);
    t.settings(path.join(t.cwd, '.pi', 'settings.json'), { condenseNative: false });
    assert.match(switchWarnings(t.cwd, t.agent)[0], /^"condenseNative" in .*project.*is false, not an object: not read/);
    t.settings(path.join(t.cwd, '.pi', 'settings.json'), { condenseNative: { enabled: true } });
    assert.equal(switchWarnings(t.cwd, t.agent).length, 1);
  } finally {
    t.done();
  }
});

test('each pi-condense line has its drop-in, other versions none', () => {
  assert.equal(dropInFor('2.4.3'), '2.4');
  assert.equal(dropInFor('2.4.0'), '2.4');
  assert.equal(dropInFor('2.9.1'), '2.9');
  assert.equal(dropInFor('2.9.7-beta.1'), '2.9');
  for (const v of ['2.5.0', '3.0.0', '2.10.1', '', 'x']) assert.equal(dropInFor(v), null, v);
});

test("whether pi loads pi-condense's own entry too: an unfiltered entry in the scope pi goes by, or -e on its command line", () => {
  const t = tree();
  try {
    const user = path.join(t.agent, 'settings.json');
    const project = path.join(t.cwd, '.pi', 'settings.json');
    assert.equal(ownEntryLoaded(t.cwd, t.agent, []), null, 'no settings');
    // Not installed yet counts: pi installs a missing npm package at start.
    t.settings(user, { packages: ['npm:pi-condense', 'npm:condense-native'] });
    assert.deepEqual(ownEntryLoaded(t.cwd, t.agent, []), {
      how: 'settings',
      scope: 'user',
      file: user,
      index: 0,
      entry: 'npm:pi-condense',
      source: 'npm:pi-condense',
      loadsOwn: true,
    });
    t.settings(user, { packages: [{ source: 'npm:pi-condense@2.9.1' }, 'npm:condense-native'] });
    assert.equal(ownEntryLoaded(t.cwd, t.agent, []).entry.source, 'npm:pi-condense@2.9.1', 'an object without a filter');
    t.settings(user, { packages: [{ source: 'npm:pi-condense', extensions: [] }, 'npm:condense-native'] });
    assert.equal(ownEntryLoaded(t.cwd, t.agent, []), null, 'the filter');

    // The project's entry wins over the user's, either way.
    t.settings(project, { packages: ['npm:pi-condense'] });
    assert.equal(ownEntryLoaded(t.cwd, t.agent, []).file, project);
    t.settings(user, { packages: ['npm:pi-condense', 'npm:condense-native'] });
    t.settings(project, { packages: [{ source: 'npm:pi-condense', extensions: [] }] });
    assert.equal(ownEntryLoaded(t.cwd, t.agent, []), null, "the project's filter replaces the user's entry");
    // ... unless it is a delta (autoload: false) that does not exclude the entry.
    t.settings(project, { packages: [{ source: 'npm:pi-condense', autoload: false, skills: [] }] });
    assert.equal(ownEntryLoaded(t.cwd, t.agent, []).file, user);
    t.settings(project, { packages: [{ source: 'npm:pi-condense', autoload: false, extensions: ['-index.ts'] }] });
    assert.equal(ownEntryLoaded(t.cwd, t.agent, []), null);
    fs.rmSync(project);

    // A local checkout, by the name in its package.json.
    const local = t.pkg(path.join(t.root, 'checkout'), '2.4.3');
    t.settings(user, { packages: ['../checkout', 'npm:condense-native'] });
    assert.equal(ownEntryLoaded(t.cwd, t.agent, []).source, '../checkout');
    t.settings(user, { packages: ['npm:condense-native'] });
    assert.equal(ownEntryLoaded(t.cwd, t.agent, []), null);

    // pi's command line.
    for (const argv of [['-e', local], ['--extension', path.join(local, 'index.ts')], [`--extension=${local}`], ['-e', 'npm:pi-condense@2.4.3']]) {
      assert.equal(ownEntryLoaded(t.cwd, t.agent, ['node', 'pi', '-p', ...argv, 'hi']).how, 'command line', argv.join(' '));
    }
    assert.equal(ownEntryLoaded(t.cwd, t.agent, ['node', 'pi', '-e', path.join(t.root, 'other.js'), 'hi']), null);
  } finally {
    t.done();
  }
});

test("a package filter loads pi-condense's entry unless it leaves it out", () => {
  for (const [entry, loads] of [
    ['npm:pi-condense', true],
    [{ source: 'npm:pi-condense' }, true],
    [{ source: 'npm:pi-condense', extensions: [] }, false],
    [{ source: 'npm:pi-condense', extensions: ['!index.ts'] }, false],
    [{ source: 'npm:pi-condense', extensions: ['-index.ts'] }, false],
    [{ source: 'npm:pi-condense', extensions: ['!*.ts'] }, false],
    [{ source: 'npm:pi-condense', extensions: ['other.ts'] }, false],
    [{ source: 'npm:pi-condense', extensions: ['index.ts'] }, true],
    [{ source: 'npm:pi-condense', extensions: ['*.ts'] }, true],
    [{ source: 'npm:pi-condense', extensions: ['!other.ts'] }, true],
    [{ source: 'npm:pi-condense', extensions: ['other.ts', '+index.ts'] }, true],
  ]) {
    assert.equal(loadsEntry(entry), loads, JSON.stringify(entry));
  }
});

test("pi-condense's own switch is read from the agent directory's settings, off unless true", () => {
  const t = tree();
  try {
    const file = path.join(t.agent, 'settings.json');
    assert.deepEqual(prunerSwitch(t.agent), { on: false, file, why: `contextPrune.enabled is unset in ${file}, and pi-condense's default is off` });
    t.settings(file, { contextPrune: { enabled: false } });
    assert.equal(prunerSwitch(t.agent).on, false);
    assert.match(prunerSwitch(t.agent).why, /"enabled": false/);
    t.settings(file, { contextPrune: { enabled: true } });
    assert.equal(prunerSwitch(t.agent).on, true);
  } finally {
    t.done();
  }
});
