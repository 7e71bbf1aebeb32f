'use strict';
// The CLI run as a user runs it (a spawned process, ripgrep style: stdout,
// stderr and exit code checked together): the report of the bundled sample
// with where its settings and release came from, the labels and the legend;
// the --json document and its field reference; totals over several files;
// the user's own settings and installed release found in a temporary agent
// directory; bad files named with their line while the others run; every
// usage error found before any file is read and printed once; --svg never
// writing over a file it reads or one it did not write; tune's own help and
// errors, and the same USD from replay and tune; a quiet broken pipe; the
// progress bar on a terminal only. Every run gets an empty agent directory
// (PI_CODING_AGENT_DIR) unless the test makes one, so the machine's own pi
// settings never leak in. Runs under `node --test` and `bun test`.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { XMLParser, XMLValidator } = require('fast-xml-parser');

const { backend } = require('..');
const { handSession, purgeSession } = require('./helpers/replay-sessions.js');
const { ROOT, BIN, SAMPLE, tmpDir, cliRunner } = require('./helpers/cli-run.js');
const { FIELDS } = require('../cli/help.js');

const skip = backend !== 'native' && 'the replay needs the native binding';
const LABELS = ['no pruning', 'pi-condense 2.4.3 (yours)', '2.4.3 without thinking strip', '2.4.3, thinking strip counted live', 'pi-condense 2.9.1'];

const EMPTY_AGENT = tmpDir();
const cli = cliRunner(EMPTY_AGENT);

const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

// A session whose index entry (line 11), in force for the call that made
// a4, holds a null record: pi-condense throws rebuilding its state there.
function badSession() {
  const a4 = { role: 'assistant', content: [], timestamp: Date.UTC(2026, 0, 1, 0, 0, 21) };
  return (
    `${handSession().text.trimEnd()}\n` +
    '{"type":"custom","customType":"context-prune-index","data":{"toolCalls":[null]},"id":"x","parentId":"a3","timestamp":"2026-01-01T00:00:20.000Z"}\n' +
    `${JSON.stringify({ type: 'message', id: 'a4', parentId: 'x', timestamp: '2026-01-01T00:00:21.000Z', message: a4 })}\n`
  );
}

// An agent directory as pi leaves it after `pi install npm:pi-condense` of
// `version`, with `settings` merged into its settings.json.
function agentWith(version, settings = {}) {
  const dir = tmpDir();
  const pkg = path.join(dir, 'npm', 'node_modules', 'pi-condense');
  fs.mkdirSync(pkg, { recursive: true });
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'pi-condense', version }));
  fs.writeFileSync(path.join(dir, 'settings.json'), JSON.stringify({ packages: ['npm:pi-condense'], ...settings }, null, 2));
  return dir;
}

test('no path: the bundled sample, where its settings came from, yours after none, a legend; exit 0', { skip }, () => {
  const r = cli(['replay']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  const lines = r.stdout.split('\n');
  assert.equal(lines[0], `settings: no ${EMPTY_AGENT}/settings.json: pi-condense's defaults; pi-condense not installed: 2.4.3 assumed (--release to choose)`);
  assert.match(lines[1], /^priced as the provider bills each request pi sends \(pi-ai's catalog prices, short retention: the cache lives 5 minutes\)$/);
  assert.match(r.stdout, /^sample\/session\.jsonl: 94 model calls$/m);
  // The rows in the order a user reads them, each with its USD and ratio.
  const rows = LABELS.map((label) => lines.findIndex((l) => l.startsWith(`${label} `)));
  assert.ok(rows.every((i) => i > 0), rows.join());
  assert.deepEqual([...rows].sort((a, b) => a - b), rows);
  assert.match(lines[rows[0]], /\$0\.9468 +1\.000x/);
  assert.match(lines[rows[1]], /\$0\.7981 +0\.843x .* held \(79 calls checked\)$/);
  assert.match(lines[rows[3]], /broken by design: 31 of 79 calls \(thinkingStrip\)$/);
  assert.match(lines[rows[4]], /\$0\.6456 +0\.682x/);
  // The recorded usage: made by this model, and said so; the warm and the
  // compaction's summary explain the difference between the total and the
  // prediction.
  assert.match(r.stdout, /^against the usage pi recorded \(policy none, 94 calls\): 100\.0% of calls in the recorded class; cost \$0\.9154 predicted vs \$0\.9154 recorded \(-?0\.0%\); the \$0\.9468 of no pruning above adds pi's cache warms, \$0\.0059 and pi's compaction summaries, \$0\.0255$/m);
  // What each saving rests on, summing to the difference.
  assert.match(r.stdout, /^pi-condense 2\.4\.3 \(yours\): saves \$0\.1487 against no pruning: stubs, purges and chains \$0\.1484, thinking strip \$0\.0000, cache warms \$0\.0003$/m);
  assert.match(r.stdout, /^pi-condense 2\.9\.1: saves \$0\.3012 against no pruning: stubs, purges and chains \$0\.3012$/m);
  assert.match(r.stdout, /this file's usage is synthetic, made by this same cost model/);
  // The legend explains each term shown, once.
  const legend = lines.slice(lines.indexOf('What the terms mean:') + 1).filter(Boolean);
  for (const term of ['x none', 'rewrites', 'thinkingDropped', 'expired', 'at a flush', 'warms', 'parts', 'compactions', 'invariant']) {
    assert.equal(legend.filter((l) => l.startsWith(`  ${term}: `)).length, 1, term);
  }
  assert.equal(legend.filter((l) => l.startsWith('  orphanSweep: ')).length, 0);
});

test('--json: settings, totals, files and errors; the provider figures under the plain names, the prefix rule only when asked', { skip }, () => {
  const r = cli(['replay', '--json', SAMPLE]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  const doc = JSON.parse(r.stdout);
  assert.deepEqual(Object.keys(doc), ['settings', 'totals', 'files', 'errors', 'summary']);
  assert.deepEqual(doc.settings, { config: `no ${EMPTY_AGENT}/settings.json: pi-condense's defaults`, release: '2.4.3', releaseSource: 'pi-condense not installed: 2.4.3 assumed (--release to choose)', enabled: false });
  assert.deepEqual(doc.errors, []);
  const file = doc.files[0];
  assert.equal(file.file, SAMPLE);
  assert.equal(file.modelCalls, 94);
  assert.equal(file.prefix, undefined);
  assert.deepEqual(file.policies.map((p) => p.label), LABELS);
  const yours = file.policies.find((p) => p.yours);
  assert.equal(yours.policy, 'config');
  for (const gone of ['cost', 'costVsNone', 'cacheWriteChars', 'cacheReadChars', 'billedCacheWriteTokens', 'prefix']) assert.equal(yours[gone], undefined, gone);
  assert.equal(Math.round(yours.costUsd * 1e4), 7981);
  assert.equal(yours.costUsdVsNone.toFixed(3), '0.843');
  assert.equal(typeof yours.cacheWriteTokens, 'number');
  // The totals of one file are that file's figures.
  const total = doc.totals.find((t) => t.policy === 'config');
  assert.equal(total.costUsd, yours.costUsd);
  assert.equal(total.modelCalls, 94);
  assert.deepEqual({ ...doc.summary, elapsedMs: 0 }, { files: 1, failed: 0, modelCalls: 94, invariantBroken: 0, elapsedMs: 0 });
  // Under the prefix rule its own figures appear, under `prefix`.
  const prefix = JSON.parse(cli(['replay', '--json', '--cache-model', 'prefix', '--cache-ttl', '600', '--policy', 'config', SAMPLE]).stdout).files[0];
  assert.equal(prefix.prefix.cacheTtlSeconds, 600);
  const p = prefix.policies.find((x) => x.policy === 'config');
  assert.equal(typeof p.prefix.costVsNone, 'number');
  assert.equal(typeof p.prefix.cacheWriteChars, 'number');
  const renders = JSON.parse(cli(['replay', '--json', '--renders', '--policy', 'config', SAMPLE]).stdout).files[0];
  assert.equal(renders.policies[1].renders.length, 94);
  assert.match(renders.policies[1].renders[5].prefixHash, /^[0-9a-f]{16}$/);
  assert.equal(renders.policies[1].renders[5].prefix, undefined);
});

test('--help --json lists every field of a real --json document, for replay and for tune', { skip }, () => {
  const paths = (value, at, out) => {
    if (Array.isArray(value)) {
      for (const v of value) paths(v, `${at}[]`, out);
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        const p = at ? `${at}.${k}` : k;
        out.add(p);
        paths(v, p, out);
      }
    }
    return out;
  };
  const listed = (command) => FIELDS[command].map(([f]) => f);
  // A field is covered when it, or an ancestor, is listed.
  const covered = (field, list) => list.some((l) => field === l || l.startsWith(`${field}.`) || l.startsWith(`${field}[]`) || field === l.replace(/\[\]$/, '') || field.startsWith(`${l}.`) || field.startsWith(`${l.replace(/\[\]$/, '')}[]`));
  const replay = JSON.parse(cli(['replay', '--json', '--renders', SAMPLE]).stdout);
  const prefix = JSON.parse(cli(['replay', '--json', '--renders', '--cache-model', 'prefix', SAMPLE]).stdout);
  for (const doc of [replay, prefix]) {
    for (const field of paths(doc, '', new Set())) assert.ok(covered(field, listed('replay')), `replay --json field ${field} is not in --help --json`);
  }
  const tune = JSON.parse(cli(['tune', '--json', SAMPLE]).stdout);
  for (const field of paths(tune, '', new Set())) assert.ok(covered(field, listed('tune')), `tune --json field ${field} is not in --help --json`);
  const page = cli(['replay', '--help', '--json']);
  assert.equal(page.code, 0);
  assert.match(page.stdout, /^  files\[\]\.policies\[\]\.costUsd +USD$/m);
  assert.match(cli(['tune', '--help', '--json']).stdout, /^  perFile\[\] /m);
});

test('several files: the totals first, per file with --per-file; a bad file is named with its line, the rest run, exit 2', { skip }, () => {
  const dir = tmpDir();
  fs.mkdirSync(path.join(dir, 'sub'));
  fs.writeFileSync(path.join(dir, 'a-good.jsonl'), handSession().text);
  fs.copyFileSync(SAMPLE, path.join(dir, 'b-sample.jsonl'));
  fs.writeFileSync(path.join(dir, 'sub', 'bad.jsonl'), badSession());
  fs.writeFileSync(path.join(dir, 'not-a-session.jsonl'), 'hello\n');
  fs.writeFileSync(path.join(dir, 'ignored.txt'), 'not a .jsonl file');
  const bad = path.join(dir, 'sub', 'bad.jsonl');
  const r = cli(['replay', dir]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, new RegExp(`^condense-native: ${escapeRe(bad)}:11: context-prune-index toolCalls\\[0\\] is null`, 'm'));
  assert.match(r.stderr, new RegExp(`^condense-native: ${escapeRe(path.join(dir, 'not-a-session.jsonl'))}: `, 'm'));
  assert.doesNotMatch(r.stderr, /replayAsync|tuneAsync/);
  assert.match(r.stdout, /^2 session files, 97 model calls; 2 files left out \(named on stderr\)$/m);
  assert.match(r.stdout, /^policy +calls +USD +x none +rewrites +compactions +chars sent +invariant +costliest causes of rewrites$/m);
  assert.match(r.stdout, /^pi-condense 2\.4\.3 \(yours\) +97 /m);
  assert.doesNotMatch(r.stdout, /a-good\.jsonl: 3 model calls/);
  const perFile = cli(['replay', '--per-file', dir]);
  assert.match(perFile.stdout, /a-good\.jsonl: 3 model calls/);
  assert.match(perFile.stdout, /b-sample\.jsonl: 94 model calls/);
  const json = cli(['replay', '--json', dir]);
  assert.equal(json.code, 2);
  const doc = JSON.parse(json.stdout);
  assert.deepEqual(doc.files.map((f) => path.relative(dir, f.file)), ['a-good.jsonl', 'b-sample.jsonl']);
  assert.deepEqual(doc.errors.map((e) => path.relative(dir, e.file)).sort(), ['not-a-session.jsonl', path.join('sub', 'bad.jsonl')]);
  assert.deepEqual({ ...doc.errors.find((e) => e.file === bad).error, message: '' }, { code: 'ERR_CONDENSE_INVALID_SESSION', message: '', line: 11 });
  const none = doc.totals.find((t) => t.policy === 'none');
  assert.equal(none.costUsd, doc.files[0].policies[0].costUsd + doc.files[1].policies[0].costUsd);
  assert.equal(doc.summary.failed, 2);
});

test('an empty file, a directory with no session file, a missing path: exit 2 with a message', { skip }, () => {
  const dir = tmpDir();
  const empty = path.join(dir, 'empty.jsonl');
  fs.writeFileSync(empty, '');
  const r = cli(['replay', empty]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, new RegExp(`^condense-native: ${escapeRe(empty)}: empty file`, 'm'));
  const none = tmpDir();
  const d = cli(['replay', none]);
  assert.equal(d.code, 2);
  assert.equal(d.stderr, `condense-native: ${none}: no *.jsonl session file under this directory\n`);
  const missing = cli(['tune', '/nope/x.jsonl']);
  assert.equal(missing.code, 2);
  assert.equal(missing.stderr, 'condense-native: /nope/x.jsonl: no such file or directory\n');
});

test('lines pi skips are counted in one stderr line per file', { skip }, () => {
  const dir = tmpDir();
  const file = path.join(dir, 'skips.jsonl');
  const text = handSession().text.trimEnd().split('\n');
  text.splice(2, 0, 'garbage, not JSON');
  fs.writeFileSync(file, `${text.join('\n')}\n{"type":"message","id":"tr`);
  const r = cli(['replay', file]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, `condense-native: ${file}: 2 lines skipped as pi skips them (not JSON, truncated, or an unknown entry type): line 3, ${text.length + 1}\n`);
  assert.match(r.stdout, /3 model calls/);
});

test('exit 1 when a flush-gated policy changes history between flushes, said where it prints', { skip }, () => {
  const dir = tmpDir();
  const file = path.join(dir, 'purge.jsonl');
  fs.writeFileSync(file, purgeSession());
  const r = cli(['replay', file]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stdout, /^pi-condense 2\.4\.3 \(yours\) .* BROKEN: 1 of 3 calls \(errorPurge\)$/m);
  assert.match(r.stdout, /pi-condense 2\.4\.3 \(yours\): model call 3, output message 1: errorPurge: /);
  assert.match(r.stdout, /The flush-gated invariant broke in 1 render of your release \(listed above\): exit status 1\./);
  // With several files the totals list them too.
  const hand = path.join(dir, 'hand.jsonl');
  fs.writeFileSync(hand, handSession().text);
  const two = cli(['replay', hand, file]);
  assert.equal(two.code, 1);
  assert.match(two.stdout, /^pi-condense 2\.4\.3 \(yours\) .* BROKEN: 1 of 4 calls \(errorPurge\) /m);
  assert.match(two.stdout, new RegExp(`^  ${escapeRe(file)}: pi-condense 2\\.4\\.3 \\(yours\\): model call 3, output message 1: errorPurge: `, 'm'));
  // pi's settings file with error purge off: the invariant holds.
  const settings = path.join(dir, 'settings.json');
  fs.writeFileSync(settings, JSON.stringify({ theme: 'dark', contextPrune: { enabled: true, purgeErrors: { enabled: false } } }));
  const off = cli(['replay', '--config', settings, '--json', file]);
  assert.equal(off.code, 0, off.stderr);
  const config = JSON.parse(off.stdout).files[0].policies.find((p) => p.policy === 'config');
  assert.deepEqual(config.config.errorPurge, { enabled: false });
  assert.equal(config.invariant.broken, 0);
});

test('your settings and release: read from the agent directory as pi-condense reads them, and said', { skip }, () => {
  const agent = agentWith('2.9.1', { contextPrune: { enabled: true, purgeErrors: { enabled: false } } });
  const r = cli(['replay', '--json', SAMPLE], { agentDir: agent });
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout);
  assert.deepEqual(doc.settings, { config: `contextPrune from ${agent}/settings.json`, release: '2.9.1', releaseSource: 'pi-condense 2.9.1 installed', enabled: true });
  const yours = doc.files[0].policies.find((p) => p.yours);
  assert.equal(yours.policy, '2.9.1');
  assert.equal(yours.label, 'pi-condense 2.9.1 (yours)');
  assert.deepEqual(yours.config.errorPurge, { enabled: false });
  const table = cli(['replay', SAMPLE], { agentDir: agent });
  const lines = table.stdout.split('\n');
  assert.equal(lines[0], `settings: contextPrune from ${agent}/settings.json; pi-condense 2.9.1 installed`);
  const rows = lines.filter((l) => /^(no pruning|pi-condense|2\.4\.3)/.test(l)).map((l) => l.split('  ')[0]);
  assert.deepEqual(rows.slice(0, 2), ['no pruning', 'pi-condense 2.9.1 (yours)']);
  // The master switch off (pi-condense's default): said, the row kept.
  const off = agentWith('2.4.3', { contextPrune: { purgeErrors: { enabled: true } } });
  const o = cli(['replay', SAMPLE], { agentDir: off });
  assert.match(o.stdout, /pi-condense's master switch is off in these settings \(contextPrune\.enabled is not true\)/);
  // A settings file without contextPrune: said on stderr, defaults used.
  const bare = agentWith('2.4.3');
  const b = cli(['replay', SAMPLE], { agentDir: bare });
  assert.equal(b.code, 0);
  assert.equal(b.stderr, `condense-native: warning: ${bare}/settings.json has no contextPrune block: pi-condense's defaults\n`);
  // A project's contextPrune is not pi-condense's: said, not used.
  const project = tmpDir();
  fs.mkdirSync(path.join(project, '.pi'));
  fs.writeFileSync(path.join(project, '.pi', 'settings.json'), JSON.stringify({ contextPrune: { purgeErrors: { enabled: false } } }));
  const p = cli(['replay', '--json', SAMPLE], { agentDir: agent, cwd: project });
  assert.match(p.stderr, /\.pi\/settings\.json has a contextPrune block, which pi-condense does not read/);
  // --config and --release win over what is found.
  const given = cli(['replay', '--json', '--release', '2.4.3', SAMPLE], { agentDir: agent });
  assert.equal(JSON.parse(given.stdout).files[0].policies.find((x) => x.yours).policy, 'config');
  // An unreadable settings file is an error, before any session is read.
  const broken = tmpDir();
  fs.writeFileSync(path.join(broken, 'settings.json'), '{"contextPrune": ');
  const e = cli(['replay', SAMPLE], { agentDir: broken });
  assert.equal(e.code, 2);
  assert.match(e.stderr, /^condense-native: error: .*settings\.json: not JSON .*--config FILE\ncondense-native: try 'condense-native replay --help'\n$/);
});

test('usage errors: found before any file is read, printed once, naming the flag, the value and what is allowed', { skip }, () => {
  const dir = tmpDir();
  const conf = (name, value) => {
    const f = path.join(dir, `${name}.json`);
    fs.writeFileSync(f, typeof value === 'string' ? value : JSON.stringify(value));
    return f;
  };
  const cases = [
    [['replay', '--bogus'], /unknown flag --bogus/],
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['replay', '--policy', 'nope'], /--policy takes none, config, no-thinking-strip, live-thinking-strip, 2\.9\.1, config\+gate or 2\.9\.1\+gate, not 'nope'/],
    [['replay', '--retention', 'medium'], /--retention takes short or long, not 'medium'/],
    [['replay', '--cache-model', 'foo'], /--cache-model takes provider or prefix, not 'foo'/],
    [['replay', '--model', 'nonsense'], /--model takes PROVIDER\/ID .*not 'nonsense'/],
    [['replay', '--thinking-boundary', 'x'], /--thinking-boundary takes auto, recorded or config, not 'x'/],
    [['replay', '--cache-model', 'prefix', '--cache-ttl', '-3'], /--cache-ttl takes a non-negative number, not '-3'/],
    [['replay', '--svg='], /--svg needs a value \(FILE\)/],
    [['replay', '--input-price', '3'], /--input-price is the prefix rule's.*add --cache-model prefix/],
    [['replay', '--cache-ttl', '60'], /--cache-ttl is the prefix rule's/],
    [['tune', '--policy', 'none'], /tune takes no --policy/],
    [['tune', '--renders'], /tune takes no --renders/],
    [['replay', '--release', '2.5.0'], /--release takes 2\.4\.3 or 2\.9\.1, not '2\.5\.0'/],
    [['replay', '--config', conf('bad', '{not json')], /--config .*bad\.json: not JSON/],
    [['replay', '--config', conf('two', { contextPrune: { purgeErrors: { cooldownTurns: 'two' } } })], /contextPrune\.purgeErrors\.cooldownTurns must be a number >= 0, not the string "two"/],
    [['replay', '--config', conf('x', { thinkingStrip: { keepLastTurns: 'x' } })], /thinkingStrip\.keepLastTurns must be a number >= 0, not the string "x"/],
    [['tune', '--config', conf('abc', { contextPrune: { recoveryGraceTurns: 'abc' } })], /contextPrune\.recoveryGraceTurns must be a number >= 0, not the string "abc"/],
  ];
  for (const [args, message] of cases) {
    // Two session files, one missing: the error comes first, and once.
    const r = cli([...args, SAMPLE, '/nope/never-read.jsonl']);
    assert.equal(r.code, 2, args.join(' '));
    assert.equal(r.stdout, '', args.join(' '));
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(lines[0], /^condense-native: error: /);
    assert.match(lines[0], message);
    assert.doesNotMatch(r.stderr, /never-read|replayAsync|tuneAsync/);
    assert.match(lines[1], new RegExp(`^condense-native: try 'condense-native ${args[0] === 'tune' ? 'tune' : 'replay'} --help'$`));
  }
  const help = cli(['replay', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: condense-native replay /);
  assert.match(help.stdout, /Exit status:\n  0 /);
  for (const flag of ['--json', '--renders', '--svg', '--force', '--config', '--policy', '--per-file', '--thinking-boundary', '--release', '--chars-per-token', '--cache-ttl']) assert.ok(help.stdout.includes(flag), flag);
  const tuneHelp = cli(['tune', '--help']);
  assert.equal(tuneHelp.code, 0);
  assert.match(tuneHelp.stdout, /^Usage: condense-native tune /);
  assert.doesNotMatch(tuneHelp.stdout, /--policy|--renders|--per-file/);
  // tune says which cache model priced it.
  assert.match(cli(['tune', '--cache-model', 'prefix', SAMPLE]).stdout, /121 configurations priced with the prefix rule/);
  // A recommendation behind the gate: the block to paste turns it on in pi
  // with the settings it was priced with, and the cheapest without it
  // follows.
  const rec = JSON.parse(cli(['tune', '--json', SAMPLE]).stdout).recommended;
  assert.ok(rec.gate, 'the sample recommends a gated configuration');
  const human = cli(['tune', SAMPLE]).stdout;
  assert.deepEqual(pasted(human), rec.paste.settings);
  assert.deepEqual(pasted(human).condenseNative, { gate: { enabled: true, ...rec.gate } });
  assert.match(human, /\nThat figure is behind the cache-aware gate, which runs in pi where condense-native renders pi-condense .*\. Without it the cheapest is /);
});

// The JSON block under "Set in FILE...:" in a tune's report.
function pasted(text) {
  const m = /^Set in [^\n]*:\n(\{\n[\s\S]*?\n\})\n/m.exec(text);
  assert.ok(m, `a block to paste in:\n${text}`);
  return JSON.parse(m[1]);
}

// Issue 46: the paste hint names the file the settings came from (the
// agent directory's, $PI_CODING_AGENT_DIR's when set) and switches pruning
// on where it is off; --json carries the same block.
test('tune: what to set names the settings file and turns pruning on where it is off', { skip }, () => {
  const cases = [
    { name: 'pruning off', settings: { contextPrune: { enabled: false, recoveryGraceTurns: 1 } }, on: false, why: 'contextPrune.enabled is not true in FILE' },
    { name: 'pruning on', settings: { contextPrune: { enabled: true } }, on: true },
    { name: 'no contextPrune', settings: { theme: 'dark' }, on: false, why: 'FILE has no contextPrune block, and pi-condense is off by default' },
    { name: 'no settings file', settings: null, on: false, why: 'there is no FILE, and pi-condense is off by default' },
  ];
  for (const c of cases) {
    const dir = tmpDir();
    const file = path.join(dir, 'settings.json');
    if (c.settings) fs.writeFileSync(file, JSON.stringify(c.settings));
    const json = cli(['tune', '--json', SAMPLE], { agentDir: dir });
    assert.equal(json.code, 0, `${c.name}: ${json.stderr}`);
    const doc = JSON.parse(json.stdout);
    assert.equal(doc.today.pruningOn, c.on, c.name);
    assert.equal(doc.settings.file, file, c.name);
    const p = doc.recommended.paste;
    assert.equal(p.file, file, c.name);
    assert.equal(p.turnsPruning, c.on ? null : 'on', c.name);
    assert.equal(p.settings.contextPrune?.enabled, c.on ? undefined : true, c.name);
    const text = cli(['tune', SAMPLE], { agentDir: dir }).stdout;
    assert.deepEqual(pasted(text), p.settings, `${c.name}: the printed block is --json's`);
    const where = c.settings ? `Set in ${file}, the file your settings came from, ` : `Set in ${file} (the file pi-condense reads; there is none yet, so create it with this), `;
    assert.ok(text.includes(where), `${c.name}: ${where}`);
    if (c.on) {
      assert.doesNotMatch(text, /Pruning is off today/);
      assert.equal(doc.today.costUsd, doc.current.costUsd);
    } else {
      assert.ok(text.includes(`Pruning is off today (${c.why.replace('FILE', file)}): pi sends these sessions unpruned, $0.9468; "(yours)" is what your settings would cost switched on`), `${c.name}: why it is off`);
      assert.match(text, /^Pruning is off today: this turns it on \("enabled": true\)\.$/m);
      assert.equal(doc.today.costUsd, doc.ranked.find((r) => r.release === 'none').costUsd);
    }
  }
  // $PI_CODING_AGENT_DIR wins over ~/.pi/agent; without it, ~/.pi/agent is
  // named as pi-condense finds it.
  const home = tmpDir();
  fs.mkdirSync(path.join(home, '.pi', 'agent'), { recursive: true });
  fs.writeFileSync(path.join(home, '.pi', 'agent', 'settings.json'), JSON.stringify({ contextPrune: { enabled: true } }));
  const other = tmpDir();
  fs.writeFileSync(path.join(other, 'settings.json'), JSON.stringify({ contextPrune: { enabled: false } }));
  const viaEnv = JSON.parse(cli(['tune', '--json', SAMPLE], { agentDir: other, env: { HOME: home } }).stdout);
  assert.equal(viaEnv.recommended.paste.file, path.join(other, 'settings.json'));
  assert.equal(viaEnv.recommended.paste.turnsPruning, 'on');
  const viaHome = cli(['tune', SAMPLE], { agentDir: '', env: { HOME: home } }).stdout;
  assert.ok(viaHome.includes('Set in ~/.pi/agent/settings.json, the file your settings came from, '), viaHome);
  assert.doesNotMatch(viaHome, /Pruning is off today/);
  // --config: the file named.
  const conf = path.join(other, 'mine.json');
  fs.writeFileSync(conf, JSON.stringify({ contextPrune: { enabled: false } }));
  const viaConfig = JSON.parse(cli(['tune', '--json', '--config', conf, SAMPLE]).stdout);
  assert.equal(viaConfig.recommended.paste.file, conf);
  assert.equal(viaConfig.recommended.paste.turnsPruning, 'on');
});

test('tune: ties said and collapsed, what each change saves, every column in the legend', { skip }, () => {
  const r = cli(['tune', SAMPLE]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  // The 16 tied configurations are one row, with the settings that do not matter as "any".
  const first = lines.find((l) => l.startsWith('1-16='));
  assert.match(first, /^1-16=\*\s+2\.9\.1\s+on\s+any\s+any\s+-\s+on\s+\$0\.5300\s+-44\.0%/);
  assert.ok(lines.some((l) => /^17\*? /.test(l)), 'the ranking goes on after the tie');
  assert.ok(r.stdout.includes('1-16=: 16 configurations cost within $0.0100 of the cheapest ($0.5300 to $0.5300): a tie; error purge and grace do not matter on these sessions'));
  assert.match(r.stdout, /^Recommended: release 2\.9\.1, chains on, behind the cache-aware gate \(error purge and grace as yours: they do not matter\): \$0\.5300, 44\.0% less than today \(\$0\.9468, no pruning\)\.$/m);
  assert.match(r.stdout, /^  pruning off -> on, with your settings: saves \$0\.1487$/m);
  assert.match(r.stdout, /^  release 2\.4\.3 -> 2\.9\.1: saves \$0\.1525$/m);
  assert.match(r.stdout, /^  gate off -> on: saves \$0\.1156$/m);
  assert.match(r.stdout, /^One session: no out-of-sample check was possible/m);
  const legend = lines.slice(lines.indexOf('What the terms mean:') + 1).filter(Boolean);
  for (const term of ['rank', '*', '(yours)', 'release', 'chains', 'error purge', 'grace', 'thinking strip', 'gate', 'any', 'USD', 'vs today', 'chars sent', 'rewrites']) {
    assert.equal(legend.filter((l) => l.startsWith(`  ${term}: `)).length, 1, term);
  }
  // Two files: the held-out check, per file, in the table.
  const dir = tmpDir();
  const a = path.join(dir, 'a.jsonl');
  const b = path.join(dir, 'b.jsonl');
  fs.copyFileSync(SAMPLE, a);
  fs.writeFileSync(b, handSession().text);
  const two = cli(['tune', a, b]).stdout;
  const doc = JSON.parse(cli(['tune', '--json', a, b]).stdout);
  assert.match(two, /^Held out \(each session priced with the configuration chosen on the other sessions\):$/m);
  for (const f of doc.heldOut.perFile) assert.ok(two.includes(`  ${f.file}: `), f.file);
  assert.match(two, /^  cross-validated: (saves|costs) [\d.]+%/m);
  assert.ok(two.includes('  held out: '), 'the legend says what held out means');
});

test('tune: held out, a session too small to tell the configurations apart keeps yours, and says which', { skip }, () => {
  const dir = tmpDir();
  const a = path.join(dir, 'a.jsonl');
  const b = path.join(dir, 'b.jsonl');
  fs.copyFileSync(SAMPLE, a);
  fs.writeFileSync(b, handSession().text);
  const agent = agentWith('2.4.3', { contextPrune: { enabled: true } });
  const doc = JSON.parse(cli(['tune', '--json', a, b], { agentDir: agent }).stdout);
  // b (3 calls, a tenth of a cent) ties every configuration: holding a out,
  // yours is chosen on b, and a's saving cannot be checked.
  assert.deepEqual(doc.heldOut.perFile.map((f) => [path.basename(f.file), f.todayTied]), [['a.jsonl', true], ['b.jsonl', false]]);
  assert.equal(doc.heldOut.keepYours, 'too small to tell');
  assert.ok(doc.recommended.paste, 'the cheapest on both differs from yours');
  const text = cli(['tune', a, b], { agentDir: agent }).stdout;
  assert.ok(text.includes(`\nKeep your settings: held out, the data is too small to tell: with ${a} left out, the other sessions cannot tell your settings from their cheapest (within a cent, or 0.1%). Give more sessions to check the recommendation.`), text);
  assert.doesNotMatch(text, /^Set in /m);
});

test('replay: a gated policy counts its applies by reason, and the legend says each', { skip }, () => {
  const r = cli(['replay', '--policy', 'config+gate', SAMPLE]);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(cli(['replay', '--json', '--policy', 'config+gate', SAMPLE]).stdout).files[0].policies.find((p) => p.policy === 'config+gate');
  const g = doc.gate;
  assert.ok(r.stdout.includes(`gate: ${g.applies} applied (${g.reasons.cold} cold, ${g.reasons.same} same, ${g.reasons.budget} budget, ${g.reasons.pays} pays), ${g.holds} held`), r.stdout);
  assert.equal(g.applies, g.reasons.cold + g.reasons.same + g.reasons.budget + g.reasons.pays);
  const lines = r.stdout.split('\n');
  const legend = lines.slice(lines.indexOf('What the terms mean:') + 1).filter(Boolean);
  for (const term of ['applied', 'held', 'cold', 'same', 'budget', 'pays']) assert.equal(legend.filter((l) => l.startsWith(`  ${term}: `)).length, 1, term);
});

test('--svg: never over a session file of the run, nor over a file it did not write without --force', { skip }, () => {
  const dir = tmpDir();
  const victim = path.join(dir, 'victim.jsonl');
  fs.copyFileSync(SAMPLE, victim);
  const before = fs.readFileSync(victim, 'utf8');
  const r = cli(['replay', '--svg', victim, victim]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--svg .*victim\.jsonl is a session file of this run/);
  assert.equal(fs.readFileSync(victim, 'utf8'), before);
  const notes = path.join(dir, 'notes.svg');
  fs.writeFileSync(notes, 'my own drawing');
  const refused = cli(['replay', '--svg', notes, victim]);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /notes\.svg exists and is not an SVG condense-native wrote: add --force/);
  assert.equal(fs.readFileSync(notes, 'utf8'), 'my own drawing');
  assert.equal(cli(['replay', '--svg', notes, '--force', victim]).code, 0);
  // Its own SVG is replaced without --force, by replay and by tune.
  assert.equal(cli(['replay', '--svg', notes, victim]).code, 0);
  assert.equal(cli(['tune', '--svg', notes, victim]).code, 0);
  assert.equal(XMLValidator.validate(fs.readFileSync(notes, 'utf8')), true);
});

test('--svg writes valid XML with a series per policy and the cache-write spikes', { skip }, () => {
  const dir = tmpDir();
  const out = path.join(dir, 'chart.svg');
  const purge = path.join(dir, 'purge.jsonl');
  fs.writeFileSync(purge, purgeSession());
  const r = cli(['replay', '--svg', out, SAMPLE, purge]);
  assert.equal(r.code, 1, r.stderr);
  const text = fs.readFileSync(out, 'utf8');
  assert.equal(XMLValidator.validate(text), true);
  const svg = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(text).svg;
  const charts = [svg.g].flat();
  assert.equal(charts.length, 2);
  for (const chart of charts) {
    const series = [chart.polyline].flat().map((p) => p['data-series']);
    assert.deepEqual(series, ['none', 'config', 'no-thinking-strip', 'live-thinking-strip', '2.9.1']);
  }
  const spikes = (chart, policy) => [chart.circle].flat().filter((c) => c && c.class === 'spike' && c['data-series'] === policy);
  assert.ok(spikes(charts[0], 'live-thinking-strip').length >= 31);
  assert.ok(spikes(charts[0], 'config').length > 0);
  assert.deepEqual(
    spikes(charts[1], 'config').map((c) => c['data-call']),
    ['3'],
  );
  assert.deepEqual(spikes(charts[1], 'none'), []);
});

test('tune: a bad file is named and left out, the rest tuned, --json still printed, exit 2', { skip }, () => {
  const dir = tmpDir();
  fs.copyFileSync(SAMPLE, path.join(dir, 'a.jsonl'));
  fs.writeFileSync(path.join(dir, 'b.jsonl'), handSession().text);
  fs.writeFileSync(path.join(dir, 'c-bad.jsonl'), badSession());
  const r = cli(['tune', '--json', dir]);
  assert.equal(r.code, 2, r.stderr);
  const bad = path.join(dir, 'c-bad.jsonl');
  assert.match(r.stderr, new RegExp(`^condense-native: ${escapeRe(bad)}:11: context-prune-index toolCalls\\[0\\] is null[^\\n]*\\n$`));
  const doc = JSON.parse(r.stdout);
  assert.equal(doc.files.length, 2);
  assert.deepEqual(doc.errors.map((e) => [e.file, e.error.code, e.error.line]), [[bad, 'ERR_CONDENSE_INVALID_SESSION', 11]]);
  assert.deepEqual(doc.perFile.map((f) => [path.basename(f.file), f.modelCalls]), [['a.jsonl', 94], ['b.jsonl', 3]]);
  const table = cli(['tune', dir]);
  assert.equal(table.code, 2);
  assert.match(table.stdout, /^settings: /);
  assert.match(table.stdout, /2 session files, 97 model calls, 241 configurations priced as the provider bills them; 1 file left out \(named on stderr\)/);
  assert.match(table.stdout, /^\d+\*? \(yours\)/m);
});

test('replay and tune print the same USD for your release and settings', { skip }, () => {
  const dir = tmpDir();
  const settings = path.join(dir, 'settings.json');
  fs.writeFileSync(settings, JSON.stringify({ contextPrune: { enabled: true, thinkingStrip: { enabled: true, keepLastTurns: 6 }, recoveryGraceTurns: 1 } }));
  for (const release of ['2.4.3', '2.9.1']) {
    for (const config of [[], ['--config', settings]]) {
      const replay = JSON.parse(cli(['replay', '--json', '--release', release, ...config, SAMPLE]).stdout);
      const tune = JSON.parse(cli(['tune', '--json', '--release', release, ...config, SAMPLE]).stdout);
      const yours = replay.files[0].policies.find((p) => p.yours);
      assert.equal(tune.current.costUsd, yours.costUsd, `${release} ${config.join(' ')}`);
      assert.equal(tune.current.charsSent, yours.charsSent);
      const text = cli(['replay', '--release', release, ...config, SAMPLE]).stdout;
      const tuneText = cli(['tune', '--release', release, ...config, SAMPLE]).stdout;
      const usd = `$${yours.costUsd.toFixed(4)}`;
      assert.ok(text.includes(usd), `${release}: replay prints ${usd}`);
      assert.ok(tuneText.includes(usd), `${release}: tune prints ${usd}`);
    }
  }
});

test('a broken pipe ends the run quietly with status 0', { skip: skip || (!fs.existsSync('/bin/bash') && 'no bash') }, () => {
  const r = spawnSync('/bin/bash', ['-c', `"${process.execPath}" "${BIN}" replay --renders | head -n 1; exit \${PIPESTATUS[0]}`], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, PI_CODING_AGENT_DIR: EMPTY_AGENT },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^settings: /);
});

const script = spawnSync('script', ['--version'], { encoding: 'utf8' });
const noScript = script.status !== 0 && 'util-linux `script` is not installed (no pseudo-terminal)';

test('a terminal shows the progress bar; a pipe and --json do not', { skip: skip || noScript }, () => {
  const command = (extra) => `PI_CODING_AGENT_DIR="${EMPTY_AGENT}" "${process.execPath}" "${BIN}" replay ${extra}`;
  // `script` runs the CLI on a pseudo-terminal and copies what it wrote.
  const tty = spawnSync('script', ['-q', '-e', '-c', command(''), '/dev/null'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(tty.status, 0, tty.stderr);
  assert.match(tty.stdout, /\r\[[#.]{30}\] +\d+% sample\/session\.jsonl\x1b\[K/);
  assert.match(tty.stdout, /sample\/session\.jsonl: 94 model calls/);
  const json = spawnSync('script', ['-q', '-e', '-c', command('--json'), '/dev/null'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(json.status, 0);
  assert.doesNotMatch(json.stdout, /\[[#.]{30}\]/);
  JSON.parse(json.stdout.trim());
  const piped = cli(['replay']);
  assert.doesNotMatch(piped.stderr + piped.stdout, /\[[#.]{30}\]/);
});

// Issue 45: pi's cacheWarming setting, read from the settings file pi reads.
test("replay: pi's cacheWarming from the settings file; a mode pi does not have, or compaction settings pi cannot read, a usage error naming the file", { skip }, () => {
  const dir = tmpDir();
  const file = path.join(dir, 'settings.json');
  fs.writeFileSync(file, JSON.stringify({ cacheWarming: 'off' }));
  const off = cli(['replay', '--json', SAMPLE], { agentDir: dir });
  assert.equal(off.code, 0, off.stderr);
  const doc = JSON.parse(off.stdout).files[0];
  assert.equal(doc.cacheWarming, 'off');
  for (const p of doc.policies) assert.deepEqual(p.warms, { count: 0, costUsd: 0 }, p.policy);
  assert.deepEqual(doc.recorded.warms, { recorded: 1, simulated: 0, matched: 0 });
  assert.match(cli(['replay', SAMPLE]).stdout, /^pi's cache warmer \(idle\), simulated for each policy: 1 warm under no pruning, the file records 1, 1 of them at a simulated one's time/m);
  fs.writeFileSync(file, JSON.stringify({ cacheWarming: 'always' }));
  const bad = cli(['replay', SAMPLE], { agentDir: dir });
  assert.equal(bad.code, 2);
  assert.ok(bad.stderr.includes(`${file}: cacheWarming must be 'idle', 'off' or 'streaming'`), bad.stderr);
  assert.equal(bad.stdout, '');
  // pi's compaction settings too, by the replay's own rules.
  fs.writeFileSync(file, JSON.stringify({ compaction: { reserveTokens: 'lots' } }));
  const compaction = cli(['replay', SAMPLE], { agentDir: dir });
  assert.equal(compaction.code, 2);
  assert.ok(compaction.stderr.includes(`${file}: compaction.reserveTokens must be a non-negative whole number of tokens`), compaction.stderr);
});
