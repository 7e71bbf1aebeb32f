'use strict';

// What the benchmarks share: a forced full GC (Bun, Node with or without
// --expose-gc) to run untimed before each timed call, and the median.

const IS_BUN = typeof Bun !== 'undefined';

let forceGc = () => {};
let gcAvailable = true;
if (IS_BUN) {
  forceGc = () => Bun.gc(true);
} else if (typeof global.gc === 'function') {
  forceGc = global.gc;
} else {
  try {
    require('node:v8').setFlagsFromString('--expose-gc');
    const gc = require('node:vm').runInNewContext('gc');
    if (typeof gc === 'function') forceGc = gc;
    else gcAvailable = false;
  } catch {
    gcAvailable = false; // no forced GC: timings just get noisier
  }
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

module.exports = { IS_BUN, forceGc, gcAvailable, median };
