'use strict';
// `condense-native pi-setup` run as a user runs it (a spawned process, a
// scratch agent directory and project): the settings it writes, what it
// prints on stdout and stderr, its exit status, its backup, a second run
// with nothing to do, and a file it cannot parse left untouched. Runs under
// `node --test` and `bun test` (the CLI runs on the same runtime).

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

const ROOT = path.join(__dirname, '..');
const BIN = path.join(ROOT, 'bin', 'condense-native.js');
const FILTERED = { source: 'npm:pi-condense', extensions: [] };
const { binaryOf } = require('../pi/binary.js');
const { piNode, PI_DIR } = require('./helpers/real-pi.js');

const VERSION = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
// What pi-setup says of this clone once it is declared (its binary, or the
// build that makes one), and the warning when there is none.
const BINARY = binaryOf(ROOT);
const CLONE_LINE = (entry, file) => `  condense-native: ${JSON.stringify(entry)} in ${file}: ${VERSION} in ${ROOT}, ${BINARY.file ? `native binary ${path.basename(BINARY.file)}` : 'no native binary'}\n`;
const CLONE_STDERR = BINARY.file ? '' : `condense-native: warning: condense-native: no native binary for ${process.platform}-${process.arch} in ${ROOT}: ${BINARY.fix}; until then pi-condense renders with its own code\n`;
const NOT_INSTALLED = (entry, file) => `  pi-condense: ${JSON.stringify(entry)} in ${file}: not installed yet; pi installs it at its next start (it needs the network)\n`;

// A copy of this package at `dest` (what pi-setup and its check read):
// a clone by default, an installed copy without Cargo.toml.
function copyPackage(dest, { clone = true } = {}) {
  fs.mkdirSync(dest, { recursive: true });
  for (const name of ['package.json', 'index.js', 'loader.js', 'bin', 'cli', 'js', 'pi', ...(clone ? ['Cargo.toml'] : [])]) {
    fs.cpSync(path.join(ROOT, name), path.join(dest, name), { recursive: true });
  }
  return dest;
}

function scratch() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-pi-setup-'));
  const agent = path.join(root, 'agent');
  const project = path.join(root, 'project');
  fs.mkdirSync(agent);
  fs.mkdirSync(project);
  const user = path.join(agent, 'settings.json');
  const local = path.join(project, '.pi', 'settings.json');
  const run = (args = [], bin = BIN) => {
    const env = { ...process.env, PI_CODING_AGENT_DIR: agent, HOME: root };
    const r = spawnSync(process.execPath, [bin, 'pi-setup', ...args], { cwd: project, env, encoding: 'utf8' });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const json = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
  return { root, agent, project, user, local, run, json, done: () => fs.rmSync(root, { recursive: true, force: true }) };
}

test('pi-setup: an unfiltered pi-condense entry becomes the filter, this clone is declared, a backup is kept; a second run has nothing to do', () => {
  const t = scratch();
  try {
    const before = '{\n    "theme": "dark",\n    "packages": ["npm:pi-condense@2.4.3", "npm:other"],\n    "contextPrune": { "enabled": true }\n}\n';
    fs.writeFileSync(t.user, before);
    const r = t.run();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, CLONE_STDERR);
    const filtered = { source: 'npm:pi-condense@2.4.3', extensions: [] };
    const check = `what pi loads:\n${NOT_INSTALLED(filtered, t.user)}${CLONE_LINE(ROOT, t.user)}`;
    assert.equal(
      r.stdout,
      `${t.user}, "packages":\n` +
        '-   "npm:pi-condense@2.4.3"\n' +
        '+   {"source":"npm:pi-condense@2.4.3","extensions":[]}\n' +
        `+   ${JSON.stringify(ROOT)}\n` +
        `backup: ${t.user}.bak\n` +
        `written: ${t.user}\n` +
        check,
    );
    assert.equal(fs.readFileSync(`${t.user}.bak`, 'utf8'), before, 'the backup is the old file');
    const after = fs.readFileSync(t.user, 'utf8');
    assert.deepEqual(JSON.parse(after), {
      theme: 'dark',
      packages: [filtered, 'npm:other', ROOT],
      contextPrune: { enabled: true },
    });
    assert.match(after, /^\{\n {4}"theme"/, "the file's indentation is kept");
    assert.ok(!fs.existsSync(t.local), 'the project is left alone');

    const again = t.run();
    assert.equal(again.code, 0);
    assert.equal(again.stdout, `${t.user}: nothing to do (pi-condense's entry is filtered and condense-native is declared)\n${check}`);
    assert.equal(again.stderr, CLONE_STDERR);
    assert.equal(fs.readFileSync(t.user, 'utf8'), after);
    assert.ok(!fs.existsSync(`${t.user}.bak.1`), 'no second backup');
  } finally {
    t.done();
  }
});

test('pi-setup: a file without a packages list, and no file at all, get both entries', () => {
  const t = scratch();
  try {
    fs.writeFileSync(t.user, '{ "theme": "light" }');
    const r = t.run();
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^\+ {3}\{"source":"npm:pi-condense","extensions":\[\]\} {3}\(pi installs pi-condense at its next start\)$/m);
    assert.deepEqual(t.json(t.user), { theme: 'light', packages: [FILTERED, ROOT] });

    // --project with no .pi folder: a new file, no backup, --source as given.
    const clone = path.join(t.root, 'my-clone');
    copyPackage(clone);
    const p = t.run(['--project', '--source', clone]);
    assert.equal(p.code, 0, p.stderr);
    // condense-native and pi-condense are declared in the user's file: the
    // project needs nothing.
    assert.match(p.stdout, /nothing to do/);
    assert.ok(!fs.existsSync(t.local));

    fs.rmSync(t.user);
    const fresh = t.run(['--project', '--source=../my-clone']);
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.equal(
      fresh.stdout,
      `${t.local} (a new file), "packages":\n` +
        '+   {"source":"npm:pi-condense","extensions":[]}   (pi installs pi-condense at its next start)\n' +
        `+   ${JSON.stringify(clone)}\n` +
        `written: ${t.local}\n` +
        `what pi loads:\n${NOT_INSTALLED(FILTERED, t.local)}  condense-native: ${JSON.stringify(clone)} in ${t.local}: ${VERSION} in ${clone}, no native binary\n`,
    );
    assert.equal(fresh.stderr, `condense-native: warning: condense-native: no native binary for ${process.platform}-${process.arch} in ${clone}: run \`npm ci && npm run build\` in ${clone} (a Rust toolchain builds the addon); until then pi-condense renders with its own code\n`);
    assert.deepEqual(t.json(t.local), { packages: [FILTERED, clone] });
    assert.ok(!fs.existsSync(`${t.local}.bak`));
  } finally {
    t.done();
  }
});

test('pi-setup: the entry already there is kept as it is; the project file is chosen when it declares pi-condense', () => {
  const t = scratch();
  try {
    const settled = { packages: [{ source: 'npm:pi-condense', extensions: [], skills: [] }, ROOT] };
    fs.writeFileSync(t.user, JSON.stringify(settled));
    const r = t.run();
    assert.equal(r.code, 0);
    assert.match(r.stdout, /nothing to do/);
    assert.equal(fs.readFileSync(t.user, 'utf8'), JSON.stringify(settled), 'not rewritten');

    // The project declares pi-condense unfiltered: pi goes by that entry, so
    // that is the file changed, with the entry's other keys kept.
    fs.mkdirSync(path.dirname(t.local));
    fs.writeFileSync(t.local, JSON.stringify({ packages: [{ source: '../vendor/pi-condense', prompts: [] }] }));
    fs.mkdirSync(path.join(t.project, 'vendor', 'pi-condense'), { recursive: true });
    fs.writeFileSync(path.join(t.project, 'vendor', 'pi-condense', 'package.json'), JSON.stringify({ name: 'pi-condense', version: '2.9.1' }));
    const p = t.run(['--dry-run']);
    assert.equal(p.code, 0, p.stderr);
    assert.equal(
      p.stdout,
      `${t.local}, "packages":\n` +
        '-   {"source":"../vendor/pi-condense","prompts":[]}\n' +
        '+   {"source":"../vendor/pi-condense","prompts":[],"extensions":[]}\n' +
        'dry run: nothing written\n' +
        'what pi loads (once written):\n' +
        `  pi-condense: {"source":"../vendor/pi-condense","prompts":[],"extensions":[]} in ${t.local}: 2.9.1 in ${path.join(t.project, 'vendor', 'pi-condense')}, loaded through condense-native\n` +
        CLONE_LINE(ROOT, t.user),
    );
    assert.deepEqual(t.json(t.local), { packages: [{ source: '../vendor/pi-condense', prompts: [] }] }, 'a dry run writes nothing');
    const w = t.run();
    assert.equal(w.code, 0);
    assert.deepEqual(t.json(t.local), { packages: [{ source: '../vendor/pi-condense', prompts: [], extensions: [] }] });
    assert.equal(fs.readFileSync(`${t.local}.bak`, 'utf8'), JSON.stringify({ packages: [{ source: '../vendor/pi-condense', prompts: [] }] }));
  } finally {
    t.done();
  }
});

test('pi-setup: a file that is not JSON, or not a settings object, is left untouched with exit 2', () => {
  const t = scratch();
  try {
    for (const [text, why] of [
      ['{ "packages": ["npm:pi-condense"], }', /is not valid JSON \(.+\); left as it is/],
      ['[1, 2]', /holds an array, not a settings object; left as it is/],
      ['{ "packages": "npm:pi-condense" }', /"packages" is string, not a list; left as it is/],
    ]) {
      fs.writeFileSync(t.user, text);
      const r = t.run();
      assert.equal(r.code, 2, text);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, new RegExp(`^condense-native: error: ${t.user.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      assert.match(r.stderr, why);
      assert.equal(fs.readFileSync(t.user, 'utf8'), text);
      assert.ok(!fs.existsSync(`${t.user}.bak`));
    }
  } finally {
    t.done();
  }
});

test('pi-setup: --help, and bad flags named on stderr with exit 2', () => {
  const t = scratch();
  try {
    const h = t.run(['--help']);
    assert.equal(h.code, 0);
    assert.match(h.stdout, /^usage: condense-native pi-setup \[--user \| --project\] \[--source <dir> \| --npm\] \[--dry-run\]/);
    assert.match(h.stdout, /--project +the project's \.pi\/settings\.json/);
    assert.equal(h.stderr, '');
    for (const [args, message] of [
      [['--bogus'], "unknown argument '--bogus'"],
      [['--user', '--project'], '--user and --project exclude each other'],
      [['--source'], '--source needs the folder of a condense-native clone'],
      [['--source', '/does/not/exist'], '--source /does/not/exist: no such folder'],
      [['--source', 'npm:condense-native'], "--source takes the folder of a condense-native clone, not 'npm:condense-native' (for the registry package: --npm)"],
      [['--npm', '--source', '.'], '--source and --npm exclude each other'],
    ]) {
      const r = t.run(args);
      assert.equal(r.code, 2, args.join(' '));
      assert.equal(r.stdout, '');
      assert.ok(r.stderr.startsWith(`condense-native: error: ${message}`), r.stderr);
      assert.match(r.stderr, /try 'condense-native pi-setup --help'/);
    }
    assert.ok(!fs.existsSync(t.user), 'nothing written');
  } finally {
    t.done();
  }
});

test("pi-setup repairs a condense-native entry pi cannot load, and says why: not installed, a folder that is gone, a tarball", () => {
  const t = scratch();
  try {
    // The issue's case: the README's first block, run from source before the
    // package is on the registry.
    fs.writeFileSync(t.user, JSON.stringify({ packages: ['npm:pi-condense', 'npm:condense-native'] }));
    const r = t.run();
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      new RegExp(
        `^-   "npm:condense-native"   \\(pi cannot load it: not installed in ${escape(path.join(t.agent, 'npm'))}; pi tries to install it at each start, which fails while condense-native is not on the npm registry\\)\n\\+   ${escape(JSON.stringify(ROOT))}\n`,
        'm',
      ),
    );
    assert.deepEqual(t.json(t.user), { packages: [FILTERED, ROOT] });
    assert.match(t.run().stdout, /nothing to do/);

    for (const dead of [path.join(t.root, 'gone', 'condense-native'), path.join(t.root, 'condense-native-0.1.0.tgz')]) {
      if (dead.endsWith('.tgz')) fs.writeFileSync(dead, 'not a folder');
      fs.writeFileSync(t.user, JSON.stringify({ packages: [FILTERED, dead] }));
      const d = t.run();
      assert.equal(d.code, 0, d.stderr);
      assert.match(d.stdout, new RegExp(`^-   ${escape(JSON.stringify(dead))}   \\(pi cannot load it: (no such folder|.*is a file, which pi would load as an extension file, not a package)`, 'm'));
      assert.deepEqual(t.json(t.user), { packages: [FILTERED, ROOT] });
    }
  } finally {
    t.done();
  }
});

test('pi-setup from an installed copy writes npm:condense-native only when pi can load it (pi install, or --npm); else exit 2, nothing written', () => {
  const t = scratch();
  try {
    const installed = copyPackage(path.join(t.root, 'npx-cache', 'node_modules', 'condense-native'), { clone: false });
    const bin = path.join(installed, 'bin', 'condense-native.js');
    fs.writeFileSync(t.user, JSON.stringify({ packages: ['npm:pi-condense'] }));
    const before = fs.readFileSync(t.user, 'utf8');
    const r = t.run([], bin);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, new RegExp(`^condense-native: error: this condense-native \\(${escape(installed)}\\) is an installed copy pi does not load, and ${escape(path.join(t.agent, 'npm', 'node_modules'))} holds no condense-native: run \`pi install npm:condense-native\` first, or pass --source <the folder of a clone> \\(or --npm once the package is on the registry\\)\n$`));
    assert.equal(fs.readFileSync(t.user, 'utf8'), before);
    assert.ok(!fs.existsSync(`${t.user}.bak`));

    // --npm: written, and the check says it will not load yet.
    const n = t.run(['--npm', '--dry-run'], bin);
    assert.equal(n.code, 0, n.stderr);
    assert.match(n.stdout, /^\+ {3}"npm:condense-native" {3}\(pi installs it at its next start\)$/m);
    assert.match(n.stderr, /condense-native: warning: condense-native: "npm:condense-native" in .* cannot load \(not installed in .*\): until it does, pi runs with neither extension\n/);

    // After `pi install npm:condense-native`: that entry, loading.
    const piInstalled = copyPackage(path.join(t.agent, 'npm', 'node_modules', 'condense-native'), { clone: false });
    const w = t.run([], bin);
    assert.equal(w.code, 0, w.stderr);
    assert.deepEqual(t.json(t.user), { packages: [FILTERED, 'npm:condense-native'] });
    assert.match(w.stdout, new RegExp(`^  condense-native: "npm:condense-native" in ${escape(t.user)}: ${escape(VERSION)} in ${escape(piInstalled)}, no native binary$`, 'm'));
    assert.match(w.stderr, new RegExp(`no native binary for ${process.platform}-${process.arch} in ${escape(piInstalled)}: install the platform package: \`npm install condense-native-${process.platform}-${process.arch}`));
  } finally {
    t.done();
  }
});

const piRuns = piNode();

test('pi itself, resolving the packages pi-setup wrote, loads condense-native and filters pi-condense', { skip: piRuns.why || false }, () => {
  const t = scratch();
  try {
    const piCondense = path.join(t.root, 'pi-condense');
    fs.mkdirSync(piCondense);
    fs.writeFileSync(path.join(piCondense, 'package.json'), JSON.stringify({ name: 'pi-condense', version: '2.4.3', pi: { extensions: ['./index.ts'] } }));
    fs.writeFileSync(path.join(piCondense, 'index.ts'), 'export default function () {}\n');
    fs.writeFileSync(t.user, JSON.stringify({ packages: [piCondense, 'npm:condense-native'] }));
    const r = t.run();
    assert.equal(r.code, 0, r.stderr);
    // pi's package manager, offline, on the files as written.
    const script = `
      const fs = require('node:fs');
      const { pathToFileURL } = require('node:url');
      const read = (f) => { try { return JSON.parse(fs.readFileSync(f, 'utf8')); } catch { return {}; } };
      import(pathToFileURL(${JSON.stringify(path.join(PI_DIR, 'dist', 'core', 'package-manager.js'))}).href).then(async ({ DefaultPackageManager }) => {
        const settingsManager = { getGlobalSettings: () => read(${JSON.stringify(t.user)}), getProjectSettings: () => read(${JSON.stringify(t.local)}), getNpmCommand: () => undefined, isProjectTrusted: () => true };
        const pm = new DefaultPackageManager({ cwd: ${JSON.stringify(t.project)}, agentDir: ${JSON.stringify(t.agent)}, settingsManager });
        const r = await pm.resolve(async () => 'skip');
        console.log(JSON.stringify(r.extensions.map((e) => [e.path, e.enabled])));
      });`;
    const pi = spawnSync(piRuns.node, ['-e', script], { encoding: 'utf8', env: { ...process.env, PI_OFFLINE: '1', HOME: t.root } });
    assert.equal(pi.status, 0, pi.stderr);
    assert.deepEqual(JSON.parse(pi.stdout), [
      [path.join(piCondense, 'index.ts'), false],
      [path.join(ROOT, 'pi', 'extension.js'), true],
    ]);
    // pi-setup's own check says the same.
    assert.match(r.stdout, new RegExp(`^  pi-condense: .* in ${escape(t.user)}: 2\\.4\\.3 in ${escape(piCondense)}, loaded through condense-native$`, 'm'));
    assert.match(r.stdout, new RegExp(`^  condense-native: ${escape(JSON.stringify(ROOT))} in ${escape(t.user)}: `, 'm'));
  } finally {
    t.done();
  }
});
