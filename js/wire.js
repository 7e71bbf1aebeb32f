'use strict';

// Messages handed to the engine as `v8.serialize` bytes rather than as
// JSON text, in Node. JSON.stringify of a long run returns a rope that V8
// copies flat before any N-API call can read it, and the copy out is UTF-16;
// v8.serialize writes one Buffer several times faster, and the engine turns
// it into the same JSON text (src/json/v8_wire.rs, which declines whatever
// it cannot read, so the caller falls back to JSON.stringify's text).
//
// The serialized form cannot show what JSON.stringify does with toJSON, so
// only trees of plain objects and arrays (what pi's structuredClone and
// JSON.parse give) go this way. Bun's node:v8 writes another format: there
// JSON text is always sent.

let serialize = null;
try {
  if (typeof process === 'object' && process.versions && !process.versions.bun) {
    const v8 = require('node:v8');
    const probe = v8.serialize(['x']);
    // Version byte, then a version this reader knows (src/json/v8_wire.rs).
    if (probe[0] === 0xff && probe[1] >= 13 && probe[1] <= 15) serialize = v8.serialize;
  }
} catch {
  serialize = null;
}

const OBJECT = Object.prototype;
const ARRAY = Array.prototype;

// True when every object under `values` is a plain object or array, and no
// toJSON sits on their prototypes. `budget` bounds the objects visited: a
// tree serialized into n bytes holds fewer than n / 2 objects, so a walk
// that goes past that has met an object twice (a cycle, a shared object:
// the engine declines those anyway) and stops.
function plainTrees(values, budget) {
  if (OBJECT.toJSON !== undefined || ARRAY.toJSON !== undefined) return false;
  const stack = [values];
  while (stack.length > 0) {
    if (--budget < 0) return false;
    const o = stack.pop();
    const proto = Object.getPrototypeOf(o);
    if (Array.isArray(o)) {
      if (proto !== ARRAY) return false;
      for (let i = 0; i < o.length; i++) {
        const v = o[i];
        if (typeof v === 'object' && v !== null) stack.push(v);
      }
    } else {
      if (proto !== OBJECT && proto !== null) return false;
      for (const k in o) {
        const v = o[k];
        if (typeof v === 'object' && v !== null) stack.push(v);
      }
    }
  }
  return true;
}

/**
 * `v8.serialize(messages.slice(from, to))`, or null where the JSON text
 * must be sent instead (not Node, a value that is not plain, a value
 * v8.serialize rejects).
 */
function wireBytes(messages, from, to) {
  if (serialize === null) return null;
  const slice = messages.slice(from, to);
  let bytes;
  try {
    bytes = serialize(slice);
  } catch {
    return null;
  }
  return plainTrees(slice, bytes.length / 2) ? bytes : null;
}

module.exports = { wireBytes, wireAvailable: () => serialize !== null };
