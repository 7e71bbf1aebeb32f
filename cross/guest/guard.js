'use strict';
// Preloaded (node -r, bun --preload) into the project's own tests when they
// run on a cross target's runtime (cross/runtime.test.js): before any test,
// the package must have loaded that target's native binary, and only it, from
// its platform package; otherwise the run stops here instead of passing on
// the JS fallback or on another build.
const fs = require('node:fs');
const path = require('node:path');

const expected = process.env.XBUILD_EXPECT_TARGET;
const stage = process.env.XBUILD_STAGE;
const binding = require(path.join(stage, 'loader.js'));
// The mapped .node files, as the kernel (or qemu, for its guest) lists them.
const mapped = [...new Set(fs.readFileSync('/proc/self/maps', 'utf8').split('\n').map((l) => l.split(/\s+/).slice(5).join(' ')).filter((f) => f.endsWith('.node')))];
const wanted = path.join('npm', expected, `condense-native.${expected}.node`);
if (binding.backend !== 'native' || binding.target !== expected || mapped.length !== 1 || !mapped[0].endsWith(wanted)) {
  process.stderr.write(
    `guard: expected the native ${expected} binary from ${wanted}; got backend=${binding.backend} target=${binding.target} ` +
      `mapped=${JSON.stringify(mapped)} errors=${JSON.stringify(binding.loadErrors)}\n`,
  );
  process.exit(3);
}
