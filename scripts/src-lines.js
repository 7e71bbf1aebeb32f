'use strict';
// Lines of Rust under a folder (default src/) outside `#[cfg(test)]`
// items: the count the house issues (43) set their targets in. An item
// is skipped from its `#[cfg(test)]` attribute through its closing brace
// (or its `;` when it has no body). Blank lines and comments count.
//
//   node scripts/src-lines.js [dir]

const fs = require('node:fs');
const path = require('node:path');

function rustFiles(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...rustFiles(p));
    else if (e.name.endsWith('.rs')) out.push(p);
  }
  return out;
}

/** Lines of `text` outside `#[cfg(test)]` items. */
function countOutsideTests(text) {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  let count = 0;
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].trim().startsWith('#[cfg(test)]')) {
      count++;
      continue;
    }
    let j = i + 1;
    while (j < lines.length && lines[j].trim().startsWith('#[')) j++;
    let depth = 0;
    let opened = false;
    for (; j < lines.length; j++) {
      const l = lines[j];
      depth += (l.match(/\{/g) ?? []).length - (l.match(/\}/g) ?? []).length;
      if (l.includes('{')) opened = true;
      if ((opened && depth <= 0) || (!opened && l.trim().endsWith(';'))) break;
    }
    i = j;
  }
  return count;
}

const dir = process.argv[2] ?? path.join(__dirname, '..', 'src');
const total = rustFiles(dir).reduce((n, f) => n + countOutsideTests(fs.readFileSync(f, 'utf8')), 0);
console.log(total);
