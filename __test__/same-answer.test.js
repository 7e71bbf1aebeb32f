'use strict';

// The same answer from every path and every backend (issue 13, item 7).
// Each case runs through prune and Pruner.prune on a Buffer, pruneMessages,
// PruneSession.render and the pi-condense drop-in of its dialect
// (helpers/paths.js), in two child processes of this runtime: one with the
// native addon, one with the pure-JS fallback (CONDENSE_NATIVE_FORCE_FALLBACK
// =1). Three properties:
// (a) tool-call ids that are names special to JS objects (`__proto__`,
//     `constructor`, `toString`, `hasOwnProperty`) are stubbed, purged,
//     dropped and quoted exactly as pi-condense's own pruneMessages with its
//     own ToolCallIndexer does (../shared/reference; skipped without it);
// (b) invalid messages throw the same code, at the same message index, in
//     every path and both backends (js/codes.js);
// (c) a Buffer holding NaN, Infinity or other text that is not JSON is an
//     ERR_CONDENSE_INVALID_JSON error whose message says what is wrong in
//     words, without the parser's internal names.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const codes = require('../js/codes.js');
const { loadReference, fillIndexer, referenceArgs, SKIP_MESSAGE } = require('./helpers/indexer.js');

const ROOT = path.join(__dirname, '..');
const PATHS = path.join(__dirname, 'helpers', 'paths.js');
const SPECIAL_IDS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];

// ---------------------------------------------------------------------------
// Cases

// One conversation in which each of four ids plays one part: `stub` is a
// summarized tool result (stubbed), `purge` an errored call with long
// arguments (purged after the cooldown), `plain` a result the state does not
// know (kept: `constructor in {}` is true for a plain object), and `chain` a
// call inside a compressed chain whose output the chain protects (dropped,
// then quoted in the synthetic block).
function conversation({ stub, purge, plain, chain }) {
  const assistant = (ts, content) => ({ role: 'assistant', content, api: 'anthropic-messages', provider: 'anthropic', model: 'm', stopReason: 'toolUse', timestamp: ts });
  const call = (id, name, args) => ({ type: 'toolCall', id, name, arguments: args });
  const result = (id, name, text, ts, isError = false) => ({ role: 'toolResult', toolCallId: id, toolName: name, content: [{ type: 'text', text }], isError, timestamp: ts });
  return [
    { role: 'user', content: [{ type: 'text', text: 'look around' }], timestamp: 1 },
    assistant(2, [{ type: 'thinking', thinking: 'plan', thinkingSignature: 'c2ln' }, call(stub, 'read', { path: 'src/a.ts' })]),
    result(stub, 'read', 'export const a = 1;\n'.repeat(20), 3),
    assistant(4, [call(purge, 'bash', { command: `npm run build -- ${'x'.repeat(80)}` })]),
    result(purge, 'bash', 'Command exited with code 1', 5, true),
    assistant(6, [call(plain, 'grep', { pattern: 'TODO' })]),
    result(plain, 'grep', 'src/a.ts:1: TODO', 7),
    assistant(8, [{ type: 'text', text: 'done with the first part' }]),
    { role: 'user', content: [{ type: 'text', text: 'now the docs' }], timestamp: 20 },
    assistant(21, [{ type: 'thinking', thinking: 'docs', thinkingSignature: 'c2ln' }, call(chain, 'edit', { path: 'docs/x.md' })]),
    result(chain, 'edit', 'Successfully replaced text in docs/x.md.', 22),
    assistant(23, [{ type: 'thinking', thinking: 'wrap up', thinkingSignature: 'c2ln' }, { type: 'text', text: 'edited the docs' }]),
    { role: 'user', content: [{ type: 'text', text: 'thanks' }], timestamp: 30 },
    assistant(31, [{ type: 'text', text: 'welcome' }]),
    assistant(32, [{ type: 'text', text: 'anything else?' }]),
  ];
}

// The state in each dialect's keys: 2.4.3 by id, 2.9.1 by occurrence key
// (`id@resultTimestamp`), built with JSON.parse so that `__proto__` is an
// own key as it is in a state read from a file.
function stateFor(dialect, { stub, chain }) {
  const key = (id, ts) => (dialect === '2.9.1' ? `${id}@${ts}` : id);
  const record = (id, ts, toolName, args) => ({ ...(dialect === '2.9.1' ? { toolCallId: id, resultTimestamp: ts } : {}), toolName, args });
  const entries = (pairs) => `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`;
  const text = `{
    "records": ${entries([
      [key(stub, 3), record(stub, 3, 'read', { path: 'src/a.ts' })],
      [key(chain, 22), record(chain, 22, 'edit', { path: 'docs/x.md' })],
    ])},
    "dedupAliases": {},
    "shortRefs": ${entries([
      [key(stub, 3), 't1'],
      [key(chain, 22), 't2'],
    ])},
    "refAliases": ${entries([
      ['t1', key(stub, 3)],
      ['t2', key(chain, 22)],
    ])},
    "chains": [${JSON.stringify({
      blockId: 'b1',
      startUserTimestamp: 20,
      droppedToolCallIds: [chain],
      ...(dialect === '2.9.1' ? { droppedOccurrenceKeys: [key(chain, 22)] } : {}),
      protectedToolCallIds: [chain],
      finalAssistantTimestamp: 23,
      toolRefs: ['t2'],
      compressedAt: 24,
      rangeSummaryText: 'Edited docs/x.md.',
    })}],
    "summaryBodies": []
  }`;
  return JSON.parse(text);
}

function configFor(dialect) {
  const config = {
    chainCompression: { enabled: true, stripFinalAssistantThinking: true },
    errorPurge: { enabled: true, cooldownTurns: 1, minArgChars: 20 },
    protection: { protectedTools: ['Task'], protectedPaths: ['docs/**'] },
    recoveryGraceTurns: 0,
  };
  if (dialect === '2.4.3') config.thinkingStrip = { enabled: true, keepLastTurns: 1 };
  return config;
}

// Every id in every part: four rotations of the four ids.
const ID_CASES = [];
for (const dialect of ['2.4.3', '2.9.1']) {
  for (let r = 0; r < SPECIAL_IDS.length; r++) {
    const [stub, purge, plain, chain] = SPECIAL_IDS.map((_, i) => SPECIAL_IDS[(i + r) % SPECIAL_IDS.length]);
    const roles = { stub, purge, plain, chain };
    ID_CASES.push({
      label: `${dialect} stub ${stub}, purge ${purge}, keep ${plain}, chain ${chain}`,
      roles,
      dialect,
      messages: conversation(roles),
      state: stateFor(dialect, roles),
      config: configFor(dialect),
      boundary: dialect === '2.4.3' ? 2 : null,
    });
  }
}

// Messages the reference cannot process, with the code every path must
// throw and where.
function invalidCases() {
  const base = conversation({ stub: 'call_a', purge: 'call_b', plain: 'call_c', chain: 'call_d' });
  const at = (i, message) => base.map((m, j) => (j === i ? message : m));
  const cases = [
    { label: 'a null message', messages: at(4, null), code: codes.INVALID_MESSAGE, messageIndex: 4 },
    { label: 'assistant content that is a string', messages: at(3, { ...base[3], content: 'not blocks' }), code: codes.INVALID_MESSAGE, messageIndex: 3 },
    { label: 'a null content block', messages: at(9, { ...base[9], content: [null, ...base[9].content] }), code: codes.INVALID_MESSAGE, messageIndex: 9 },
  ];
  const out = [];
  for (const dialect of ['2.4.3', '2.9.1']) {
    const roles = { stub: 'call_a', chain: 'call_d' };
    for (const c of cases) out.push({ ...c, label: `${dialect} ${c.label}`, dialect, state: stateFor(dialect, roles), config: configFor(dialect), boundary: null });
  }
  return out;
}
const INVALID_CASES = invalidCases();

// Not an array: the array APIs refuse the argument, the Buffer APIs the
// parsed value, with the same code.
const NOT_ARRAY_CASES = ['2.4.3', '2.9.1'].map((dialect) => ({
  label: `${dialect} messages that are an object`,
  dialect,
  messages: { 0: { role: 'user', content: 'x', timestamp: 1 } },
  state: null,
  config: configFor(dialect),
  boundary: null,
}));

// ---------------------------------------------------------------------------
// Running the paths in both backends

function runBackend(cases, forceFallback) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-same-answer-'));
  try {
    const file = path.join(dir, 'cases.json');
    fs.writeFileSync(file, JSON.stringify(cases));
    const env = { ...process.env };
    delete env.CONDENSE_NATIVE_FORCE_FALLBACK;
    if (forceFallback) env.CONDENSE_NATIVE_FORCE_FALLBACK = '1';
    const r = spawnSync(process.execPath, [PATHS, file], { env, encoding: 'utf8', maxBuffer: 1 << 26, timeout: 120_000 });
    assert.equal(r.status, 0, `the ${forceFallback ? 'fallback' : 'native'} child failed: ${r.stderr}`);
    return JSON.parse(r.stdout.trim().split('\n').pop());
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const allCases = [...ID_CASES, ...INVALID_CASES, ...NOT_ARRAY_CASES];
let answers = null;
// Both children run once, for all cases: { native, js } (native is null
// where no binary loads).
function backends() {
  if (answers === null) {
    const native = runBackend(allCases, false);
    const js = runBackend(allCases, true);
    assert.equal(js.backend, 'js', 'CONDENSE_NATIVE_FORCE_FALLBACK selects the fallback');
    answers = { native: native.backend === 'native' ? native : null, js };
  }
  return answers;
}
const outcomesOf = (c) => {
  const i = allCases.indexOf(c);
  const b = backends();
  return [...(b.native ? [['native', b.native.outcomes[i]]] : []), ['js', b.js.outcomes[i]]];
};

async function referenceOutcome(c) {
  const ref = await loadReference(c.dialect);
  if (!ref) return null;
  const { indexer } = fillIndexer(ref, c.dialect, c.state);
  try {
    const r = ref.pruneMessages(JSON.parse(JSON.stringify(c.messages)), ...referenceArgs(c.dialect, { config: c.config, thinkingBoundaryTimestamp: c.boundary }, indexer));
    return { value: { pruned: r.pruned, beforeChars: r.beforeChars, afterChars: r.afterChars, messages: r.pruned ? JSON.stringify(r.messages) : null } };
  } catch (error) {
    return { error: { name: error.name, message: error.message } };
  }
}

const hasReference = fs.existsSync(path.join(ROOT, '..', 'shared', 'reference'));

// ---------------------------------------------------------------------------
// (a) ids special to JS objects

test('ids special to JS objects: every path and backend answers as pi-condense does', { skip: hasReference ? false : SKIP_MESSAGE, timeout: 240_000 }, async () => {
  for (const c of ID_CASES) {
    const want = await referenceOutcome(c);
    assert.ok(want.value, `${c.label}: the reference throws (${want.error && want.error.message})`);
    const out = JSON.parse(want.value.messages);
    // What the case is there to show, in the reference's own answer.
    const results = (id) => out.filter((m) => m.role === 'toolResult' && m.toolCallId === id);
    assert.match(results(c.roles.stub)[0].content[0].text, /^\[Summarized/, `${c.label}: ${c.roles.stub} is stubbed`);
    assert.equal(results(c.roles.plain)[0].content[0].text, 'src/a.ts:1: TODO', `${c.label}: ${c.roles.plain} is kept`);
    const calls = out.flatMap((m) => (m.role === 'assistant' ? m.content.filter((b) => b.type === 'toolCall') : []));
    const args = c.messages[3].content[0].arguments;
    assert.deepEqual(calls.find((b) => b.id === c.roles.purge).arguments, { _purged: `<purged-errored-args size="${JSON.stringify(args).length}"/>` }, `${c.label}: ${c.roles.purge} is purged`);
    assert.equal(results(c.roles.chain).length, 0, `${c.label}: ${c.roles.chain} is dropped with its chain`);
    assert.ok(JSON.stringify(out).includes('Successfully replaced text in docs/x.md.'), `${c.label}: the chain quotes ${c.roles.chain}'s output`);
    for (const [backend, outcomes] of outcomesOf(c)) {
      for (const [via, got] of Object.entries(outcomes)) {
        const label = `${c.label} (${backend}, ${via})`;
        assert.ok(!got.error, `${label}: ${got.error && `${got.error.code} ${got.error.message}`}`);
        assert.deepEqual(got.value, want.value, label);
      }
    }
  }
});

// ---------------------------------------------------------------------------
// (b) one set of codes

test('invalid messages: every path and backend throws the same code at the same message', { timeout: 240_000 }, async () => {
  for (const c of INVALID_CASES) {
    if (hasReference) {
      const want = await referenceOutcome(c);
      assert.ok(want.error, `${c.label}: the reference answers, so the case shows nothing`);
    }
    for (const [backend, outcomes] of outcomesOf(c)) {
      for (const [via, got] of Object.entries(outcomes)) {
        const label = `${c.label} (${backend}, ${via})`;
        assert.ok(got.error, `${label}: answered instead of throwing`);
        assert.equal(got.error.code, c.code, `${label}: ${got.error.message}`);
        assert.equal(got.error.messageIndex, c.messageIndex, `${label}: messageIndex (${got.error.message})`);
      }
    }
  }
  for (const c of NOT_ARRAY_CASES) {
    for (const [backend, outcomes] of outcomesOf(c)) {
      for (const [via, got] of Object.entries(outcomes)) {
        const label = `${c.label} (${backend}, ${via})`;
        assert.ok(got.error, `${label}: answered instead of throwing`);
        // One code for the fault, whatever the entry point (issue 22).
        assert.equal(got.error.code, codes.NOT_ARRAY, `${label}: ${got.error.message}`);
      }
    }
  }
});

// ---------------------------------------------------------------------------
// (c) invalid JSON in a Buffer, said in words

const NOT_JSON = [
  ['NaN', '[{"role":"user","content":"x","timestamp":NaN}]'],
  ['Infinity', '[{"role":"user","content":"x","timestamp":Infinity}]'],
  ['-Infinity', '[{"role":"assistant","content":[],"timestamp":-Infinity}]'],
  ['a trailing comma', '[{"role":"user","content":"x"},]'],
  ['a single-quoted string', "[{'role':'user'}]"],
  ['a bad escape', '[{"role":"user","content":"\\x"}]'],
  ['a leading zero', '[{"role":"user","timestamp":01}]'],
  ['an exponent without digits', '[{"role":"user","timestamp":1e}]'],
  ['an unclosed array', '[{"role":"user","content":"x"}'],
  ['text after the array', '[{"role":"user","content":"x"}] []'],
  ['nothing', ''],
];
// Names of parser internals (simd-json's error enums and tapes, Rust debug
// formatting) that must not reach a host.
const INTERNAL = /InternalError|TapeError|Tape|simd|\w+Error\(|\{ ?\w+: /;

const BYTE_CALLS = (api) => ({
  prune: (b) => api.prune(b),
  'Pruner.prune': (b) => new api.Pruner().prune(b),
  sizeOf: (b) => api.sizeOf(b),
});

// A child of this runtime answers every text with every Buffer call.
const JSON_CHILD = `
const api = require(${JSON.stringify(ROOT)});
const calls = (${BYTE_CALLS.toString()})(api);
const texts = JSON.parse(process.env.TEXTS);
const out = texts.map((t) => Object.fromEntries(Object.entries(calls).map(([via, call]) => {
  try { call(Buffer.from(t)); return [via, { answered: true }]; }
  catch (e) { return [via, { code: e.code, message: e.message, messageIndex: e.messageIndex }]; }
})));
console.log(JSON.stringify({ backend: api.backend, out }));
`;

function jsonErrors(forceFallback, texts) {
  const env = { ...process.env, TEXTS: JSON.stringify(texts) };
  delete env.CONDENSE_NATIVE_FORCE_FALLBACK;
  if (forceFallback) env.CONDENSE_NATIVE_FORCE_FALLBACK = '1';
  const r = spawnSync(process.execPath, ['-e', JSON_CHILD], { env, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `child failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

test('NaN, Infinity and other text that is not JSON: a typed error in words, from every Buffer call and backend', () => {
  const texts = NOT_JSON.map(([, t]) => t);
  const runs = [jsonErrors(false, texts), jsonErrors(true, texts)].filter((r, i) => i === 1 || r.backend === 'native');
  assert.equal(runs.at(-1).backend, 'js');
  for (const run of runs) {
    run.out.forEach((calls, i) => {
      for (const [via, e] of Object.entries(calls)) {
        const label = `${NOT_JSON[i][0]} (${run.backend}, ${via})`;
        assert.ok(!e.answered, `${label}: answered`);
        assert.equal(e.code, codes.INVALID_JSON, `${label}: ${e.message}`);
        assert.doesNotMatch(e.message, INTERNAL, label);
        // A sentence, not an identifier: words separated by spaces.
        assert.match(e.message, /[a-z]+ [a-z]+/i, label);
      }
    });
  }
  // The native messages also say where: the message and the byte.
  const native = runs.find((r) => r.backend === 'native');
  if (native) {
    assert.match(native.out[0].prune.message, /^message 0: .*\bN\b.* at byte 42$/);
    assert.equal(native.out[0].prune.messageIndex, 0);
  }
});

test('sizeOf of a JSON value that is not an array: ERR_CONDENSE_NOT_ARRAY in both backends', () => {
  const child = (forceFallback) => {
    const env = { ...process.env };
    delete env.CONDENSE_NATIVE_FORCE_FALLBACK;
    if (forceFallback) env.CONDENSE_NATIVE_FORCE_FALLBACK = '1';
    const code = `const api = require(${JSON.stringify(ROOT)}); let out; try { out = { size: api.sizeOf(Buffer.from('{"role":"user"}')) }; } catch (e) { out = { code: e.code }; } console.log(JSON.stringify({ backend: api.backend, ...out }));`;
    const r = spawnSync(process.execPath, ['-e', code], { env, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout.trim().split('\n').pop());
  };
  for (const out of [child(false), child(true)]) {
    assert.equal(out.code, codes.NOT_ARRAY, `${out.backend}: ${JSON.stringify(out)}`);
  }
});
