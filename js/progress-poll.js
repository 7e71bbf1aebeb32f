'use strict';

// What replayAsync (js/replay.js) and tuneAsync (js/tune.js) share: the
// native work reports its progress in a counter (`NativeReplayProgress`)
// that the JS thread polls for the caller's `onProgress(done, total)`,
// every 100 ms while the work runs and once more when it is done.

const PROGRESS_INTERVAL_MS = 100;

/**
 * Checks `onProgress` (undefined, null or a function; `where` names the
 * call in the error), then runs `work(progress)` with a fresh counter,
 * polling it for `onProgress`; resolves to what `work` resolves to.
 */
async function withProgress(native, onProgress, where, argumentError, work) {
  if (onProgress !== undefined && onProgress !== null && typeof onProgress !== 'function') {
    throw argumentError(`${where}: onProgress must be a function`);
  }
  const progress = new native.NativeReplayProgress();
  let timer = null;
  if (onProgress) {
    timer = setInterval(() => onProgress(progress.done, progress.total), PROGRESS_INTERVAL_MS);
    if (typeof timer.unref === 'function') timer.unref();
  }
  try {
    const result = await work(progress);
    if (onProgress) onProgress(progress.done, progress.total);
    return result;
  } finally {
    if (timer !== null) clearInterval(timer);
  }
}

module.exports = { withProgress };
