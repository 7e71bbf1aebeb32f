'use strict';
// The real host: pi's own extension loader loads a small extension
// (fixtures/pi-extension/condense-extension.js) whose `context` handler
// renders through one PruneSession, and pi's own ExtensionRunner emits the
// context events of a growing conversation (the bundled sample) the way pi's
// agent does before each model call. What pi hands on must equal
// pruneMessages's result for the same input, event after event, also across
// the flushes that move the thinking boundary.
// Runs under `node --test` and `bun test`.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const { pruneMessages } = require('..');
const pure = require('../js/pure.js');

const ROOT = path.join(__dirname, '..');
const EXTENSION = path.join(__dirname, 'fixtures', 'pi-extension', 'condense-extension.js');
const ANNOTATE = path.join(__dirname, 'fixtures', 'pi-extension', 'annotate-extension.js');
const PI_NAME = '@earendil-works/pi-coding-agent';
const PI_DIR = path.join(ROOT, 'node_modules', ...PI_NAME.split('/'));
const PI_PKG = JSON.parse(fs.readFileSync(path.join(PI_DIR, 'package.json'), 'utf8'));

const SAMPLE_TEXT = fs.readFileSync(path.join(ROOT, 'sample', 'session.json'), 'utf8');
const sample = JSON.parse(SAMPLE_TEXT);
const { messages, state, config } = sample;

// pi 1.x keeps the prompt and tools in system messages inside the transcript;
// `context` handlers never see them and pi puts them back in front. This one
// is already in the shape pi rebuilds (getCurrentSystemMessage).
const SYSTEM = {
  role: 'system',
  content: 'You are pi, a coding agent working in /home/dev/ledgerline.',
  toolsAdded: [
    {
      name: 'read',
      description: 'Read a file',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  ],
  timestamp: 0,
};

// pi declares `engines.node` >= 22.19 and its package entry needs Node 22
// (it imports fs.globSync). On an older Node the test imports the modules the
// entry re-exports the runner, the loader and the event bus from: the same
// code, reached past the exports map. Bun and newer Node take the entry.
function entryRuns() {
  if (process.versions.bun) return true;
  const want = /^>=\s*(\d+)\.(\d+)/.exec((PI_PKG.engines && PI_PKG.engines.node) || '');
  if (!want) return true;
  const [major, minor] = process.versions.node.split('.').map(Number);
  const [wantMajor, wantMinor] = [Number(want[1]), Number(want[2])];
  return major > wantMajor || (major === wantMajor && minor >= wantMinor);
}

const VIA_ENTRY = entryRuns();
const HOST = `pi ${PI_PKG.version} via ${VIA_ENTRY ? 'its package entry' : 'its runner modules (Node below its engines)'}`;

async function importPi() {
  if (VIA_ENTRY) return import(PI_NAME);
  const dist = (file) => pathToFileURL(path.join(PI_DIR, 'dist', ...file.split('/'))).href;
  const [extensions, bus] = await Promise.all([import(dist('core/extensions/index.js')), import(dist('core/event-bus.js'))]);
  return { ...extensions, createEventBus: bus.createEventBus };
}

// Loads the extensions the way pi does at startup, in an empty project and
// agent directory (so nothing else is discovered), and builds the runner.
async function startHost(cwd, extensionPaths) {
  const pi = await importPi();
  const bus = pi.createEventBus();
  const loaded = await pi.discoverAndLoadExtensions(extensionPaths, cwd, path.join(cwd, 'agent'), bus);
  assert.deepEqual(loaded.errors, []);
  assert.deepEqual(loaded.extensions.map((e) => e.resolvedPath), extensionPaths);
  const runner = new pi.ExtensionRunner(loaded.extensions, loaded.runtime, cwd, undefined, undefined);
  const errors = [];
  runner.onError((err) => errors.push(err));
  const heard = { rendered: [], flushed: [] };
  bus.on('condense-native:rendered', (report) => heard.rendered.push(report));
  bus.on('condense-native:flushed', (frontier) => heard.flushed.push(frontier));
  return { runner, bus, errors, heard };
}

function assistantTimestamps(list) {
  return list.filter((m) => m.role === 'assistant' && typeof m.timestamp === 'number').map((m) => m.timestamp);
}

// SPEC 6, computed here from the reference's own function.
function flushedBoundary(rendered, closing, prev) {
  const next = pure.computeThinkingBoundary(
    assistantTimestamps(closing === undefined ? rendered : [...rendered, closing]),
    config.thinkingStrip.keepLastTurns,
    prev ?? undefined,
  );
  return next === undefined ? prev : next;
}

function noErrors(errors, where) {
  assert.equal(errors.length, 0, `${where}: pi reported ${JSON.stringify(errors[0])}`);
}

// One context event as pi's agent makes it before a model call: the whole
// transcript goes to runner.emitContext (pi structuredClones it, hands the
// handlers the non-system messages, takes a returned { messages } and puts
// the system message back in front). Checks what pi hands on, and what the
// extension heard from its render, against pruneMessages on the same input;
// `after` applies the handlers that run after condense's to that expectation.
async function checkEvent(host, input, options, where, after) {
  const seen = host.heard.rendered.length;
  const out = await host.runner.emitContext([SYSTEM, ...input]);
  noErrors(host.errors, where);
  assert.equal(host.heard.rendered.length, seen + 1, `${where}: the context handler did not run`);
  const report = host.heard.rendered[seen];

  const expected = pruneMessages(input, options);
  const handedOn = [SYSTEM, ...(after ? after(structuredClone(expected.messages)) : expected.messages)];
  assert.equal(JSON.stringify(out), JSON.stringify(handedOn), `${where}: pi handed on something else`);
  assert.equal(report.pruned, expected.pruned, `${where}: pruned`);
  assert.equal(report.beforeChars, expected.beforeChars, `${where}: beforeChars`);
  assert.equal(report.afterChars, expected.afterChars, `${where}: afterChars`);
  assert.deepEqual(report.frontier, expected.frontier, `${where}: frontier`);
  assert.equal(report.sameArray, !expected.pruned, `${where}: a no-op returns pi's array itself, a prune a new one`);
  if (expected.pruned) {
    assert.equal(JSON.stringify(expected.messages).length, expected.afterChars, `${where}: afterChars is not the output's size`);
    assert.equal(JSON.stringify(input).length, expected.beforeChars, `${where}: beforeChars is not the input's size`);
  }

  const oracle = pure.pruneMessages(input, options);
  assert.equal(JSON.stringify(expected.messages), JSON.stringify(oracle.messages), `${where}: pruneMessages differs from js/pure.js`);
  assert.equal(expected.pruned, oracle.pruned, `${where}: pruned differs from js/pure.js`);
  return expected;
}

// Grows the sample conversation as pi's agent does: a context event before
// every model call, and agent_end (the extension flushes) when a user request
// is over. Returns counts for the caller's assertions.
async function driveSample(host, after) {
  let boundary = sample.thinkingBoundaryTimestamp;
  host.bus.emit('condense-native:open', { config, state, thinkingStripBoundaryTimestamp: boundary });
  noErrors(host.errors, 'open');

  const counts = { events: 0, pruned: 0, movedBoundary: 0 };
  let lastRendered = [];
  let runStart = 0;
  for (let n = 1; n <= messages.length; n++) {
    // A new user request: the previous run ended with an assistant message
    // that no render has seen; pi emits agent_end with the run's messages.
    if (n < messages.length && messages[n].role === 'user') {
      const run = messages.slice(runStart, n);
      const closing = run.filter((m) => m.role === 'assistant').pop();
      const flushes = host.heard.flushed.length;
      await host.runner.emit({ type: 'agent_end', messages: structuredClone(run) });
      noErrors(host.errors, `agent_end before message ${n}`);
      assert.equal(host.heard.flushed.length, flushes + 1, `agent_end before message ${n}: no flush`);
      const want = flushedBoundary(lastRendered, closing, boundary);
      assert.deepEqual(host.heard.flushed[flushes], { thinkingStripBoundaryTimestamp: want }, `flush before message ${n}`);
      if (want !== boundary) counts.movedBoundary++;
      boundary = want;
      runStart = n;
    }
    // pi renders before every model call: whenever the next message is the
    // model's, and once more for the request still in progress at the end.
    if (n < messages.length && messages[n].role !== 'assistant') continue;
    const input = messages.slice(0, n);
    const options = { state, config, thinkingStripBoundaryTimestamp: boundary };
    const result = await checkEvent(host, input, options, `context event ${counts.events} (${n} messages)`, after);
    counts.events++;
    if (result.pruned) counts.pruned++;
    lastRendered = input;
  }
  counts.boundary = boundary;
  return counts;
}

async function withHost(extensionPaths, body) {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-pi-host-'));
  try {
    return await body(await startHost(cwd, extensionPaths));
  } finally {
    fs.rmSync(cwd, { recursive: true, force: true });
  }
}

test(`${HOST}: what pi hands on equals pruneMessages at every context event of the growing sample`, async () => {
  const started = Date.now();
  await withHost([EXTENSION], async (host) => {
    const counts = await driveSample(host);
    assert.ok(counts.events >= 100, `only ${counts.events} context events`);
    assert.ok(counts.pruned >= 1, 'no context event was pruned');
    assert.ok(counts.movedBoundary >= 1, 'no flush moved the thinking boundary');

    // A new state (at a flush) and a conversation that starts over: nothing
    // to prune, so the handler returns pi's own array and pi keeps its copy.
    host.bus.emit('condense-native:set-state', {});
    noErrors(host.errors, 'set-state');
    const input = messages.slice(0, 1);
    const options = { state: {}, config, thinkingStripBoundaryTimestamp: counts.boundary };
    const result = await checkEvent(host, input, options, 'no-op event');
    assert.equal(result.pruned, false);
    assert.equal(result.messages, input, 'a no-op pruneMessages returns the caller array');
  });
  // Neither pi nor the addon touched the sample's objects.
  assert.ok(JSON.stringify(sample) + '\n' === SAMPLE_TEXT, 'the input messages were modified');
  // Only a guard against a pathological slowdown (it takes 5-10 s on a quiet
  // 2-core machine); the bound is loose because the machines are noisy.
  assert.ok(Date.now() - started < 60000, `took ${Date.now() - started} ms`);
});

// pi lets a context handler edit event.messages in place instead of returning
// a list, and a later handler gets the objects an earlier one returned. Each
// render must therefore hand out objects that no earlier render handed out:
// with pruneMessages (and pi-condense) every model call sees one note per
// tool result. PruneSession builds its edited messages afresh from each
// event's own objects, so notes never pile up across renders.
test(
  `${HOST}: a later handler editing messages in place sees fresh objects at every event`,
  async () => {
    const note = (list) => {
      for (const m of list) if (m.role === 'toolResult' && Array.isArray(m.content)) m.content.push({ type: 'text', text: '[annotated]' });
      return list;
    };
    await withHost([EXTENSION, ANNOTATE], async (host) => {
      const counts = await driveSample(host, note);
      assert.ok(counts.pruned >= 1, 'no context event was pruned');
    });
    assert.ok(JSON.stringify(sample) + '\n' === SAMPLE_TEXT, 'the input messages were modified');
  },
);

// pi-condense's own context handler, switched over with one import line
// (fixtures/pi-extension/dropin-extension.js): the drop-in keeps the
// conversation per indexer, and the test flushes that indexer between user
// requests as pi-condense does (records, short refs and a summary body for
// the request's tool results). What pi hands on must equal what the
// reference's pruneMessages makes of the same input with the same indexer.
const DROPIN = path.join(__dirname, 'fixtures', 'pi-extension', 'dropin-extension.js');
const { loadReference, fillIndexer } = require('./helpers/indexer.js');
const referenceDir = path.join(ROOT, '..', 'shared', 'reference');

test(
  `${HOST}: the 2.4 drop-in, on pi-condense's indexer flushed between requests, equals the reference at every event`,
  { skip: !fs.existsSync(referenceDir) && 'the reference modules are absent (../shared/reference)' },
  async () => {
    const ref = await loadReference('2.4.3');
    // The state the sample had before its last requests were summarized:
    // the results of the second half of the conversation are pending.
    const half = Math.floor(messages.length / 2);
    const pendingIds = new Set(messages.slice(half).filter((m) => m.role === 'toolResult').map((m) => m.toolCallId));
    const early = structuredClone(state);
    for (const id of pendingIds) {
      delete early.records[id];
      delete early.dedupAliases[id];
    }
    const { indexer } = fillIndexer(ref, '2.4.3', early);
    const calls = new Map();
    for (const m of messages) if (m.role === 'assistant') for (const b of m.content) if (b.type === 'toolCall') calls.set(b.id, b);
    const flush = (upTo) => {
      const batch = messages.slice(0, upTo).filter((m) => m.role === 'toolResult' && !indexer.isSummarized(m.toolCallId) && state.records[m.toolCallId]);
      if (batch.length === 0) return 0;
      const toolCalls = batch.map((m) => ({ ...state.records[m.toolCallId], toolCallId: m.toolCallId, resultText: 'x', isError: false }));
      indexer.addBatch({ toolCalls, turnIndex: 0, timestamp: 0 }, () => {});
      indexer.registerSummaryRefs(batch.filter((m) => state.shortRefs[m.toolCallId]).map((m) => ({ shortId: state.shortRefs[m.toolCallId], toolCallId: m.toolCallId })));
      indexer.registerSummaryBody(batch.map((m) => m.toolCallId), `summary of ${batch.length} results`);
      return batch.length;
    };
    await withHost([DROPIN], async (host) => {
      let boundary = sample.thinkingBoundaryTimestamp;
      host.bus.emit('condense-native:dropin', { indexer, config, boundary });
      let events = 0;
      let flushed = 0;
      let pruned = 0;
      for (let n = 1; n <= messages.length; n++) {
        if (n > half && n < messages.length && messages[n].role === 'user') flushed += flush(n);
        if (n < messages.length && messages[n].role !== 'assistant') continue;
        const input = messages.slice(0, n);
        const seen = host.heard.rendered.length;
        const out = await host.runner.emitContext([SYSTEM, ...input]);
        noErrors(host.errors, `event ${events}`);
        const report = host.heard.rendered[seen];
        const want = ref.pruneMessages(structuredClone(input), indexer, config.chainCompression, config.errorPurge, config.thinkingStrip, config.protection, config.recoveryGraceTurns, boundary);
        assert.equal(JSON.stringify(out), JSON.stringify([SYSTEM, ...want.messages]), `event ${events} (${n} messages): pi handed on something else`);
        assert.deepEqual([report.pruned, report.beforeChars, report.afterChars], [want.pruned, want.beforeChars, want.afterChars], `event ${events}: sizes`);
        assert.equal(report.sameArray, !want.pruned, `event ${events}: a no-op returns pi's array itself`);
        events++;
        if (want.pruned) pruned++;
      }
      assert.ok(events >= 100 && pruned >= 50 && flushed >= 10, JSON.stringify({ events, pruned, flushed }));
    });
    assert.ok(JSON.stringify(sample) + '\n' === SAMPLE_TEXT, 'the input messages were modified');
  },
);
