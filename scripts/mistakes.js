#!/usr/bin/env node
'use strict';
// Ordinary mistakes, made as a new user makes them (docs/RELIABILITY.md,
// "Ordinary mistakes"): each case runs the CLI (or pi's own extension
// runner, for what `/condense-native` says) in a scratch folder of its own
// holding sessions, settings and files a user has, and checks three things:
// the exit status and the output are what the case expects; no file that
// was there before is changed or lost (md5 before and after; pi-setup's
// settings.json, which it writes on purpose after a backup, excepted where
// the case says so); and the mistake is not passed over in silence (an exit
// status other than 0, or a line on stderr, or a case that says why its
// answer needs neither). Prints a Markdown table (command, exit status,
// first line of output, and the line that answers the mistake when it is
// not the first) and exits 1 when any case fails.
//
//   node scripts/mistakes.js             # every case
//   node scripts/mistakes.js --only 1,7  # some

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const { md5Tree } = require('../__test__/helpers/cli-run.js');

const ROOT = path.join(__dirname, '..');
const BIN = path.join(ROOT, 'bin', 'condense-native.js');
const SAMPLE = path.join(ROOT, 'sample', 'session.jsonl');
const PI_STATUS = path.join(ROOT, '__test__', 'helpers', 'pi-status.js');

// The scratch folder every case starts from: what a user's disk holds.
function base(dir) {
  const put = (rel, text) => {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  };
  const sample = fs.readFileSync(SAMPLE, 'utf8');
  put('s.jsonl', sample);
  put('session.json', fs.readFileSync(path.join(ROOT, 'sample', 'session.json')));
  put('s.jsonl.gz', require('node:zlib').gzipSync(sample));
  put('clash/none.jsonl', sample);
  put('x/s.jsonl', sample);
  put('y/s.jsonl', sample);
  put('sessions/p/one.jsonl', sample);
  put('empty.jsonl', '');
  put('notes.jsonl', 'hello\n');
  put('notes.txt', 'my notes\n');
  put('chart.svg', '<svg>my own drawing</svg>\n');
  put('cut.jsonl', sample.slice(0, sample.length - 200));
  put('out/config.jsonl', 'my own file\n');
  put('bad.json', '{ "contextPrune": ');
  put('typo.json', JSON.stringify({ contextPrune: { enabled: true, thinkingstrip: { enabled: true } } }));
  put('two.json', JSON.stringify({ contextPrune: { purgeErrors: { cooldownTurns: 'two' } } }));
  put('theme.json', JSON.stringify({ theme: 'dark' }));
  put('agent/.keep', '');
  put('home/.keep', '');
  put('links/real/a.jsonl', sample);
  fs.mkdirSync(path.join(dir, 'links', 'only'));
  fs.symlinkSync(path.join('..', 'real', 'a.jsonl'), path.join(dir, 'links', 'only', 's.jsonl'));
  fs.mkdirSync(path.join(dir, 'dead'));
  fs.symlinkSync(path.join(dir, 'gone.jsonl'), path.join(dir, 'dead', 'x.jsonl'));
  const tarball = path.join(dir, 'condense-native-0.1.0.tgz');
  fs.writeFileSync(tarball, 'not a folder');
}

const settings = (value) => (dir) => fs.writeFileSync(path.join(dir, 'agent', 'settings.json'), typeof value === 'string' ? value : JSON.stringify(value, null, 2));
const project = (value) => (dir) => {
  fs.mkdirSync(path.join(dir, '.pi'), { recursive: true });
  fs.writeFileSync(path.join(dir, '.pi', 'settings.json'), JSON.stringify(value));
};
// A copy of this package outside any node_modules: a clone not yet built.
const unbuiltClone = (dir) => {
  for (const name of ['package.json', 'Cargo.toml', 'index.js', 'loader.js', 'js', 'cli', 'pi', 'bin']) fs.cpSync(path.join(ROOT, name), path.join(dir, 'clone', name), { recursive: true });
};
// The same, as npx or a project's dependencies hold it.
const installedCopy = (dir) => {
  for (const name of ['package.json', 'index.js', 'loader.js', 'js', 'cli', 'pi', 'bin']) fs.cpSync(path.join(ROOT, name), path.join(dir, 'npx', 'node_modules', 'condense-native', name), { recursive: true });
};

// id, the mistake, the command (after `condense-native`; `pi` cases run
// pi's extension runner), an optional setup, env, the expected exit
// status and a pattern the output (stderr then stdout) matches; `check`:
// what the scratch folder holds after; `writes`: files the case changes on
// purpose; `quiet`: why a clean answer with nothing on stderr is right.
const CASES = [
  // --contexts and --svg: what the CLI writes.
  { mistake: '--contexts names the folder of the session replayed (issue 47)', args: ['replay', '--contexts', 'clash', 'clash/none.jsonl'], code: 2, out: /--contexts clash holds clash\/none\.jsonl, a session file of this run/ },
  { mistake: '--contexts names the session file itself', args: ['replay', '--contexts', 'clash/none.jsonl', 'clash/none.jsonl'], code: 2, out: /is a session file of this run/ },
  { mistake: '--contexts inside the directory replayed', args: ['replay', '--contexts', 'clash/out', 'clash'], code: 2, out: /lies inside clash, a directory being replayed/ },
  { mistake: '--contexts over a folder holding config.jsonl of the user', args: ['replay', '--contexts', 'out', 's.jsonl'], code: 2, out: /out\/config\.jsonl exists: add --force/ },
  { mistake: '--contexts --force over the session replayed', args: ['replay', '--force', '--contexts', 'clash', 'clash/none.jsonl'], code: 2, out: /a session file of this run/ },
  { mistake: '--contexts with two inputs named s.jsonl (issue 47)', args: ['replay', '--policy', 'config', '--contexts', 'both', 'x/s.jsonl', 'y/s.jsonl'], code: 0, out: /^2 session files, 188 model calls$/m, check: (dir) => ['x', 'y'].every((d) => fs.existsSync(path.join(dir, 'both', d, 's', 'config.jsonl'))), quiet: 'written to both/x/s/ and both/y/s/, one folder each' },
  { mistake: '--contexts into a folder that cannot be written (/proc)', args: ['replay', '--contexts', '/proc/condense-out', 's.jsonl'], code: 2, out: /--contexts: cannot write in \/proc\/condense-out/ },
  { mistake: '--contexts under a file', args: ['replay', '--contexts', 'notes.txt/out', 's.jsonl'], code: 2, out: /notes\.txt is a file, not a directory/ },
  { mistake: '--svg names the session replayed', args: ['replay', '--svg', 's.jsonl', 's.jsonl'], code: 2, out: /--svg s\.jsonl is a session file of this run/ },
  { mistake: '--svg over an SVG the user drew', args: ['replay', '--svg', 'chart.svg', 's.jsonl'], code: 2, out: /chart\.svg exists and is not an SVG condense-native wrote: add --force/ },
  { mistake: '--svg into a folder that does not exist', args: ['tune', '--svg', 'charts/tune.svg', 's.jsonl'], code: 2, out: /the folder charts does not exist/ },
  { mistake: '--svg names a directory', args: ['replay', '--svg', 'clash', 's.jsonl'], code: 2, out: /--svg clash is a directory/ },
  { mistake: '--contexts with a session path misspelt', args: ['replay', '--contexts', 'out3', 's.jsnol'], code: 2, out: /s\.jsnol: no such file or directory/ },
  { mistake: 'tune --contexts (a replay flag)', args: ['tune', '--contexts', 'out2', 's.jsonl'], code: 2, out: /tune takes no --contexts/ },
  // Session files.
  { mistake: 'a path that does not exist', args: ['replay', 'nope.jsonl'], code: 2, out: /nope\.jsonl: no such file or directory/ },
  { mistake: 'an empty file', args: ['replay', 'empty.jsonl'], code: 2, out: /empty\.jsonl: empty file/ },
  { mistake: 'a .jsonl that is not a pi session', args: ['replay', 'notes.jsonl'], code: 2, out: /notes\.jsonl(:\d+)?: / },
  { mistake: 'a .txt file', args: ['replay', 'notes.txt'], code: 2, out: /notes\.txt(:\d+)?: / },
  { mistake: "the sample's JSON form (session.json) instead of a session file", args: ['replay', 'session.json'], code: 2, out: /session\.json:1: not a pi session/ },
  { mistake: 'a session still gzipped', args: ['replay', 's.jsonl.gz'], code: 2, out: /s\.jsonl\.gz: not a pi session/ },
  { mistake: 'a folder with no session file', args: ['replay', 'agent'], code: 2, out: /agent: no \*\.jsonl session file under this directory/ },
  { mistake: 'a session cut off mid-line', args: ['replay', 'cut.jsonl'], code: 0, out: /cut\.jsonl: 1 line skipped as pi skips them/ },
  { mistake: 'a folder holding only symbolic links to sessions (issue 47)', args: ['replay', 'links/only'], code: 0, out: /^links\/only\/s\.jsonl: 94 model calls$/m, quiet: 'replayed: links are followed as pi lists sessions' },
  { mistake: 'a symbolic link that leads nowhere', args: ['replay', 'dead'], code: 2, out: /dead\/x\.jsonl: a symbolic link to .*gone\.jsonl, which cannot be read \(ENOENT\)/ },
  { mistake: 'the same session twice, spelled two ways', args: ['replay', 's.jsonl', './s.jsonl'], code: 0, out: /warning: \.\/s\.jsonl: the same file as s\.jsonl: replayed once/ },
  { mistake: 'a good session beside a bad one', args: ['replay', 's.jsonl', 'notes.jsonl'], code: 2, out: /notes\.jsonl(:\d+)?: / },
  // Flags.
  { mistake: 'a misspelt command', args: ['replya', 's.jsonl'], code: 2, out: /unknown command 'replya'/ },
  { mistake: 'a misspelt flag', args: ['replay', '--jsn', 's.jsonl'], code: 2, out: /unknown flag --jsn/ },
  { mistake: 'a policy that does not exist', args: ['replay', '--policy', '2.9', 's.jsonl'], code: 2, out: /--policy takes none, config, .* not '2\.9'/ },
  { mistake: 'a release pi-condense never shipped', args: ['replay', '--release', '2.5.0', 's.jsonl'], code: 2, out: /--release takes 2\.4\.3 or 2\.9\.1, not '2\.5\.0'/ },
  { mistake: 'a retention pi does not have', args: ['replay', '--retention', 'medium', 's.jsonl'], code: 2, out: /--retention takes short or long/ },
  { mistake: 'a model without its provider', args: ['replay', '--model', 'claude-sonnet-4-5', 's.jsonl'], code: 2, out: /--model takes PROVIDER\/ID/ },
  { mistake: "a model not in pi-ai's catalog", args: ['replay', '--model', 'anthropic/claude-nope', 's.jsonl'], code: 2, out: /--model anthropic\/claude-nope is not in pi-ai's catalog/ },
  { mistake: 'a prefix-rule price without the prefix rule', args: ['replay', '--input-price', '3', 's.jsonl'], code: 2, out: /--input-price is the prefix rule's/ },
  { mistake: 'zero characters per token', args: ['replay', '--chars-per-token', '0', 's.jsonl'], code: 2, out: /--chars-per-token takes a positive number, not '0'/ },
  { mistake: 'a flag without its value', args: ['replay', '--svg=', 's.jsonl'], code: 2, out: /--svg needs a value/ },
  { mistake: 'tune given --policy', args: ['tune', '--policy', 'none', 's.jsonl'], code: 2, out: /tune takes no --policy/ },
  { mistake: 'tune given --per-file', args: ['tune', '--per-file', 's.jsonl'], code: 2, out: /tune takes no --per-file/ },
  { mistake: '--gate without a +gate policy', args: ['replay', '--gate', '{"horizon":10}', 's.jsonl'], code: 2, out: /--gate sets the gate of the \+gate policies/ },
  { mistake: 'a gate setting misspelt', args: ['tune', '--gate', '{"horizn":3}', 's.jsonl'], code: 2, out: /--gate\.horizn is not a gate setting/ },
  { mistake: "tune --gate '{\"enabled\":false}' (issue 47)", args: ['tune', '--gate', '{"enabled":false}', 's.jsonl'], code: 0, out: /The gate is switched off \(--gate "enabled": false\): no configuration is ranked behind it\./, quiet: 'said in the report, under the count of configurations' },
  { mistake: '--gate switched off beside a +gate policy', args: ['replay', '--policy', 'config+gate', '--gate', '{"enabled":false}', 's.jsonl'], code: 2, out: /switches the gate off, yet --policy asks for config\+gate/ },
  // Settings.
  { mistake: 'contextPrune of the wrong type in settings.json (issue 47)', setup: settings({ contextPrune: 'yes' }), args: ['replay', 's.jsonl', 'x/s.jsonl'], code: 2, out: /settings\.json: contextPrune must be an object, not the string "yes"; fix it there/ },
  { mistake: 'a number written as a word in settings.json', setup: settings({ contextPrune: { purgeErrors: { cooldownTurns: 'two' } } }), args: ['tune', 's.jsonl'], code: 2, out: /settings\.json: contextPrune\.purgeErrors\.cooldownTurns must be a number >= 0, not the string "two"/ },
  { mistake: 'the same mistake through --config', args: ['replay', '--config', 'two.json', 's.jsonl'], code: 2, out: /--config two\.json: contextPrune\.purgeErrors\.cooldownTurns must be a number >= 0/ },
  { mistake: 'settings.json that is not JSON', setup: settings('{ "contextPrune": '), args: ['replay', 's.jsonl'], code: 2, out: /settings\.json: not JSON/ },
  { mistake: '--config that is not JSON', args: ['replay', '--config', 'bad.json', 's.jsonl'], code: 2, out: /--config bad\.json: not JSON/ },
  { mistake: '--config that does not exist', args: ['replay', '--config', 'mine.json', 's.jsonl'], code: 2, out: /--config mine\.json: cannot read it \(ENOENT\)/ },
  { mistake: 'a misspelt contextPrune key in settings.json (issue 47)', setup: settings({ contextPrune: { enabled: true, thinkingstrip: { enabled: false } } }), args: ['replay', 's.jsonl'], code: 0, out: /warning: .*settings\.json: contextPrune\.thinkingstrip is not a pi-condense setting: not read \(did you mean contextPrune\.thinkingStrip\?\)/ },
  { mistake: 'a misspelt key in --config', args: ['tune', '--config', 'typo.json', 's.jsonl'], code: 0, out: /warning: --config typo\.json: contextPrune\.thinkingstrip is not a pi-condense setting/ },
  { mistake: "pi's settings without a contextPrune block as --config", args: ['replay', '--config', 'theme.json', 's.jsonl'], code: 0, out: /warning: --config theme\.json has no contextPrune block/ },
  { mistake: "contextPrune in the project's settings (pi-condense reads only the agent's)", setup: project({ contextPrune: { enabled: true } }), args: ['replay', 's.jsonl'], code: 0, out: /\.pi\/settings\.json has a contextPrune block, which pi-condense does not read/ },
  { mistake: "pi-condense's master switch left off (its default)", setup: settings({ contextPrune: { purgeErrors: { enabled: true } } }), args: ['replay', 's.jsonl'], code: 0, out: /^pi-condense's master switch is off in these settings/m, quiet: "the report's third line says the switch is off and what \"(yours)\" then means" },
  // The invariant and the exit status.
  { mistake: 'a comparison variant breaks the invariant, not the release the user runs (issue 47)', setup: (dir) => fs.writeFileSync(path.join(dir, 'purge.jsonl'), require('../__test__/helpers/replay-sessions.js').purgeSession()), args: ['replay', '--release', '2.9.1', '--policy', 'config', 'purge.jsonl'], code: 0, out: /of policies compared with yours \(listed above\), none of your release's: exit status 0\./, quiet: 'the report lists the render and says it is not your release\'s: exit status 0' },
  { mistake: 'totals over two files with the live-strip variant (issue 47)', args: ['replay', 's.jsonl', 'x/s.jsonl'], code: 0, out: /^2\.4\.3, thinking strip counted live .* broken by design: 62 of 158 calls \(thinkingStrip\)/m, quiet: 'the totals say "broken by design" of it, as each file table does' },
  // pi-setup.
  { mistake: 'pi-setup from a clone, the README route of before (npm:condense-native not installed) (issue 47)', setup: settings({ packages: ['npm:pi-condense', 'npm:condense-native'] }), args: ['pi-setup'], code: 0, out: /-   "npm:condense-native"   \(pi cannot load it: not installed/, writes: ['agent/settings.json'], check: (dir) => JSON.parse(fs.readFileSync(path.join(dir, 'agent', 'settings.json'), 'utf8')).packages[1] === ROOT, quiet: 'the change is printed with its reason, then what pi loads' },
  { mistake: 'pi-setup --source to a folder that does not exist (issue 47)', args: ['pi-setup', '--source', '/does/not/exist'], code: 2, out: /--source \/does\/not\/exist: no such folder/ },
  { mistake: 'pi-setup --source to a tarball', args: ['pi-setup', '--source', 'condense-native-0.1.0.tgz'], code: 2, out: /--source condense-native-0\.1\.0\.tgz is a file: pi loads a local package from its folder/ },
  { mistake: 'pi-setup --source to another package', args: ['pi-setup', '--source', 'clash'], code: 2, out: /--source clash holds no condense-native package\.json/ },
  { mistake: 'pi-setup --source npm:condense-native', args: ['pi-setup', '--source', 'npm:condense-native'], code: 2, out: /for the registry package: --npm/ },
  { mistake: 'pi-setup from an installed copy pi does not load', setup: installedCopy, bin: 'npx/node_modules/condense-native/bin/condense-native.js', args: ['pi-setup'], code: 2, out: /is an installed copy pi does not load/ },
  { mistake: 'pi-setup on a settings.json that is not JSON', setup: settings('{ "packages": ['), args: ['pi-setup'], code: 2, out: /is not valid JSON .*left as it is/ },
  { mistake: 'pi-setup --user --project', args: ['pi-setup', '--user', '--project'], code: 2, out: /--user and --project exclude each other/ },
  { mistake: 'pi-setup from a clone not yet built', setup: unbuiltClone, bin: 'clone/bin/condense-native.js', args: ['pi-setup'], code: 0, out: /warning: condense-native: no native binary .*run `npm ci && npm run build` in/, writes: ['agent/settings.json'] },
  // pi: what /condense-native says.
  { mistake: 'pi with a clone not yet built (issue 47)', setup: unbuiltClone, pi: { extension: 'clone/pi/extension.js' }, code: 0, out: /loaded as it is: no native binary for .*: run `npm ci && npm run build` in .*clone/ },
  { mistake: 'pi with the gate on: /condense-native (issue 47)', setup: settings({ condenseNative: { gate: { enabled: true } } }), pi: {}, code: 0, out: /the gate is on, so every render is the addon's/, quiet: 'the status says how renders are routed' },
  { mistake: 'pi with CONDENSE_NATIVE=banana (issue 47)', pi: {}, env: { CONDENSE_NATIVE: 'banana' }, code: 0, out: /CONDENSE_NATIVE=banana is not off, false or 0 .*: not read, condense-native stays on/ },
  { mistake: 'pi with CONDENSE_NATIVE=no (issue 47)', pi: {}, env: { CONDENSE_NATIVE: 'no' }, code: 0, out: /CONDENSE_NATIVE=no is not off, false or 0/ },
  { mistake: 'pi with "condenseNative": { "enabled": "no" } (issue 47)', setup: settings({ condenseNative: { enabled: 'no' } }), pi: {}, code: 0, out: /"condenseNative": \{ "enabled": "no" \} in .* is not true or false: not read/ },
  { mistake: 'pi with the addon forced off by the loader: /condense-native after renders (issue 47)', pi: {}, env: { CONDENSE_NATIVE_FORCE_FALLBACK: '1' }, code: 0, out: /CONDENSE_NATIVE_FORCE_FALLBACK is set/ },
];
CASES.forEach((c, i) => {
  c.id = i + 1;
});

const md5s = md5Tree;

const shell = (a) => (/^[\w./=,:@+-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`);

function runCase(c, work) {
  const dir = path.join(work, String(c.id));
  fs.mkdirSync(dir);
  base(dir);
  if (c.setup) c.setup(dir);
  const before = md5s(dir);
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CONDENSE_NATIVE') && k !== 'NODE_TEST_CONTEXT')),
    PI_CODING_AGENT_DIR: path.join(dir, 'agent'),
    HOME: path.join(dir, 'home'),
    ...(c.env || {}),
  };
  let r;
  let shown;
  if (c.pi) {
    const piCondense = path.join(dir, 'pi-condense');
    require(PI_STATUS).standIn(piCondense);
    env.CONDENSE_NATIVE_PI_CONDENSE = piCondense;
    const extension = c.pi.extension ? path.join(dir, c.pi.extension) : undefined;
    r = spawnSync(process.execPath, [PI_STATUS, JSON.stringify({ work: path.join(dir, 'pi'), sizes: [10, 80, 90], extension })], { cwd: dir, env, encoding: 'utf8' });
    const heard = r.status === 0 ? JSON.parse(r.stdout) : { warnings: [], statuses: [] };
    // What the user sees: the warnings at session start, then the status.
    r = { status: r.status, stdout: heard.statuses.map((s) => `condense-native: ${s}`).join('\n'), stderr: `${heard.warnings.join('\n')}${r.status === 0 ? '' : r.stderr}` };
    shown = `pi${Object.entries(c.env || {}).map(([k, v]) => ` ${k}=${v}`).join('')}: /condense-native`;
  } else {
    const bin = c.bin ? path.join(dir, c.bin) : BIN;
    r = spawnSync(process.execPath, [bin, ...c.args], { cwd: dir, env, encoding: 'utf8', timeout: 300_000 });
    shown = `${c.bin ? `node ${c.bin}` : 'condense-native'} ${c.args.map(shell).join(' ')}`;
  }
  const after = md5s(dir);
  const problems = [];
  const text = [r.stderr, r.stdout].filter(Boolean).join('\n');
  if (r.status !== c.code) problems.push(`exit ${r.status}, expected ${c.code}`);
  if (c.check && !c.check(dir)) problems.push('what it wrote is not what the case expects');
  // The scratch folder reads as `.` in the table.
  const relative = text.split(`${dir}${path.sep}`).join('').split(dir).join('.');
  if (!c.out.test(text) && !c.out.test(relative)) problems.push(`output does not match ${c.out}`);
  for (const [file, md5] of Object.entries(before)) {
    if ((c.writes || []).includes(file)) continue;
    if (after[file] === undefined) problems.push(`${file} is gone`);
    else if (after[file] !== md5) problems.push(`${file} changed`);
  }
  if (r.status === 0 && r.stderr.trim() === '' && !c.quiet && !/warning/.test(r.stdout)) problems.push('silent: exit 0 and nothing on stderr');
  const first = (r.stderr.trim() ? r.stderr : r.stdout).trim().split('\n')[0] || '';
  // The line that answers the mistake, when it is not the first.
  const answer = text.split('\n').find((l) => c.out.test(l)) ?? '';
  const changed = (c.writes || []).filter((f) => before[f] !== after[f]);
  const rel = (line) => line.split(`${dir}${path.sep}`).join('').split(dir).join('.');
  return { c, shown, code: r.status, first: rel(first), answer: answer === first ? '' : rel(answer), problems, changed };
}

function cell(text, max = 170) {
  const t = text.length > max ? `${text.slice(0, max - 3)}...` : text;
  return t.replace(/\|/g, '\\|');
}

function main() {
  const only = process.argv.includes('--only') ? new Set(process.argv[process.argv.indexOf('--only') + 1].split(',').map(Number)) : null;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-mistakes-'));
  const rows = [];
  let failed = 0;
  for (const c of CASES) {
    if (only && !only.has(c.id)) continue;
    const r = runCase(c, work);
    if (r.problems.length) failed++;
    rows.push(r);
  }
  fs.rmSync(work, { recursive: true, force: true });
  const lines = ['| # | mistake | command | exit | first line of output | the line that answers it, when not the first |', '| --: | --- | --- | --: | --- | --- |'];
  for (const r of rows) {
    const note = r.changed.length ? ` (${r.changed.join(', ')} rewritten after a backup, as asked)` : '';
    const why = r.c.quiet ? ` (${r.c.quiet})` : '';
    lines.push(`| ${r.c.id} | ${cell(r.c.mistake + note, 200)} | \`${cell(r.shown, 120)}\` | ${r.code} | ${cell(r.first)} | ${cell(r.answer)}${cell(why, 200)} |`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  process.stdout.write(`\n${rows.length} cases, ${rows.length - failed} as expected, ${failed} not; no input file changed or lost${failed ? ' (unless listed below)' : ''}.\n`);
  for (const r of rows.filter((x) => x.problems.length)) process.stdout.write(`case ${r.c.id} (${r.c.mistake}): ${r.problems.join('; ')}\n`);
  process.exit(failed ? 1 : 0);
}

if (require.main === module) main();

module.exports = { CASES };
