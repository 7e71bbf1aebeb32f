'use strict';

// The progress bar of the replay CLI: one line on stderr, redrawn in place,
// only when stderr is a terminal (the caller decides; --json never has
// one). It shows renders done out of renders to do for the current file
// and which file of how many.

const WIDTH = 30;

function makeProgress(stream) {
  let shown = false;
  return {
    update(fileIndex, fileCount, name, done, total) {
      const frac = total > 0 ? Math.min(1, done / total) : 0;
      const filled = Math.round(frac * WIDTH);
      const bar = `[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}]`;
      const files = fileCount > 1 ? ` file ${fileIndex + 1}/${fileCount}` : '';
      const tail = name.length > 40 ? `...${name.slice(-37)}` : name;
      stream.write(`\r${bar} ${String(Math.round(frac * 100)).padStart(3)}%${files} ${tail}\x1b[K`);
      shown = true;
    },
    clear() {
      if (shown) stream.write('\r\x1b[K');
      shown = false;
    },
  };
}

module.exports = { makeProgress };
