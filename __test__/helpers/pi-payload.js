'use strict';
// pi-ai's own Anthropic request body for one model call, taken without a
// network call: the oracle for the replay's native model of the wire
// (`replayWirePayload`, __test__/wire-payload.test.js). The replay prices a
// call by the prefix Anthropic caches, so it must know the exact `system` and
// `messages` pi-ai 1.6.0 sends, markers (`cache_control`) included.
//
// How a call is captured. pi's agent hands each request's agent messages
// (system messages in front, as pi puts them back after the `context`
// handlers) to pi-coding-agent's `convertToLlm`, wraps the result with
// `normalizeContext({messages})` and calls the provider's `streamSimple`
// (pi-agent-core agent-loop.js, streamAssistantResponse). We do the same,
// with `api/anthropic-messages.js`'s `streamSimple` and an `onPayload`
// callback. pi-ai calls `onPayload(params)` with the finished body after
// `buildParams` and before the SDK sends anything (anthropic-messages.js,
// `stream`); the callback copies the body through JSON (what goes on the
// wire; `undefined` fields vanish) and throws, and pi-ai's catch turns the
// throw into an `error` result with our message, so the call ends there.
// pi-ai calls onPayload before any await, so the capture is in fact taken
// during the streamSimple call. Three guards make sure no connection is ever
// opened: the SDK gets a `fetch` that records the attempt and refuses; the
// model's baseUrl points at 127.0.0.1:9, a port fetch itself refuses ("bad
// port") without connecting; and a capture is only accepted when pi-ai
// tried no fetch and its result's error is our own stop. Only pi-ai's copy
// of the model gets that baseUrl (nothing in `system` or `messages` depends
// on it; with api.anthropic.com pi-ai would also plan a message thread, which
// it does after onPayload and which leaves the captured body alone).

const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const ROOT = path.join(__dirname, '..', '..');
const PI_NAME = '@earendil-works/pi-coding-agent';
const PI_DIR = path.join(ROOT, 'node_modules', ...PI_NAME.split('/'));
const AI_NAME = '@earendil-works/pi-ai';

const GUARD_BASE_URL = 'http://127.0.0.1:9';
const STOP = 'pi-payload: captured, request stopped before sending';

/** Every fetch pi-ai tried to make through a capture (should stay empty). */
const fetchAttempts = [];

function guardFetch(input) {
  fetchAttempts.push(String(input && input.url ? input.url : input));
  return Promise.reject(new Error('pi-payload: network refused'));
}

// pi's package entry needs Node 22 (fs.globSync); below its engines the
// module the entry re-exports convertToLlm from is imported instead.
function entryRuns() {
  if (process.versions.bun) return true;
  const pkg = JSON.parse(fs.readFileSync(path.join(PI_DIR, 'package.json'), 'utf8'));
  const want = /^>=\s*(\d+)\.(\d+)/.exec((pkg.engines && pkg.engines.node) || '');
  if (!want) return true;
  const [major, minor] = process.versions.node.split('.').map(Number);
  return major > Number(want[1]) || (major === Number(want[1]) && minor >= Number(want[2]));
}

let loaded = null;

/** pi's convertToLlm, pi-ai's anthropic streamSimple and normalizeContext, and the anthropic catalog. */
function loadPi() {
  if (loaded) return loaded;
  loaded = (async () => {
    let convertToLlm;
    let via;
    if (entryRuns()) {
      ({ convertToLlm } = await import(PI_NAME));
      via = 'package entry';
    } else {
      ({ convertToLlm } = await import(pathToFileURL(path.join(PI_DIR, 'dist', 'core', 'messages.js')).href));
      via = 'dist/core/messages.js (Node below its engines)';
    }
    const [anthropic, transcript, catalog] = await Promise.all([
      import(`${AI_NAME}/api/anthropic-messages`),
      import(`${AI_NAME}/utils/transcript`),
      import(`${AI_NAME}/providers/anthropic.models`),
    ]);
    if (typeof convertToLlm !== 'function') throw new Error('pi-coding-agent exports no convertToLlm');
    return {
      convertToLlm,
      streamSimple: anthropic.streamSimple,
      normalizeContext: transcript.normalizeContext,
      models: catalog.ANTHROPIC_MODELS,
      via,
    };
  })();
  return loaded;
}

/** The catalog entry of pi-ai's anthropic provider, as getModel would give it. */
async function anthropicModel(id) {
  const { models } = await loadPi();
  const model = models[id];
  if (!model) throw new Error(`pi-ai has no anthropic model ${id}`);
  return structuredClone(model);
}

/**
 * pi-ai's request body for `agentMessages` (pi agent messages, system
 * messages included, before convertToLlm) sent to `model` with an API key,
 * thinking on at `reasoning` (pi's default level, "medium", unless given)
 * and the given cache retention. Returns `{ system, messages }` as sent
 * (`system` is absent when pi-ai sends none) and the whole body as `params`.
 */
async function piPayload(agentMessages, model, { retention, reasoning = 'medium' } = {}) {
  const pi = await loadPi();
  const llm = pi.convertToLlm(structuredClone(agentMessages));
  const context = pi.normalizeContext({ messages: llm });
  let captured = null;
  const before = fetchAttempts.length;
  const s = pi.streamSimple({ ...structuredClone(model), baseUrl: GUARD_BASE_URL }, context, {
    apiKey: 'test-key',
    cacheRetention: retention,
    reasoning,
    fetch: guardFetch,
    maxRetries: 0,
    onPayload: (params) => {
      captured = JSON.parse(JSON.stringify(params));
      throw new Error(STOP);
    },
  });
  const result = await s.result();
  if (fetchAttempts.length !== before) throw new Error(`pi-payload: pi-ai tried to fetch ${fetchAttempts.slice(before).join(', ')}`);
  if (captured === null || result.stopReason !== 'error' || !String(result.errorMessage).includes(STOP)) {
    throw new Error(`pi-payload: no payload captured (${result.stopReason}: ${result.errorMessage})`);
  }
  const out = { messages: captured.messages };
  if (captured.system !== undefined) out.system = captured.system;
  return { ...out, params: captured };
}

module.exports = { piPayload, anthropicModel, loadPi, fetchAttempts, GUARD_BASE_URL };
