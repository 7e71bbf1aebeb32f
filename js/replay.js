'use strict';

// replay / replayAsync: every model call of a pi session file rendered as
// pi-condense would have rendered it, under several pruning policies side
// by side, with what each costs in prompt-cache writes and reads. The
// binding does the whole replay natively and hands back one JSON text (its
// fields are documented in src/replay/report.rs and index.d.ts); this layer
// checks the options, parses the result, polls the progress counter of an
// async replay, and turns a failure into an Error with a stable `code`, the
// file `line` and the file name (js/filearg.js, shared with loadSession).

const { fileInputOf, requireBinding, throwIfFailed } = require('./filearg.js');
const { loadCatalog } = require('./catalog.js');
const { configProblems } = require('./settings-check.js');
const { withProgress } = require('./progress-poll.js');
const codes = require('./codes.js');

const POLICIES = ['none', 'config', 'no-thinking-strip', 'live-thinking-strip', '2.9.1'];
// Opt-in: a release behind the cache-aware gate (src/gate/rule.rs).
const GATED = ['config+gate', '2.9.1+gate'];
const KNOWN = [...POLICIES, ...GATED];
const RELEASES = ['2.4.3', '2.9.1'];

// What each policy is, in a pi user's words: the release it renders and how
// it differs from that release as configured.
const LABELS = {
  none: 'no pruning',
  config: 'pi-condense 2.4.3',
  'no-thinking-strip': '2.4.3 without thinking strip',
  'live-thinking-strip': '2.4.3, thinking strip counted live',
  '2.9.1': 'pi-condense 2.9.1',
  'config+gate': 'pi-condense 2.4.3 behind the cache-aware gate',
  '2.9.1+gate': 'pi-condense 2.9.1 behind the cache-aware gate',
};
// The policy that renders a release with the user's settings.
const POLICY_OF_RELEASE = { '2.4.3': 'config', '2.9.1': '2.9.1' };

/**
 * Labels each policy of a replay result (`label`, and `yours: true` on the
 * one the user runs when `release` is known); the order is kept.
 */
function labelPolicies(result, release) {
  const yours = release ? POLICY_OF_RELEASE[release] : null;
  for (const p of result.policies) {
    p.label = p.policy === yours ? `${LABELS[p.policy]} (yours)` : LABELS[p.policy];
    p.yours = p.policy === yours;
  }
  return result;
}
const NUMBERS = ['charsPerToken', 'inputPrice', 'cacheWriteMultiplier', 'cacheReadMultiplier', 'cacheTtlSeconds'];

function makeReplayApi(native, { argumentError }) {
  function optionsJson(options, where) {
    if (options === undefined || options === null) return JSON.stringify({ catalog: loadCatalog() });
    if (typeof options !== 'object') throw argumentError(`${where}: options must be an object`);
    const out = {};
    if (options.policies !== undefined && options.policies !== null) {
      const p = options.policies;
      if (!Array.isArray(p) || p.length === 0 || p.some((n) => !KNOWN.includes(n))) {
        throw argumentError(`${where}: policies must be a non-empty array of ${KNOWN.map((n) => `'${n}'`).join(', ')}`);
      }
      out.policies = p;
    }
    if (options.gate !== undefined && options.gate !== null) out.gate = gateSettings(options.gate, `${where}: gate`);
    if (options.compaction !== undefined && options.compaction !== null) {
      // pi's `compaction` settings, checked natively by key path
      // (src/replay/compaction.rs).
      if (typeof options.compaction !== 'object' || Array.isArray(options.compaction)) {
        throw argumentError(`${where}: compaction must be an object (pi's compaction settings)`);
      }
      out.compaction = options.compaction;
    }
    if (options.config !== undefined && options.config !== null) {
      if (typeof options.config !== 'object' || Array.isArray(options.config)) {
        throw argumentError(`${where}: config must be an object (pi's settings file, its contextPrune block, or a render config)`);
      }
      const problems = configProblems(options.config);
      if (problems.length > 0) {
        const err = new TypeError(`${where}: config: ${problems.join('; ')}`);
        err.code = codes.INVALID_CONFIG;
        err.problems = problems;
        throw err;
      }
      out.config = options.config;
    }
    for (const name of NUMBERS) {
      const v = options[name];
      if (v === undefined || v === null) continue;
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (name === 'charsPerToken' && v === 0)) {
        throw argumentError(`${where}: ${name} must be a finite number ${name === 'charsPerToken' ? '> 0' : '>= 0'}`);
      }
      out[name] = v;
    }
    const choices = { cacheModel: ['provider', 'prefix'], retention: ['short', 'long'], recordedPolicy: POLICIES, thinkingBoundary: ['auto', 'recorded', 'config'], release: RELEASES, cacheWarming: ['idle', 'off', 'streaming'] };
    for (const [name, allowed] of Object.entries(choices)) {
      const v = options[name];
      if (v === undefined || v === null) continue;
      if (!allowed.includes(v)) throw argumentError(`${where}: ${name} must be one of ${allowed.map((n) => `'${n}'`).join(', ')}`);
      out[name] = v;
    }
    if (options.model !== undefined && options.model !== null) {
      if (typeof options.model !== 'string' || !/^[^/]+\/.+$/.test(options.model)) {
        throw argumentError(`${where}: model must be 'provider/id' (e.g. 'anthropic/claude-sonnet-4-5')`);
      }
      out.model = options.model;
    }
    if (out.release !== undefined) delete out.release;
    out.catalog = loadCatalog();
    if (options.renders !== undefined && options.renders !== null) {
      if (typeof options.renders !== 'boolean') throw argumentError(`${where}: renders must be a boolean`);
      out.renders = options.renders;
    }
    if (options.contexts !== undefined && options.contexts !== null) {
      if (typeof options.contexts !== 'boolean') throw argumentError(`${where}: contexts must be a boolean`);
      out.contexts = options.contexts;
    }
    if (options.contextsDir !== undefined && options.contextsDir !== null) {
      if (typeof options.contextsDir !== 'string' || options.contextsDir === '') throw argumentError(`${where}: contextsDir must be a directory path`);
      out.contextsDir = options.contextsDir;
    }
    try {
      return JSON.stringify(out);
    } catch (cause) {
      throw argumentError(`${where}: config cannot be serialized as JSON: ${cause.message}`, cause);
    }
  }

  /**
   * Gate settings checked by the one copy of their rules (src/gate/rule.rs,
   * through the binding) and written whole: `{horizon, budget}`.
   */
  function gateSettings(settings, where = 'gateSettings') {
    requireBinding(native, 'checkGateSettings', where);
    let json;
    try {
      json = JSON.stringify(settings ?? {});
    } catch (cause) {
      throw argumentError(`${where}: not JSON (${cause.message})`, cause);
    }
    const result = native.checkGateSettings(json, where);
    if (result.errorMessage) throw argumentError(result.errorMessage);
    return JSON.parse(result.json);
  }

  const inputOf = (pathOrBuffer, where) => fileInputOf(pathOrBuffer, where, argumentError);
  const requireNative = (where) => requireBinding(native, 'replayBytes', where);

  function settle(result, name) {
    throwIfFailed(result, name);
    return JSON.parse(result.json);
  }

  const releaseOf = (options) => (options && RELEASES.includes(options.release) ? options.release : null);

  /**
   * Replays a pi session file (a path, file URL or its bytes, read in
   * place) on the calling thread.
   */
  function replay(pathOrBuffer, options) {
    requireNative('replay');
    const input = inputOf(pathOrBuffer, 'replay');
    const json = optionsJson(options, 'replay');
    const result = input.bytes ? native.replayBytes(input.bytes, json) : native.replayFile(input.path, json);
    return labelPolicies(settle(result, input.name), releaseOf(options));
  }

  /**
   * The same replay on the libuv pool (bytes are copied first). What stays
   * on the JS thread: checking the options, polling the progress counter
   * for `onProgress(done, total)` every 100 ms, and `JSON.parse` of the
   * result when the promise settles.
   */
  async function replayAsync(pathOrBuffer, options) {
    requireNative('replayAsync');
    const input = inputOf(pathOrBuffer, 'replayAsync');
    const json = optionsJson(options, 'replayAsync');
    const onProgress = options && options.onProgress;
    const result = await withProgress(native, onProgress, 'replayAsync', argumentError, (progress) =>
      native.replayAsync(input.bytes ?? input.path, json, progress),
    );
    return labelPolicies(settle(result, input.name), releaseOf(options));
  }

  return { replay, replayAsync, gateSettings, POLICIES, optionsJson, settle };
}

module.exports = { makeReplayApi, RELEASES, POLICIES, GATED };
