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

const POLICIES = ['none', 'config', 'no-thinking-strip', 'live-thinking-strip', '2.9.1'];
const NUMBERS = ['charsPerToken', 'inputPrice', 'cacheWriteMultiplier', 'cacheReadMultiplier', 'cacheTtlSeconds'];
const PROGRESS_INTERVAL_MS = 100;

function makeReplayApi(native, { argumentError }) {
  function optionsJson(options, where) {
    if (options === undefined || options === null) return JSON.stringify({ catalog: loadCatalog() });
    if (typeof options !== 'object') throw argumentError(`${where}: options must be an object`);
    const out = {};
    if (options.policies !== undefined && options.policies !== null) {
      const p = options.policies;
      if (!Array.isArray(p) || p.length === 0 || p.some((n) => !POLICIES.includes(n))) {
        throw argumentError(`${where}: policies must be a non-empty array of ${POLICIES.map((n) => `'${n}'`).join(', ')}`);
      }
      out.policies = p;
    }
    if (options.config !== undefined && options.config !== null) {
      if (typeof options.config !== 'object' || Array.isArray(options.config)) {
        throw argumentError(`${where}: config must be an object (pi's settings file, its contextPrune block, or a render config)`);
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
    const choices = { cacheModel: ['provider', 'prefix'], retention: ['short', 'long'], recordedPolicy: POLICIES, thinkingBoundary: ['auto', 'recorded', 'config'] };
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
    out.catalog = loadCatalog();
    if (options.renders !== undefined && options.renders !== null) {
      if (typeof options.renders !== 'boolean') throw argumentError(`${where}: renders must be a boolean`);
      out.renders = options.renders;
    }
    try {
      return JSON.stringify(out);
    } catch (cause) {
      throw argumentError(`${where}: config cannot be serialized as JSON: ${cause.message}`, cause);
    }
  }

  const inputOf = (pathOrBuffer, where) => fileInputOf(pathOrBuffer, where, argumentError);
  const requireNative = (where) => requireBinding(native, 'replayBytes', where);

  function settle(result, name) {
    throwIfFailed(result, name);
    return JSON.parse(result.json);
  }

  /**
   * Replays a pi session file (a path, file URL or its bytes, read in
   * place) on the calling thread.
   */
  function replay(pathOrBuffer, options) {
    requireNative('replay');
    const input = inputOf(pathOrBuffer, 'replay');
    const json = optionsJson(options, 'replay');
    const result = input.bytes ? native.replayBytes(input.bytes, json) : native.replayFile(input.path, json);
    return settle(result, input.name);
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
    if (onProgress !== undefined && onProgress !== null && typeof onProgress !== 'function') {
      throw argumentError('replayAsync: onProgress must be a function');
    }
    const progress = new native.NativeReplayProgress();
    let timer = null;
    if (onProgress) {
      timer = setInterval(() => onProgress(progress.done, progress.total), PROGRESS_INTERVAL_MS);
      if (typeof timer.unref === 'function') timer.unref();
    }
    try {
      const result = await native.replayAsync(input.bytes ?? input.path, json, progress);
      if (onProgress) onProgress(progress.done, progress.total);
      return settle(result, input.name);
    } finally {
      if (timer !== null) clearInterval(timer);
    }
  }

  return { replay, replayAsync, POLICIES, optionsJson, settle };
}

module.exports = { makeReplayApi };
