'use strict';

// The peak RSS of this process, for the benchmarks that measure one load or
// replay in a fresh child (benches/load.js, benches/replay.js). Kept apart
// from timing.js, whose forced-GC set-up would run in those children too.

const fs = require('node:fs');

/** This process's peak RSS in MiB, rounded, as the children print it. */
function peakRssMiB() {
  // VmHWM (Linux) is this process's own peak; resourceUsage().maxRSS is
  // not reliable in a child under every runtime.
  let kb = process.resourceUsage().maxRSS;
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    if (m) kb = Number(m[1]);
  } catch {
    // not Linux
  }
  return (kb / 1024).toFixed(0);
}

module.exports = { peakRssMiB };
