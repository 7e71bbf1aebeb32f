'use strict';

// tune / tuneAsync: which pi-condense settings to run, from the user's own
// session files. The binding replays every file under a grid of render-time
// configurations, prices each with the replay's provider cache model and
// answers with one JSON text (fields in src/tune/report.rs and
// index.d.ts); this layer expands directories into their *.jsonl files,
// checks the options (those of replay, plus `release`), polls the progress
// of an async tune, and turns a failure into an Error with a stable `code`.

const { requireBinding } = require('./filearg.js');
const { sessionFiles } = require('./session-files.js');
const { withProgress } = require('./progress-poll.js');
const codes = require('./codes.js');

const RELEASES = ['2.4.3', '2.9.1'];

// Paths that gave no session file join the files the tune left out.
function withProblems(result, problems) {
  const listed = problems.map((p) => ({ file: p.path, error: { code: codes.IO, message: p.message, line: null } }));
  result.errors = [...listed, ...(result.errors ?? [])];
  return result;
}

function makeTuneApi(native, { argumentError, replayApi }) {
  function inputs(paths, options, where) {
    const list = typeof paths === 'string' || paths instanceof URL ? [paths] : paths;
    if (!Array.isArray(list) || list.length === 0 || list.some((p) => typeof p !== 'string' && !(p instanceof URL))) {
      throw argumentError(`${where}: paths must be a session file or directory path, or a non-empty array of them`);
    }
    const { files, problems } = sessionFiles(list.map((p) => (p instanceof URL ? require('node:url').fileURLToPath(p) : p)));
    if (files.length === 0) {
      const err = argumentError(`${where}: no session file to tune: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
      err.code = codes.IO;
      throw err;
    }
    const release = options && options.release;
    if (release !== undefined && release !== null && !RELEASES.includes(release)) {
      throw argumentError(`${where}: release must be '2.4.3' or '2.9.1'`);
    }
    for (const name of ['policies', 'renders', 'contexts', 'contextsDir']) {
      if (options && options[name] !== undefined && options[name] !== null) {
        throw argumentError(`${where}: ${name} is the replay's (tune ranks its own grid of configurations and reports totals per configuration)`);
      }
    }
    const { release: _r, onProgress: _p, ...rest } = options ?? {};
    const json = JSON.parse(replayApi.optionsJson(rest, where));
    if (release) json.release = release;
    return { files, problems, json: JSON.stringify(json) };
  }

  /** Tunes on the calling thread (the configurations run on rayon's pool). */
  function tune(paths, options) {
    requireBinding(native, 'tuneFiles', 'tune');
    const { files, problems, json } = inputs(paths, options, 'tune');
    return withProblems(replayApi.settle(native.tuneFiles(files, json), files.length === 1 ? files[0] : `${files.length} files`), problems);
  }

  /**
   * The same tune off the JS thread; `onProgress(done, total)` is polled
   * every 100 ms.
   */
  async function tuneAsync(paths, options) {
    requireBinding(native, 'tuneAsync', 'tuneAsync');
    const { files, problems, json } = inputs(paths, options, 'tuneAsync');
    const onProgress = options && options.onProgress;
    const result = await withProgress(native, onProgress, 'tuneAsync', argumentError, (progress) => native.tuneAsync(files, json, progress));
    return withProblems(replayApi.settle(result, files.length === 1 ? files[0] : `${files.length} files`), problems);
  }

  return { tune, tuneAsync };
}

module.exports = { makeTuneApi };
