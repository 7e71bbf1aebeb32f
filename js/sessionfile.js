'use strict';

// loadSession / loadSessionAsync: read a pi session file natively and hand
// back the messages a `context` handler would receive, pi-condense's state
// rebuilt from the file, and the frontier. The binding returns one JSON
// text; this layer parses it (that parse is most of the JS-side cost, see
// benches/load.js) and turns a failure into an Error with a stable `code`,
// the file `line` and the file name (js/filearg.js, shared with replay).

const { fileInputOf, requireBinding, throwIfFailed } = require('./filearg.js');

const DIALECTS = new Set(['2.4.3', '2.9.1']);

function makeSessionFileApi(native, { argumentError }) {
  function optionsOf(options, where) {
    if (options === undefined || options === null) return { leafId: null, dialect: null };
    if (typeof options !== 'object') throw argumentError(`${where}: options must be an object`);
    const { leafId, dialect } = options;
    if (leafId !== undefined && leafId !== null && typeof leafId !== 'string') {
      throw argumentError(`${where}: leafId must be a string`);
    }
    if (dialect !== undefined && dialect !== null && !DIALECTS.has(dialect)) {
      throw argumentError(`${where}: dialect must be '2.4.3' or '2.9.1'`);
    }
    return { leafId: leafId ?? null, dialect: dialect ?? null };
  }

  const inputOf = (pathOrBuffer, where) => fileInputOf(pathOrBuffer, where, argumentError);
  const requireNative = (where) => requireBinding(native, 'loadSessionBytes', where);

  function settle(result, name) {
    throwIfFailed(result, name);
    return JSON.parse(result.json);
  }

  /**
   * Loads a pi session file (a path, file URL or the file's bytes) on the
   * calling thread.
   */
  function loadSession(pathOrBuffer, options) {
    requireNative('loadSession');
    const input = inputOf(pathOrBuffer, 'loadSession');
    const { leafId, dialect } = optionsOf(options, 'loadSession');
    const result = input.bytes
      ? native.loadSessionBytes(input.bytes, leafId, dialect)
      : native.loadSessionFile(input.path, leafId, dialect);
    return settle(result, input.name);
  }

  /**
   * The same load off the JS thread: the file read and the whole native load
   * run on the libuv pool (bytes are copied first). Parsing the JSON texts
   * into objects still happens on the JS thread when the promise settles.
   */
  async function loadSessionAsync(pathOrBuffer, options) {
    requireNative('loadSessionAsync');
    const input = inputOf(pathOrBuffer, 'loadSessionAsync');
    const { leafId, dialect } = optionsOf(options, 'loadSessionAsync');
    const result = await native.loadSessionAsync(input.bytes ?? input.path, leafId, dialect);
    return settle(result, input.name);
  }

  return { loadSession, loadSessionAsync };
}

module.exports = { makeSessionFileApi };
