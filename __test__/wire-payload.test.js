'use strict';

// The replay prices each model call by the prefix Anthropic caches, so its
// native model of the request (`replayWirePayload(messagesJson, modelJson,
// retention)`) must send what pi-ai 1.6.0 sends. This test holds it against
// pi-ai's own request body, captured before sending
// (helpers/pi-payload.js): `system` and `messages`, cache markers included,
// deep-equal after JSON.parse.
// (a) the harness alone: a payload is captured for every case without a
//     connection attempt, and its markers sit where ../shared/CACHE-MODEL.md
//     section 1 says (one on the system block, one on the last block of the
//     last message when that is a user or system message, none with
//     retention "none", ttl "1h" with "long"; the effort message last);
// (b) seeded conversations (helpers/pi-payload-gen.js) for three models
//     (claude-sonnet-4-5: no effort messages, later system messages folded
//     into the first; claude-opus-5: effort messages; claude-opus-4-8:
//     later system messages kept in place, no effort) and retentions short,
//     long and none;
// (c) the shared corpus, when present (../shared/corpus/{small,medium}.json):
//     five evenly spaced prefixes, raw and as pi-condense renders them.
// Thinking is on, at level "high" (it sets the effort of claude-opus-5's
// last message; see REASONING). (b) and (c) are skipped until the binding
// has replayWirePayload; the cases they would run are printed.
// Runs under `node --test` and `bun test`.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { isDeepStrictEqual } = require('node:util');

const { testBinding, NO_CARGO } = require('./helpers/test-binding.js');
const { piPayload, anthropicModel, fetchAttempts } = require('./helpers/pi-payload.js');
const { conversation } = require('./helpers/pi-payload-gen.js');

const SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : 20261202;
const CONVERSATIONS = 120;
const MODELS = ['claude-sonnet-4-5', 'claude-opus-5', 'claude-opus-4-8'];
const RETENTIONS = ['short', 'long', 'none'];
// pi passes its thinking level as streamSimple's `reasoning`; for
// claude-opus-5 it becomes the effort of the last message. The native call
// takes no thinking level, so the test fixes one: "high" (pi's default level
// is "medium"; WIRE_PAYLOAD_REASONING picks another).
const REASONING = process.env.WIRE_PAYLOAD_REASONING || 'high';
const CORPUS = path.join(__dirname, '..', '..', 'shared', 'corpus');
const CORPUS_FILES = ['small', 'medium'];
const PREFIXES = 5;

// replayWirePayload is a test-only export (helpers/test-binding.js).
const native = NO_CARGO ? null : testBinding();
const NO_NATIVE = native === null ? NO_CARGO || 'the test-exports build does not load here' : false;

// Per request model: most assistant turns come from it (so its thinking is
// replayed), some from other models and providers.
const generated = new Map();
// The replay's block model (src/cost/wire.rs) takes pi's leading system
// message only: a later one (a prompt or tools patch) is priced as a change
// of the preamble, not converted block by block as pi-ai converts it, so
// conversations holding one are left out here and counted (docs/REPLAY.md).
const laterSystem = (c) => c.messages.some((m, i) => m.role === 'system' && i > 0);
function casesFor(id) {
  if (!generated.has(id)) {
    const all = Array.from({ length: CONVERSATIONS }, (_, i) => conversation(SEED + i, { model: id }));
    generated.set(id, all.filter((c) => !laterSystem(c)));
  }
  return generated.get(id);
}

// The system message pi writes first (prompt and tools), for the corpus,
// whose files hold no system message.
const CORPUS_SYSTEM = {
  role: 'system',
  content: 'You are pi, a coding agent working in /app.',
  toolsAdded: [
    { name: 'Bash', description: 'Run a command', parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } },
    { name: 'Read', description: 'Read a file', parameters: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] } },
  ],
  timestamp: 0,
};

function corpusFile(name) {
  const file = path.join(CORPUS, `${name}.json`);
  return fs.existsSync(file) ? file : null;
}

// Five evenly spaced prefixes of a corpus session, raw and rendered by
// pi-condense (js/pure.js with the file's state and config), each behind the
// system message.
function corpusCases(name) {
  const file = corpusFile(name);
  if (file === null) return [];
  const session = JSON.parse(fs.readFileSync(file, 'utf8'));
  const n = session.messages.length;
  const out = [];
  let pure = null;
  try {
    pure = require('../js/pure.js');
  } catch {
    pure = null;
  }
  for (let k = 1; k <= PREFIXES; k++) {
    const len = Math.round((n * k) / PREFIXES);
    const prefix = session.messages.slice(0, len);
    out.push({ name: `${name}.json[0..${len}] raw`, messages: [CORPUS_SYSTEM, ...prefix] });
    if (pure !== null) {
      const opts = { state: session.state, config: session.config, thinkingStripBoundaryTimestamp: session.thinkingBoundaryTimestamp };
      out.push({ name: `${name}.json[0..${len}] rendered`, messages: [CORPUS_SYSTEM, ...pure.pruneMessages(prefix, opts).messages] });
    }
  }
  return out;
}

function say(t, line) {
  if (t && typeof t.diagnostic === 'function') t.diagnostic(line);
  else console.log(`# ${line}`);
}

if (NO_NATIVE) {
  const corpus = CORPUS_FILES.filter(corpusFile);
  console.log(
    `wire-payload: ${NO_NATIVE}; (b) and (c) would run ${CONVERSATIONS} generated conversations (seeds ${SEED}..${SEED + CONVERSATIONS - 1}) ` +
      `x models ${MODELS.join(', ')} x retentions ${RETENTIONS.join(', ')} = ${CONVERSATIONS * MODELS.length * RETENTIONS.length} comparisons, ` +
      (corpus.length > 0
        ? `and ${PREFIXES} prefixes (raw and rendered) of ${corpus.map((c) => `${c}.json`).join(', ')} for each model and retention.`
        : 'and no corpus (../shared/corpus absent).'),
  );
}

// ---------------------------------------------------------------------------
// (a) the harness

const MARKABLE = new Set(['text', 'image', 'tool_result', 'tool_addition', 'tool_removal']);

function markersIn(messages) {
  const found = [];
  messages.forEach((m, i) => {
    if (!Array.isArray(m.content)) return;
    m.content.forEach((b, j) => {
      if (b && b.cache_control !== undefined) found.push([i, j]);
    });
  });
  return found;
}

function checkMarkers(payload, model, retention, where) {
  const want = retention === 'none' ? undefined : retention === 'long' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
  if (payload.system !== undefined) {
    assert.equal(payload.system.length, 1, `${where}: one system block with an API key`);
    assert.deepEqual(payload.system[0].cache_control, want, `${where}: system marker`);
  }
  const messages = payload.messages.slice();
  if (model.compat && model.compat.supportsMidConvoEffort) {
    assert.deepEqual(messages.pop(), { role: 'system', content: [], output_config: { effort: REASONING } }, `${where}: last message is the effort message`);
  } else {
    assert.ok(!payload.messages.some((m) => m.output_config !== undefined), `${where}: no effort messages`);
  }
  if (!(model.compat && model.compat.supportsMidConvoSystemMessages)) {
    assert.ok(!payload.messages.some((m) => m.role === 'system'), `${where}: later system messages folded into the first`);
  }
  const markers = markersIn(payload.messages);
  const last = messages[messages.length - 1];
  const lastBlock = last && Array.isArray(last.content) ? last.content[last.content.length - 1] : undefined;
  const expectOne = want !== undefined && last !== undefined && (last.role === 'user' || last.role === 'system') && lastBlock !== undefined && MARKABLE.has(lastBlock.type);
  if (expectOne) {
    assert.deepEqual(markers, [[messages.length - 1, last.content.length - 1]], `${where}: one marker, on the last block of the last message`);
    assert.deepEqual(lastBlock.cache_control, want, `${where}: message marker`);
  } else {
    assert.deepEqual(markers, [], `${where}: no message marker (last message ${last ? last.role : 'none'})`);
  }
  payload.messages.forEach((m, i) => {
    if (typeof m.content === 'string') assert.equal(m.role, 'user', `${where}: message ${i}: only user content is a string`);
  });
}

// Connections opened anywhere in this process while the harness runs, where
// the runtime reports them (Node's net and undici diagnostics channels).
function watchConnections() {
  const seen = [];
  let dc = null;
  try {
    dc = require('node:diagnostics_channel');
  } catch {
    return { seen, stop() {} };
  }
  const subs = [];
  for (const name of ['net.client.socket', 'undici:client:beforeConnect', 'http.client.request.start']) {
    const fn = (msg) => seen.push(name + (msg && msg.connectParams ? ` ${msg.connectParams.host}:${msg.connectParams.port}` : ''));
    try {
      dc.subscribe(name, fn);
      subs.push([name, fn]);
    } catch {
      // not on this runtime
    }
  }
  return {
    seen,
    stop() {
      for (const [name, fn] of subs) dc.unsubscribe(name, fn);
    },
  };
}

test('(a) pi-ai payloads are captured without a connection, markers where CACHE-MODEL.md 1 says', async (t) => {
  const watch = watchConnections();
  const before = fetchAttempts.length;
  let checked = 0;
  try {
    for (const id of MODELS) {
      const model = await anthropicModel(id);
      for (const retention of RETENTIONS) {
        for (const c of casesFor(id)) {
          const payload = await piPayload(c.messages, model, { retention, reasoning: REASONING });
          checkMarkers(payload, model, retention, `${c.name} [${c.features.join(' ')}] ${id} ${retention}`);
          checked++;
        }
        for (const name of CORPUS_FILES) {
          if (retention !== 'short') continue;
          for (const c of corpusCases(name)) {
            checkMarkers(await piPayload(c.messages, model, { retention, reasoning: REASONING }), model, retention, `${c.name} ${id} ${retention}`);
            checked++;
          }
        }
      }
    }
  } finally {
    watch.stop();
  }
  assert.equal(fetchAttempts.length, before, `pi-ai tried to fetch: ${fetchAttempts.slice(before).join(', ')}`);
  assert.deepEqual(watch.seen, [], 'a connection was attempted');
  say(t, `${checked} payloads captured, no fetch, no connection`);
});

// Later system messages (system-patch-front, system-last, last-system) are
// left out of the compared cases (laterSystem above).
test('(a) the generated conversations reach every rule they are meant to', () => {
  const seen = new Set(MODELS.flatMap((id) => casesFor(id).flatMap((c) => c.features)));
  const wanted = [
    'tool-chain', 'blank-text', 'not-blank-zwsp', 'thinking-empty', 'thinking-unsigned', 'thinking-blank-signature', 'thinking-signature-only',
    'thinking-redacted', 'assistant-error', 'assistant-aborted', 'foreign-model', 'foreign-provider', 'tool-id-normalized',
    'call-without-result', 'user-string', 'user-blocks', 'user-blank', 'user-image', 'custom-string', 'custom-blocks',
    'compaction-summary', 'branch-summary', 'bash', 'bash-excluded', 'result-error', 'result-isError-absent', 'result-empty',
    'result-image', 'error-result-image', 'result-multi-text', 'stub', 'stub-spilled', 'purged-args', 'compressed-chain',
    'thinking-stripped', 'assistant-empty-content', 'provider-thinking-level', 'system-sections', 'system-mid',
    'system-between-results', 'system-tools-added', 'system-tools-removed', 'no-system', 'surrogates',
    'last-user', 'last-toolResult', 'last-assistant', 'last-custom', 'last-bashExecution',
  ];
  assert.deepEqual(wanted.filter((f) => !seen.has(f)), []);
});

// ---------------------------------------------------------------------------
// (b) and (c): the native model against pi-ai

const clip = (v) => {
  const s = JSON.stringify(v);
  return s === undefined ? 'undefined' : s.length > 600 ? `${s.slice(0, 600)}...` : s;
};

// The deepest path where two payloads first differ, with both values there.
function firstDifference(actual, expected, at = '') {
  if (isDeepStrictEqual(actual, expected)) return null;
  const both = (v) => v !== null && typeof v === 'object';
  if (both(actual) && both(expected) && Array.isArray(actual) === Array.isArray(expected)) {
    if (Array.isArray(expected)) {
      for (let i = 0; i < Math.min(actual.length, expected.length); i++) {
        const d = firstDifference(actual[i], expected[i], `${at}[${i}]`);
        if (d) return d;
      }
      return `${at}: native has ${actual.length} entries, pi-ai ${expected.length}; first extra: ${clip(actual.length > expected.length ? actual[expected.length] : expected[actual.length])}`;
    }
    for (const k of new Set([...Object.keys(expected), ...Object.keys(actual)])) {
      const d = firstDifference(actual[k], expected[k], `${at}.${k}`);
      if (d) return d;
    }
  }
  return `${at || '(top)'}: native ${clip(actual)}, pi-ai ${clip(expected)}`;
}

const features = (c) => (c.features ? ` (features: ${c.features.join(' ')})` : '');

// Native against pi-ai over `list` for one model and retention: the cases
// that differ (with where), and how many equal ones differ in JSON text only.
async function compare(list, id, retention) {
  const model = await anthropicModel(id);
  const modelJson = JSON.stringify(model);
  const failures = [];
  let keyOrder = 0;
  for (const c of list) {
    const expected = await piPayload(c.messages, model, { retention, reasoning: REASONING });
    const want = expected.system === undefined ? { messages: expected.messages } : { system: expected.system, messages: expected.messages };
    let text;
    let actual;
    try {
      text = native.replayWirePayload(JSON.stringify(c.messages), modelJson, retention);
      actual = JSON.parse(text);
    } catch (err) {
      failures.push(`${c.name}: native threw ${err && err.message}${features(c)}`);
      continue;
    }
    const d = firstDifference(actual, want);
    if (d) failures.push(`${c.name}: ${d}${features(c)}`);
    else if (text !== JSON.stringify(want)) keyOrder++;
  }
  return { failures, keyOrder, total: list.length, where: `${id}, retention ${retention}` };
}

function report(t, runs) {
  const keyOrder = runs.reduce((n, r) => n + r.keyOrder, 0);
  const total = runs.reduce((n, r) => n + r.total, 0);
  if (keyOrder > 0) say(t, `${keyOrder} of ${total} equal payloads differ from pi-ai's JSON text in key order only`);
  const failed = runs.filter((r) => r.failures.length > 0);
  const lines = failed.flatMap((r) => [`${r.where}: ${r.failures.length} of ${r.total} differ; first:`, ...r.failures.slice(0, 3).map((f) => `  ${f}`)]);
  assert.equal(failed.length, 0, `native differs from pi-ai:\n${lines.join('\n')}`);
}

for (const id of MODELS) {
  for (const retention of RETENTIONS) {
    test(`(b) generated conversations: ${id}, retention ${retention}`, { skip: NO_NATIVE }, async (t) => report(t, [await compare(casesFor(id), id, retention)]));
  }
}

for (const name of CORPUS_FILES) {
  const skip = NO_NATIVE || (corpusFile(name) === null && '../shared/corpus absent');
  test(`(c) corpus ${name}.json prefixes, every model and retention`, { skip }, async (t) => {
    const list = corpusCases(name);
    const runs = [];
    for (const id of MODELS) for (const retention of RETENTIONS) runs.push(await compare(list, id, retention));
    report(t, runs);
  });
}
