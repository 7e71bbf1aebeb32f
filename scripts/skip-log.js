'use strict';
// Loaded by `bun test --preload` (scripts/test-bun.js): Bun's test reports
// say a test was skipped but not why, so this wraps node:test's `test`,
// `it` and `describe`, and a test's own `t.skip(reason)`, and appends a
// JSON line `{ file, reason, skipped }` per test to the file named by
// CONDENSE_TEST_SKIPS, for scripts/skipped.js to count and group.

const fs = require('node:fs');
const nodeTest = require('node:test');

const LOG = process.env.CONDENSE_TEST_SKIPS;

// The test file that is registering a test: the first frame that names one.
function callerFile() {
  const frame = (new Error().stack || '').split('\n').find((l) => /\.test\.[cm]?js/.test(l));
  const m = frame && /\(?((?:[A-Za-z]:)?[^():]+\.test\.[cm]?js)/.exec(frame.trim().replace(/^at /, ''));
  return m ? m[1] : null;
}

function note(file, skip) {
  const skipped = skip !== undefined && skip !== null && skip !== false && skip !== '';
  fs.appendFileSync(LOG, `${JSON.stringify({ file, reason: skipped ? (skip === true ? null : String(skip)) : undefined, skipped })}\n`);
}

function wrap(register, isSuite) {
  return function registered(name, options, fn) {
    const body = typeof options === 'function' ? options : fn;
    const opts = typeof options === 'object' && options !== null ? options : {};
    const file = callerFile();
    if (isSuite) {
      if (opts.skip) note(file, opts.skip);
      return register.apply(this, arguments);
    }
    if (opts.skip || typeof body !== 'function') {
      note(file, opts.skip || 'no body');
      return register.apply(this, arguments);
    }
    // A skip decided inside the test (`t.skip(reason)`) is noted then.
    const counted = function (t, ...rest) {
      let said = false;
      if (t && typeof t.skip === 'function') {
        const skip = t.skip.bind(t);
        t.skip = (reason) => {
          said = true;
          note(file, reason || true);
          return skip(reason);
        };
      }
      const done = () => {
        if (!said) note(file, undefined);
      };
      let result;
      try {
        result = body.call(this, t, ...rest);
      } catch (e) {
        done();
        throw e;
      }
      if (result && typeof result.then === 'function') return result.then((v) => (done(), v), (e) => (done(), Promise.reject(e)));
      done();
      return result;
    };
    const args = typeof options === 'function' ? [name, counted] : [name, options, counted];
    return register.apply(this, args);
  };
}

if (LOG) {
  for (const [name, isSuite] of [['test', false], ['it', false], ['describe', true]]) {
    if (typeof nodeTest[name] === 'function') nodeTest[name] = wrap(nodeTest[name], isSuite);
  }
}
