'use strict';

// What a kept render compares to tell whether the caller's message at a
// position is still the one the engine keeps (js/conversation.js; the
// README's "What a kept render sees" is the contract). Per message: its
// role, its timestamp, its number of keys, the kind and length of `content`; a tool result's
// toolCallId, toolName and isError (as the phases read it: === true); a
// custom message's customType and number of summary refs. Per content
// element: its type; a text's length, a thinking's length, a tool call's id
// and whether it has `arguments`.
//
// pi hands each render a fresh structuredClone, so every read here touches
// a fresh object: the walk is most of a kept render's cost. It reads only
// what the role and the block type say is there (a missing property is
// slower to read than a present one), and keeps what it read as columns
// (typed arrays for numbers and codes, plain arrays for strings).
//
// Defined once, here: the engine keeps no fingerprints, so there is no Rust
// copy. __test__/helpers/changes.js lists the edits it must see and those
// it may miss (__test__/change-detection.test.js).

// Roles and block types the phases tell apart, as codes; anything else is
// OTHER with the value itself kept beside.
const ROLE_OTHER = 0;
const ROLE_USER = 1;
const ROLE_ASSISTANT = 2;
const ROLE_TOOL_RESULT = 3;
const ROLE_CUSTOM = 4;
const NOT_OBJECT = 5;
const AN_ARRAY = 6;

const TYPE_OTHER = 0;
const TYPE_TEXT = 1;
const TYPE_THINKING = 2;
const TYPE_TOOL_CALL = 3;
const TYPE_NOT_OBJECT = 4;

// content: a string, an array, or anything else (kept beside).
const CONTENT_STRING = -1;
const CONTENT_OTHER = -2;

function roleCode(r) {
  if (r === 'toolResult') return ROLE_TOOL_RESULT;
  if (r === 'assistant') return ROLE_ASSISTANT;
  if (r === 'user') return ROLE_USER;
  if (r === 'custom') return ROLE_CUSTOM;
  return ROLE_OTHER;
}

function typeCode(t) {
  if (t === 'text') return TYPE_TEXT;
  if (t === 'toolCall') return TYPE_TOOL_CALL;
  if (t === 'thinking') return TYPE_THINKING;
  return TYPE_OTHER;
}

// A string's length; -1 when absent, -2 for anything else.
function lengthOf(t) {
  return typeof t === 'string' ? t.length : t === undefined ? -1 : -2;
}

function refsCount(m) {
  const d = m.details;
  const refs = d !== null && typeof d === 'object' ? d.toolCallRefs : undefined;
  return Array.isArray(refs) ? refs.length : refs === undefined ? -1 : -2;
}

// Enumerable keys, counted without allocating.
function keyCount(m) {
  let n = 0;
  // eslint-disable-next-line no-unused-vars
  for (const _ in m) n++;
  return n;
}

function errorCode(v) {
  return v === true ? 1 : v === false ? 2 : v === undefined ? 3 : 4;
}

function grow(typed, need) {
  if (typed.length >= need) return typed;
  const next = new typed.constructor(Math.max(need, typed.length * 2, 64));
  next.set(typed);
  return next;
}

class Fingerprints {
  constructor() {
    this.length = 0;
    // Per message.
    this.role = new Uint8Array(64);
    this.ts = new Float64Array(64);
    // Per message, three numbers: a tool result's isError code or a custom
    // message's refs count; the content length or CONTENT_*; the number of
    // keys.
    this.num = new Int32Array(192);
    // Per message, values beside the codes: the element itself (not an
    // object), the role string (OTHER), the timestamp when not a number, a
    // tool result's toolCallId and toolName, a custom message's customType,
    // content that is neither a string nor an array.
    this.other = [];
    this.tsOther = [];
    this.id = [];
    this.name = [];
    this.contentOther = [];
    this.blockAt = new Int32Array(65);
    // Per content element: type code, length (text, thinking) or whether a
    // tool call has arguments, and the id of a tool call or the value of a
    // non-object / the type string of an OTHER block.
    this.blocks = 0;
    this.bType = new Uint8Array(64);
    this.bLen = new Int32Array(64);
    this.bValue = [];
  }

  truncate(n) {
    if (n >= this.length) return;
    this.length = n;
    this.blocks = this.blockAt[n];
    for (const a of [this.other, this.tsOther, this.id, this.name, this.contentOther]) a.length = n;
    this.bValue.length = this.blocks;
  }

  /** Appends the fingerprint of `m` (at position `this.length`). */
  push(m) {
    const i = this.length++;
    this.role = grow(this.role, i + 1);
    this.ts = grow(this.ts, i + 1);
    this.num = grow(this.num, (i + 1) * 3);
    this.blockAt = grow(this.blockAt, i + 2);
    this.blockAt[i] = this.blocks;
    this.blockAt[i + 1] = this.blocks;
    this.other[i] = this.tsOther[i] = this.id[i] = this.name[i] = this.contentOther[i] = undefined;
    if (m === null || typeof m !== 'object') {
      this.role[i] = NOT_OBJECT;
      this.other[i] = m;
      return;
    }
    if (Array.isArray(m)) {
      this.role[i] = AN_ARRAY;
      this.other[i] = m.length;
      return;
    }
    const r = m.role;
    const role = roleCode(r);
    this.role[i] = role;
    if (role === ROLE_OTHER) this.other[i] = r;
    const t = m.timestamp;
    if (typeof t === 'number' && t === t) {
      this.ts[i] = t;
    } else {
      this.ts[i] = NaN;
      this.tsOther[i] = t;
    }
    const at = i * 3;
    this.num[at] = 0;
    this.num[at + 2] = keyCount(m);
    if (role === ROLE_TOOL_RESULT) {
      this.id[i] = m.toolCallId;
      this.name[i] = m.toolName;
      this.num[at] = errorCode(m.isError);
    } else if (role === ROLE_CUSTOM) {
      this.name[i] = m.customType;
      this.num[at] = refsCount(m);
    }
    const c = m.content;
    if (typeof c === 'string') {
      this.num[at + 1] = CONTENT_STRING;
      this.contentOther[i] = c.length;
    } else if (Array.isArray(c)) {
      this.num[at + 1] = c.length;
      let k = this.blocks;
      this.bType = grow(this.bType, k + c.length);
      this.bLen = grow(this.bLen, k + c.length);
      for (let j = 0; j < c.length; j++, k++) {
        const b = c[j];
        if (b === null || typeof b !== 'object') {
          this.bType[k] = TYPE_NOT_OBJECT;
          this.bLen[k] = 0;
          this.bValue[k] = b;
          continue;
        }
        const type = b.type;
        const code = typeCode(type);
        this.bType[k] = code;
        this.bValue[k] = undefined;
        if (code === TYPE_TEXT) {
          this.bLen[k] = lengthOf(b.text);
        } else if (code === TYPE_THINKING) {
          this.bLen[k] = lengthOf(b.thinking);
        } else if (code === TYPE_TOOL_CALL) {
          this.bValue[k] = b.id;
          this.bLen[k] = b.arguments === undefined ? 0 : 1;
        } else {
          this.bValue[k] = type;
          this.bLen[k] = 0;
        }
      }
      this.blocks = k;
      this.blockAt[i + 1] = k;
    } else {
      this.num[at + 1] = CONTENT_OTHER;
      this.contentOther[i] = c;
    }
  }

  /**
   * Whether `m` matches the fingerprint at position `i`. Only the role is
   * read here; each role's own function reads the rest, so each property
   * read sees the few shapes of one role's messages (fast), not every
   * message's (a generic lookup per read).
   */
  matches(i, m) {
    const role = this.role[i];
    if (m === null || typeof m !== 'object') return role === NOT_OBJECT && Object.is(this.other[i], m);
    if (Array.isArray(m)) return role === AN_ARRAY && this.other[i] === m.length;
    const r = m.role;
    if (roleCode(r) !== role) return false;
    switch (role) {
      case ROLE_TOOL_RESULT:
        return toolResultMatches(this, i, m);
      case ROLE_ASSISTANT:
        return assistantMatches(this, i, m);
      case ROLE_USER:
        return userMatches(this, i, m);
      case ROLE_CUSTOM:
        return customMatches(this, i, m);
      default:
        return Object.is(this.other[i], r) && otherMatches(this, i, m);
    }
  }

  // What every role compares: the timestamp, the content and the key count,
  // read by the caller.
  restMatches(i, m, t, c) {
    if (typeof t === 'number' && t === t) {
      if (t !== this.ts[i]) return false;
    } else if (this.ts[i] === this.ts[i] || !Object.is(this.tsOther[i], t)) {
      return false;
    }
    const at = i * 3;
    const num = this.num;
    if (typeof c === 'string') {
      if (num[at + 1] !== CONTENT_STRING || this.contentOther[i] !== c.length) return false;
    } else if (!Array.isArray(c)) {
      if (num[at + 1] !== CONTENT_OTHER || !Object.is(this.contentOther[i], c)) return false;
    } else if (!this.blocksMatch(i, c)) {
      return false;
    }
    // Last: counting keys is cheap once the object has been read.
    return keyCount(m) === num[at + 2];
  }

  blocksMatch(i, c) {
    if (this.num[i * 3 + 1] !== c.length) return false;
    const bType = this.bType;
    const bLen = this.bLen;
    for (let j = 0, k = this.blockAt[i]; j < c.length; j++, k++) {
      const b = c[j];
      const code = bType[k];
      if (b === null || typeof b !== 'object') {
        if (code !== TYPE_NOT_OBJECT || !Object.is(this.bValue[k], b)) return false;
        continue;
      }
      const type = b.type;
      if (typeCode(type) !== code) return false;
      if (code === TYPE_TEXT) {
        if (lengthOf(b.text) !== bLen[k]) return false;
      } else if (code === TYPE_THINKING) {
        if (lengthOf(b.thinking) !== bLen[k]) return false;
      } else if (code === TYPE_TOOL_CALL) {
        if (b.id !== this.bValue[k] || (b.arguments === undefined ? 0 : 1) !== bLen[k]) return false;
      } else if (!Object.is(this.bValue[k], type)) {
        return false;
      }
    }
    return true;
  }
}

// One function per role, so that each read below sees one role's shapes:
// V8 keeps what a property read has seen per function, so the three with
// the same body are three on purpose (measured: the walk over pi's clone of
// 5,942 messages 7-14% faster on Node 20 and 24 than with one function).
function userMatches(p, i, m) {
  return p.restMatches(i, m, m.timestamp, m.content);
}

function assistantMatches(p, i, m) {
  return p.restMatches(i, m, m.timestamp, m.content);
}

function toolResultMatches(p, i, m) {
  if (m.toolCallId !== p.id[i] || m.toolName !== p.name[i] || errorCode(m.isError) !== p.num[i * 3]) return false;
  return p.restMatches(i, m, m.timestamp, m.content);
}

function customMatches(p, i, m) {
  if (m.customType !== p.name[i] || refsCount(m) !== p.num[i * 3]) return false;
  return p.restMatches(i, m, m.timestamp, m.content);
}

function otherMatches(p, i, m) {
  return p.restMatches(i, m, m.timestamp, m.content);
}

module.exports = { Fingerprints };
