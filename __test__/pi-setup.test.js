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

const BIN = path.join(__dirname, '..', 'bin', 'condense-native.js');
const FILTERED = { source: 'npm:pi-condense', extensions: [] };

function scratch() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-pi-setup-'));
  const agent = path.join(root, 'agent');
  const project = path.join(root, 'project');
  fs.mkdirSync(agent);
  fs.mkdirSync(project);
  const user = path.join(agent, 'settings.json');
  const local = path.join(project, '.pi', 'settings.json');
  const run = (args = []) => {
    const env = { ...process.env, PI_CODING_AGENT_DIR: agent };
    const r = spawnSync(process.execPath, [BIN, 'pi-setup', ...args], { cwd: project, env, encoding: 'utf8' });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const json = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
  return { root, agent, project, user, local, run, json, done: () => fs.rmSync(root, { recursive: true, force: true }) };
}

test('pi-setup: an unfiltered pi-condense entry becomes the filter, condense-native is added, a backup is kept; a second run has nothing to do', () => {
  const t = scratch();
  try {
    const before = '{\n    "theme": "dark",\n    "packages": ["npm:pi-condense@2.4.3", "npm:other"],\n    "contextPrune": { "enabled": true }\n}\n';
    fs.writeFileSync(t.user, before);
    const r = t.run();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.equal(
      r.stdout,
      `${t.user}, "packages":\n` +
        '-   "npm:pi-condense@2.4.3"\n' +
        '+   {"source":"npm:pi-condense@2.4.3","extensions":[]}\n' +
        '+   "npm:condense-native"   (pi installs it at its next start)\n' +
        `backup: ${t.user}.bak\n` +
        `written: ${t.user}\n`,
    );
    assert.equal(fs.readFileSync(`${t.user}.bak`, 'utf8'), before, 'the backup is the old file');
    const after = fs.readFileSync(t.user, 'utf8');
    assert.deepEqual(JSON.parse(after), {
      theme: 'dark',
      packages: [{ source: 'npm:pi-condense@2.4.3', extensions: [] }, 'npm:other', 'npm:condense-native'],
      contextPrune: { enabled: true },
    });
    assert.match(after, /^\{\n {4}"theme"/, "the file's indentation is kept");
    assert.ok(!fs.existsSync(t.local), 'the project is left alone');

    const again = t.run();
    assert.equal(again.code, 0);
    assert.equal(again.stdout, `${t.user}: nothing to do (pi-condense's entry is filtered and condense-native is declared)\n`);
    assert.equal(again.stderr, '');
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
    assert.deepEqual(t.json(t.user), { theme: 'light', packages: [FILTERED, 'npm:condense-native'] });

    // --project with no .pi folder: a new file, no backup, --source as given.
    const tarball = path.join(t.root, 'condense-native-0.1.0.tgz');
    const p = t.run(['--project', '--source', tarball]);
    assert.equal(p.code, 0, p.stderr);
    assert.equal(p.stderr, '');
    // condense-native and pi-condense are declared in the user's file: the
    // project needs nothing.
    assert.match(p.stdout, /nothing to do/);
    assert.ok(!fs.existsSync(t.local));

    fs.rmSync(t.user);
    const fresh = t.run(['--project', `--source=${tarball}`]);
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.equal(
      fresh.stdout,
      `${t.local} (a new file), "packages":\n` +
        '+   {"source":"npm:pi-condense","extensions":[]}   (pi installs pi-condense at its next start)\n' +
        `+   ${JSON.stringify(tarball)}\n` +
        `written: ${t.local}\n`,
    );
    assert.deepEqual(t.json(t.local), { packages: [FILTERED, tarball] });
    assert.ok(!fs.existsSync(`${t.local}.bak`));
  } finally {
    t.done();
  }
});

test('pi-setup: the entry already there is kept as it is; the project file is chosen when it declares pi-condense', () => {
  const t = scratch();
  try {
    const settled = { packages: [{ source: 'npm:pi-condense', extensions: [], skills: [] }, 'npm:condense-native'] };
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
        'dry run: nothing written\n',
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
    assert.match(h.stdout, /^usage: condense-native pi-setup \[--user \| --project\] \[--source <spec>\] \[--dry-run\]/);
    assert.match(h.stdout, /--project +the project's \.pi\/settings\.json/);
    assert.equal(h.stderr, '');
    for (const [args, message] of [
      [['--bogus'], "unknown argument '--bogus'"],
      [['--user', '--project'], '--user and --project exclude each other'],
      [['--source'], '--source needs a package source'],
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
