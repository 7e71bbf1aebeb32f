'use strict';
// The replay CLI run as a user runs it (a spawned process): the table, the
// --json document, exit codes 0/1/2 with errors naming file and line, a bad
// file not stopping a directory run, --config, the SVG as valid XML with a
// series per policy, a quiet broken pipe, and the progress bar on a
// terminal (a pseudo-terminal from util-linux `script`) but not on a pipe.
// Runs under `node --test` and `bun test` (the CLI runs on the same
// runtime).

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { XMLParser, XMLValidator } = require('fast-xml-parser');

const { backend } = require('..');
const { handSession, purgeSession } = require('./helpers/replay-sessions.js');

const skip = backend !== 'native' && 'the replay needs the native binding';
const ROOT = path.join(__dirname, '..');
const BIN = path.join(ROOT, 'bin', 'condense-native.js');
const POLICIES = ['none', 'config', 'no-thinking-strip', 'live-thinking-strip', '2.9.1'];

function cli(args, options = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', ...options });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function tmpDir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'condense-cli-'));
}

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

test('no path: the bundled sample, a table on stdout, nothing on a piped stderr, exit 0', { skip }, () => {
  const r = cli(['replay']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.match(r.stdout, /^sample\/session\.jsonl: 94 model calls, priced with the provider cache model \(short retention\)$/m);
  for (const p of POLICIES) assert.match(r.stdout, new RegExp(`^${p.replace('.', '\\.')} +[\\d,]+ +[\\d.]+%`, 'm'), p);
  assert.match(r.stdout, /^config .* held \(79 checked\)$/m);
  assert.match(r.stdout, /^live-thinking-strip .* broken by design: 31 of 79 \(thinkingStrip\)$/m);
  // The sample's usage was made by the replay's own model (sample/README.md):
  // both models priced from pi-ai's catalog and calibrated at 3.6 chars a
  // token, the recorded cost met to the cent. One call of 94 falls outside its
  // recorded class: its read passes the preamble by 22 tokens (the first user
  // message), which the recorded-usage check counts as a rewrite.
  assert.match(r.stdout, /^model anthropic\/claude-sonnet-4-5: 3\.60 chars per token \(systemMessage, 87 calls\)$/m);
  assert.match(r.stdout, /^model anthropic\/claude-opus-4-6: 3\.60 chars per token \(systemMessage, 7 calls\)$/m);
  assert.match(r.stdout, /^against the usage pi recorded \(policy none, 94 calls\): 100\.0% of calls in the recorded class; cost (\$[\d.]+) predicted vs \1 recorded \(-?0\.0%\)$/m);
});

test('--json prints one document; --renders adds every render', { skip }, () => {
  const sample = path.join(ROOT, 'sample', 'session.jsonl');
  const r = cli(['replay', '--json', sample]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  const doc = JSON.parse(r.stdout);
  assert.equal(doc.files.length, 1);
  assert.equal(doc.files[0].file, sample);
  assert.equal(doc.files[0].modelCalls, 94);
  assert.deepEqual(
    doc.files[0].policies.map((p) => p.policy),
    POLICIES,
  );
  assert.equal(doc.files[0].policies[0].renders, undefined);
  assert.deepEqual(
    { ...doc.summary, elapsedMs: 0 },
    { files: 1, failed: 0, modelCalls: 94, invariantBroken: 0, elapsedMs: 0 },
  );
  const withRenders = JSON.parse(cli(['replay', '--json', '--renders', '--policy', 'config', sample]).stdout);
  const config = withRenders.files[0].policies[1];
  assert.equal(config.policy, 'config');
  assert.equal(config.renders.length, 94);
  assert.match(config.renders[5].prefixHash, /^[0-9a-f]{16}$/);
});

test('a directory run goes on past bad files: each named with its line, exit 2', { skip }, () => {
  const dir = tmpDir();
  fs.mkdirSync(path.join(dir, 'sub'));
  fs.writeFileSync(path.join(dir, 'a-good.jsonl'), handSession().text);
  fs.writeFileSync(path.join(dir, 'sub', 'bad.jsonl'), badSession());
  fs.writeFileSync(path.join(dir, 'not-a-session.jsonl'), 'hello\n');
  fs.writeFileSync(path.join(dir, 'ignored.txt'), 'not a .jsonl file');
  const r = cli(['replay', '--json', dir]);
  assert.equal(r.code, 2);
  const bad = path.join(dir, 'sub', 'bad.jsonl');
  assert.match(r.stderr, new RegExp(`^condense-native: ${bad.replace(/[.\\/]/g, '\\$&')}:11: context-prune-index toolCalls\\[0\\] is null`, 'm'));
  assert.match(r.stderr, /not-a-session\.jsonl: not a pi session/);
  const doc = JSON.parse(r.stdout);
  const byName = Object.fromEntries(doc.files.map((f) => [path.relative(dir, f.file), f]));
  assert.deepEqual(Object.keys(byName).sort(), ['a-good.jsonl', 'not-a-session.jsonl', path.join('sub', 'bad.jsonl')]);
  assert.equal(byName['a-good.jsonl'].modelCalls, 3);
  assert.deepEqual(
    { ...byName[path.join('sub', 'bad.jsonl')].error, message: '' },
    { code: 'ERR_CONDENSE_INVALID_SESSION', message: '', line: 11 },
  );
  assert.equal(doc.summary.failed, 2);
  // The table run reports the good file too.
  const table = cli(['replay', dir]);
  assert.equal(table.code, 2);
  assert.match(table.stdout, /a-good\.jsonl: 3 model calls/);
});

test('exit 1 when a flush-gated policy changes history between flushes; --config can turn the cause off', { skip }, () => {
  const dir = tmpDir();
  const file = path.join(dir, 'purge.jsonl');
  fs.writeFileSync(file, purgeSession());
  const r = cli(['replay', file]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stdout, /^config .* BROKEN: 1 of 3 \(errorPurge\)$/m);
  assert.match(r.stdout, /config: model call 3, output message 1: errorPurge: /);
  // pi's settings file with error purge off: the invariant holds.
  const settings = path.join(dir, 'settings.json');
  fs.writeFileSync(settings, JSON.stringify({ theme: 'dark', contextPrune: { enabled: true, purgeErrors: { enabled: false } } }));
  const off = cli(['replay', '--config', settings, '--json', file]);
  assert.equal(off.code, 0, off.stderr);
  const config = JSON.parse(off.stdout).files[0].policies.find((p) => p.policy === 'config');
  assert.deepEqual(config.config.errorPurge, { enabled: false });
  assert.equal(config.invariant.broken, 0);
});

test('usage errors exit 2; --help documents the exit status', { skip }, () => {
  for (const args of [['replay', '--bogus'], ['frobnicate'], ['replay', '--policy', 'nope'], ['replay', '--cache-ttl', '-3'], ['replay', '--svg']]) {
    const r = cli(args);
    assert.equal(r.code, 2, args.join(' '));
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^condense-native: error: /, args.join(' '));
  }
  const dir = tmpDir();
  fs.writeFileSync(path.join(dir, 'c.json'), '{not json');
  const bad = cli(['replay', '--config', path.join(dir, 'c.json')]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--config .*c\.json: not JSON/);
  const help = cli(['replay', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Exit status:\n  0 /);
  for (const flag of ['--json', '--renders', '--svg', '--config', '--policy', '--chars-per-token', '--cache-ttl']) assert.ok(help.stdout.includes(flag), flag);
});

test('--svg writes valid XML with a series per policy and the cache-write spikes', { skip }, () => {
  const dir = tmpDir();
  const out = path.join(dir, 'chart.svg');
  const purge = path.join(dir, 'purge.jsonl');
  fs.writeFileSync(purge, purgeSession());
  const r = cli(['replay', '--svg', out, path.join(ROOT, 'sample', 'session.jsonl'), purge]);
  assert.equal(r.code, 1, r.stderr);
  const text = fs.readFileSync(out, 'utf8');
  assert.equal(XMLValidator.validate(text), true);
  const svg = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(text).svg;
  const charts = [svg.g].flat();
  assert.equal(charts.length, 2);
  for (const chart of charts) {
    const series = [chart.polyline].flat().map((p) => p['data-series']);
    assert.deepEqual(series, POLICIES);
  }
  const spikes = (chart, policy) => [chart.circle].flat().filter((c) => c && c.class === 'spike' && c['data-series'] === policy);
  // The sample: the live keep-window rewrites history 31 times between
  // flushes, and flushes stub earlier results under config.
  assert.ok(spikes(charts[0], 'live-thinking-strip').length >= 31);
  assert.ok(spikes(charts[0], 'config').length > 0);
  // The purge session: error purge at model call 3.
  assert.deepEqual(
    spikes(charts[1], 'config').map((c) => c['data-call']),
    ['3'],
  );
  assert.deepEqual(spikes(charts[1], 'none'), []);
});

test('a broken pipe ends the run quietly with status 0', { skip: skip || (!fs.existsSync('/bin/bash') && 'no bash') }, () => {
  const r = spawnSync('/bin/bash', ['-c', `"${process.execPath}" "${BIN}" replay --renders | head -n 1; exit \${PIPESTATUS[0]}`], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'sample/session.jsonl: 94 model calls, priced with the provider cache model (short retention)\n');
});

const script = spawnSync('script', ['--version'], { encoding: 'utf8' });
const noScript = script.status !== 0 && 'util-linux `script` is not installed (no pseudo-terminal)';

test('a terminal shows the progress bar; a pipe and --json do not', { skip: skip || noScript }, () => {
  const command = (extra) => `"${process.execPath}" "${BIN}" replay ${extra}`;
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
