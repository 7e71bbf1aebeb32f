'use strict';

// Loads vendored conformance vectors (2.4.3's by default; pass the path of
// another file such as vectors-2.9.json), keeping each case's raw line so
// that `*-raw` cases can hand the addon their exact `messages` bytes.

const fs = require('node:fs');
const path = require('node:path');

const FILE = path.join(__dirname, '..', 'fixtures', 'vectors.json');

// End of the JSON value starting at `i` in `text` (strings and nesting aware).
function valueEnd(text, i) {
  let depth = 0;
  for (; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; text[i] !== '"'; i++) if (text[i] === '\\') i++;
      if (depth === 0) return i + 1;
    } else if (c === '[' || c === '{') {
      depth++;
    } else if (c === ']' || c === '}') {
      depth--;
      if (depth === 0) return i + 1;
    } else if (depth === 0 && (c === ',' || c === '}')) {
      return i;
    }
  }
  return i;
}

// The exact text of the top-level "messages" value of one case line.
function rawMessages(line) {
  const key = '"messages":';
  let at = line.indexOf(key);
  if (at < 0) throw new Error('no messages key');
  at += key.length;
  while (line[at] === ' ') at++;
  return line.slice(at, valueEnd(line, at));
}

function loadVectors(file = FILE) {
  const text = fs.readFileSync(file, 'utf8');
  const lines = text.split('\n').filter((l) => l.startsWith('{'));
  return lines.map((line) => {
    const json = line.endsWith(',') ? line.slice(0, -1) : line;
    const c = JSON.parse(json);
    if (c.group !== 'boundary') c.rawMessages = rawMessages(json);
    return c;
  });
}

module.exports = { loadVectors, rawMessages };
