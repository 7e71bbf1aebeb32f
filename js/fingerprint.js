'use strict';

// What a kept render compares to tell whether the caller's message at a
// position is still the one the engine keeps (js/conversation.js; the
// README's "What a kept render compares" is the contract): per message its
// kind, number of keys, role, timestamp, toolCallId, toolName, isError (as
// the phases read it: === true), customType, the kind and length of
// `content`, the number of summary refs of a custom message, and per content
// element its type, id, whether it has `arguments`, and the lengths of its
// text and thinking.
//
// Kept as columns: strings in plain arrays, numbers in typed arrays. pi hands
// each render a fresh structuredClone, so every comparison reads a fresh
// object; comparing its timestamp with a double in a Float64Array is several
// times faster than with the previous clone's boxed number.

const KIND_OBJECT = 0;
const KIND_ARRAY = 1;

function grow(typed, need) {
  if (typed.length >= need) return typed;
  const next = new typed.constructor(Math.max(need, typed.length * 2, 64));
  next.set(typed);
  return next;
}

function codeOfError(v) {
  return v === true ? 1 : v === false ? 2 : v === undefined ? 3 : 4;
}

function lengthOf(t) {
  return typeof t === 'string' ? t.length : t === undefined ? -1 : -2;
}

// Enumerable keys, counted without allocating.
function keyCount(m) {
  let n = 0;
  // eslint-disable-next-line no-unused-vars
  for (const _ in m) n++;
  return n;
}

class Fingerprints {
  constructor() {
    this.length = 0;
    // Per message.
    this.kind = new Uint8Array(64);
    this.other = []; // a non-object element itself
    this.role = [];
    this.ts = new Float64Array(64);
    this.tsOther = []; // a timestamp that is not a number (or NaN)
    this.id = [];
    this.name = [];
    this.custom = [];
    this.misc = new Int32Array(64 * 5); // isError code, keys, content kind, content length, refs
    this.blockAt = new Int32Array(65);
    // Per content element.
    this.blocks = 0;
    this.bType = [];
    this.bId = [];
    this.bLen = new Int32Array(64 * 2);
  }

  truncate(n) {
    if (n >= this.length) return;
    this.length = n;
    this.blocks = this.blockAt[n];
    for (const a of [this.other, this.role, this.tsOther, this.id, this.name, this.custom]) a.length = n;
    this.bType.length = this.blocks;
    this.bId.length = this.blocks;
  }

  /** Appends the fingerprint of `m` (at position `this.length`). */
  push(m) {
    const i = this.length++;
    this.kind = grow(this.kind, i + 1);
    this.ts = grow(this.ts, i + 1);
    this.misc = grow(this.misc, (i + 1) * 5);
    this.blockAt = grow(this.blockAt, i + 2);
    this.blockAt[i] = this.blocks;
    if (m === null || typeof m !== 'object' || Array.isArray(m)) {
      this.kind[i] = Array.isArray(m) ? KIND_ARRAY : 2;
      this.other[i] = Array.isArray(m) ? m.length : m;
      this.role[i] = this.id[i] = this.name[i] = this.custom[i] = this.tsOther[i] = undefined;
      this.blockAt[i + 1] = this.blocks;
      return;
    }
    this.kind[i] = KIND_OBJECT;
    this.other[i] = undefined;
    this.role[i] = m.role;
    const t = m.timestamp;
    if (typeof t === 'number' && t === t) {
      this.ts[i] = t;
      this.tsOther[i] = undefined;
    } else {
      this.ts[i] = NaN;
      this.tsOther[i] = t;
    }
    this.id[i] = m.toolCallId;
    this.name[i] = m.toolName;
    this.custom[i] = m.customType;
    const at = i * 5;
    this.misc[at] = codeOfError(m.isError);
    this.misc[at + 1] = keyCount(m);
    const c = m.content;
    if (typeof c === 'string') {
      this.misc[at + 2] = 1;
      this.misc[at + 3] = c.length;
    } else if (Array.isArray(c)) {
      this.misc[at + 2] = 2;
      this.misc[at + 3] = c.length;
      this.bLen = grow(this.bLen, (this.blocks + c.length) * 2);
      for (let j = 0; j < c.length; j++) {
        const b = c[j];
        const k = this.blocks++;
        if (b === null || typeof b !== 'object') {
          this.bType[k] = typeof b;
          this.bId[k] = b;
          this.bLen[k * 2] = -3;
          this.bLen[k * 2 + 1] = -3;
        } else {
          this.bType[k] = b.type;
          this.bId[k] = b.id;
          this.bLen[k * 2] = lengthOf(b.text) * 2 + (b.arguments === undefined ? 0 : 1);
          this.bLen[k * 2 + 1] = lengthOf(b.thinking);
        }
      }
    } else {
      this.misc[at + 2] = c === undefined ? 3 : c === null ? 4 : 5;
      this.misc[at + 3] = 0;
    }
    const refs = m.role === 'custom' && m.details != null ? m.details.toolCallRefs : undefined;
    this.misc[at + 4] = Array.isArray(refs) ? refs.length : refs === undefined ? -1 : -2;
    this.blockAt[i + 1] = this.blocks;
  }

  /** Whether `m` matches the fingerprint at position `i`. */
  matches(i, m) {
    const kind = this.kind[i];
    if (m === null || typeof m !== 'object') return kind === 2 && Object.is(this.other[i], m);
    if (Array.isArray(m)) return kind === KIND_ARRAY && this.other[i] === m.length;
    if (kind !== KIND_OBJECT) return false;
    const t = m.timestamp;
    if (typeof t === 'number' && t === t) {
      if (t !== this.ts[i] || this.tsOther[i] !== undefined) return false;
    } else if (this.ts[i] === this.ts[i] || !Object.is(this.tsOther[i], t)) {
      return false;
    }
    if (m.role !== this.role[i] || m.toolCallId !== this.id[i] || m.toolName !== this.name[i]) return false;
    const at = i * 5;
    const misc = this.misc;
    if (codeOfError(m.isError) !== misc[at] || m.customType !== this.custom[i]) return false;
    const c = m.content;
    if (typeof c === 'string') {
      if (misc[at + 2] !== 1 || misc[at + 3] !== c.length) return false;
    } else if (Array.isArray(c)) {
      if (misc[at + 2] !== 2 || misc[at + 3] !== c.length) return false;
      const bLen = this.bLen;
      for (let j = 0, k = this.blockAt[i]; j < c.length; j++, k++) {
        const b = c[j];
        if (b === null || typeof b !== 'object') {
          if (this.bType[k] !== typeof b || !Object.is(this.bId[k], b) || bLen[k * 2] !== -3) return false;
        } else if (
          b.type !== this.bType[k] ||
          b.id !== this.bId[k] ||
          lengthOf(b.text) * 2 + (b.arguments === undefined ? 0 : 1) !== bLen[k * 2] ||
          lengthOf(b.thinking) !== bLen[k * 2 + 1]
        ) {
          return false;
        }
      }
    } else if (misc[at + 2] !== (c === undefined ? 3 : c === null ? 4 : 5)) {
      return false;
    }
    const refs = m.role === 'custom' && m.details != null ? m.details.toolCallRefs : undefined;
    if ((Array.isArray(refs) ? refs.length : refs === undefined ? -1 : -2) !== misc[at + 4]) return false;
    return keyCount(m) === misc[at + 1];
  }
}

module.exports = { Fingerprints };
