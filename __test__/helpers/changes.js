'use strict';

// What a host does to a conversation and to its indexer between two renders,
// one class of change at a time, for the change-detection property test
// (__test__/change-detection.test.js; the README's "What a kept render
// sees" is the contract). A Host holds the conversation (a source array and
// how much of it is shown), the indexer's state as a plain object, the config
// and the 2.4.3 boundary; `step(kinds)` applies one change of a kind picked
// from `kinds` and says what it did. Every choice comes from fast-check's
// `g`, so a failing run replays and shrinks.
//
// Changes to the indexer are described as ops: `applyToState` writes an op
// into a state object, `applyToIndexer` performs it with the methods of the
// reference's ToolCallIndexer, as pi-condense does at a flush.

const fc = require('fast-check');
const { session, deriveConfig, boundaryFor } = require('./generate.js');

const TOOLS = ['read', 'bash', 'edit', 'write', 'grep', 'Task'];
const PATHS = ['src/a.ts', 'docs/notes.md', 'README.md', 'a/b/c/d.ts', ''];
const WORDS = ['ok', 'done', 'caf\u00e9', '\u{1F600} x', 'line\nbreak', 'quote " \\', 'see {b1}', '$& {b2}'];
const ROLES = ['user', 'assistant', 'toolResult', 'custom', 'bashExecution'];
const BLOCK_TYPES = ['text', 'thinking', 'toolCall', 'image'];
// Code units to swap one for another: same UTF-16 length, some with a
// longer JSON spelling.
const SWAPS = ['a', 'b', '"', '\\', '\n', '\u00e9', ' '];
const noAppend = () => {};

const pick = (g, xs) => xs[g(fc.nat, xs.length - 1)];
const pct = (g, p) => g(fc.integer, { min: 0, max: 99 }) < p;
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const words = (g) => Array.from({ length: g(fc.integer, { min: 1, max: 3 }) }, () => pick(g, WORDS)).join(' ');
const occKey = (id, ts) => (ts === undefined ? id : `${id}@${ts}`);

// Edits a fingerprint sees: each names the candidates in the shown messages
// and changes one of them in place. `at` is a message index, `b` a content
// block index where the class is about blocks.
const blocksOf = (m) => (isObject(m) && Array.isArray(m.content) ? m.content : []);
const eachBlock = (type) => (m) =>
  blocksOf(m)
    .map((b, j) => (isObject(b) && (type === undefined || b.type === type) ? j : -1))
    .filter((j) => j >= 0);
const whole = (pred) => (m) => (isObject(m) && pred(m) ? [null] : []);
// The length of a `type` block's string `field`: cut short or grown.
const blockLength = (type, field) => ({
  where: eachBlock(type),
  edit(g, m, host, b) {
    const block = m.content[b];
    const t = typeof block[field] === 'string' ? block[field] : '';
    block[field] = t.length > 0 && pct(g, 40) ? t.slice(0, g(fc.nat, t.length - 1)) : `${t}${pick(g, WORDS)}`;
  },
});

const DETECTED = {
  role: {
    where: whole(() => true),
    edit(g, m) {
      m.role = pick(g, ROLES.filter((r) => r !== m.role));
    },
  },
  timestamp: {
    where: whole((m) => 'timestamp' in m),
    edit(g, m, host) {
      const t = m.timestamp;
      const others = host.shown().map((x) => x?.timestamp).filter((x) => typeof x === 'number' && x !== t);
      const options = typeof t === 'number' ? [t + 1, t - 1, t + 1000, ...others.slice(0, 3)] : [host.tick()];
      m.timestamp = typeof t === 'number' && pct(g, 5) ? String(t) : pick(g, options);
      host.used.add(m.timestamp);
    },
  },
  toolCallId: {
    where: whole((m) => m.role === 'toolResult'),
    edit(g, m, host) {
      const ids = host.callIds().filter((id) => id !== m.toolCallId);
      m.toolCallId = ids.length > 0 && pct(g, 60) ? pick(g, ids) : `${m.toolCallId}_b`;
    },
  },
  toolName: {
    where: whole((m) => m.role === 'toolResult'),
    edit(g, m) {
      m.toolName = pick(g, TOOLS.filter((t) => t !== m.toolName));
    },
  },
  isError: {
    where: whole((m) => m.role === 'toolResult'),
    edit(g, m) {
      // The phases read isError === true; undefined keeps the key (and its
      // count) but leaves the JSON text.
      const code = (v) => (v === true ? 1 : v === false ? 2 : v === undefined ? 3 : 4);
      m.isError = pick(g, [true, false, undefined, 'true'].filter((v) => code(v) !== code(m.isError)));
    },
  },
  customType: {
    where: whole((m) => m.role === 'custom'),
    edit(g, m) {
      m.customType = pick(g, ['context-prune-summary', 'note'].filter((t) => t !== m.customType));
    },
  },
  refsCount: {
    where: whole((m) => m.role === 'custom' && isObject(m.details) && Array.isArray(m.details.toolCallRefs)),
    edit(g, m, host) {
      const refs = m.details.toolCallRefs;
      if (refs.length > 0 && pct(g, 50)) refs.splice(g(fc.nat, refs.length - 1), 1);
      else refs.push({ toolCallId: pick(g, [...host.callIds(), 'gone_1']), shortId: `t${host.refN++}` });
    },
  },
  contentKind: {
    where: whole((m) => typeof m.content === 'string' || Array.isArray(m.content)),
    edit(g, m) {
      m.content =
        typeof m.content === 'string'
          ? [{ type: 'text', text: m.content }]
          : m.content
              .filter((b) => isObject(b) && b.type === 'text')
              .map((b) => b.text)
              .join('\n');
    },
  },
  contentLength: {
    where: whole((m) => typeof m.content === 'string' || Array.isArray(m.content)),
    edit(g, m) {
      if (typeof m.content === 'string') {
        m.content = m.content.length > 0 && pct(g, 40) ? m.content.slice(1) : `${m.content} ${pick(g, WORDS)}`;
      } else if (m.content.length > 0 && pct(g, 40)) {
        m.content.splice(g(fc.nat, m.content.length - 1), 1);
      } else {
        m.content.splice(g(fc.nat, m.content.length), 0, { type: 'text', text: words(g) });
      }
    },
  },
  blockType: {
    where: eachBlock(),
    edit(g, m, host, b) {
      const block = m.content[b];
      block.type = pick(g, BLOCK_TYPES.filter((t) => t !== block.type));
    },
  },
  textLength: blockLength('text', 'text'),
  thinkingLength: blockLength('thinking', 'thinking'),
  toolCallBlockId: {
    where: eachBlock('toolCall'),
    edit(g, m, host, b) {
      const block = m.content[b];
      const ids = host.callIds().filter((id) => id !== block.id);
      block.id = ids.length > 0 && pct(g, 50) ? pick(g, ids) : `${block.id}_b`;
    },
  },
  argumentsPresence: {
    where: eachBlock('toolCall'),
    edit(g, m, host, b) {
      const block = m.content[b];
      if (block.arguments !== undefined) delete block.arguments;
      else block.arguments = pct(g, 50) ? {} : { path: pick(g, PATHS), content: 'x'.repeat(g(fc.nat, 1500)) };
    },
  },
  messageKey: {
    where: whole(() => true),
    edit(g, m) {
      const optional = ['usage', 'api', 'provider', 'model', 'stopReason', 'details', 'display'];
      const removable = Object.keys(m).filter((k) => optional.includes(k) || k.startsWith('edited'));
      if (removable.length > 0 && pct(g, 50)) {
        delete m[pick(g, removable)];
      } else {
        let n = 0;
        while (`edited${n}` in m) n++;
        m[`edited${n}`] = 'by another extension';
      }
    },
  },
};

// Edits that keep every fingerprinted value: one code unit of a string
// swapped for another, a tool call's arguments rewritten under the same keys,
// a value below what the fingerprint reads.
function swapOne(g, s) {
  const at = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) at.push(i);
  }
  if (at.length === 0) return null;
  const i = pick(g, at);
  const by = pick(g, SWAPS.filter((c) => c !== s[i]));
  return s.slice(0, i) + by + s.slice(i + 1);
}

function undetectedTargets(m) {
  if (!isObject(m)) return [];
  const out = [];
  if (typeof m.content === 'string' && m.content.length > 0) out.push({ what: 'content' });
  blocksOf(m).forEach((b, j) => {
    if (!isObject(b)) return;
    if (b.type === 'text' && typeof b.text === 'string' && b.text.length > 0) out.push({ what: 'text', j });
    if (b.type === 'thinking' && typeof b.thinking === 'string' && b.thinking.length > 0) out.push({ what: 'thinking', j });
    if (b.type === 'toolCall' && isObject(b.arguments) && Object.keys(b.arguments).length > 0) out.push({ what: 'arguments', j });
    if (b.type === 'toolCall' && typeof b.name === 'string') out.push({ what: 'name', j });
    if (b.type === 'thinking' && typeof b.thinkingSignature === 'string') out.push({ what: 'signature', j });
  });
  if (isObject(m.usage)) out.push({ what: 'usage' });
  if (isObject(m.details) && typeof m.details.diff === 'string') out.push({ what: 'diff' });
  return out;
}

function editUndetected(g, m, target) {
  const block = target.j === undefined ? null : m.content[target.j];
  switch (target.what) {
    case 'content':
      return swap(m, 'content');
    case 'text':
      return swap(block, 'text');
    case 'thinking':
      return swap(block, 'thinking');
    case 'arguments': {
      const key = pick(g, Object.keys(block.arguments));
      const old = block.arguments[key];
      const next = pct(g, 50) ? 'x'.repeat(g(fc.nat, 1500)) : pick(g, PATHS);
      if (next === old) return false;
      block.arguments[key] = next;
      return true;
    }
    case 'name':
      block.name = pick(g, TOOLS.filter((t) => t !== block.name));
      return true;
    case 'signature':
      block.thinkingSignature = `${block.thinkingSignature}Zg==`;
      return true;
    case 'usage':
      m.usage = { ...m.usage, input: (m.usage.input ?? 0) + 1 + g(fc.nat, 100000) };
      return true;
    case 'diff':
      m.details.diff = `${m.details.diff}${words(g)}`;
      return true;
    default:
      throw new Error(`unknown target ${target.what}`);
  }
  function swap(owner, field) {
    const next = swapOne(g, owner[field]);
    if (next === null) return false;
    owner[field] = next;
    return true;
  }
}

function configFor(g, dialect) {
  const config = deriveConfig(g);
  if (dialect === '2.9.1') delete config.thinkingStrip;
  return config;
}

const emptyState = () => ({ records: {}, dedupAliases: {}, shortRefs: {}, refAliases: {}, chains: [], summaryBodies: [] });

/** Writes an indexer op into a state object, as the indexer would hold it. */
function applyToState(state, op) {
  switch (op.kind) {
    case 'record':
      state.records[op.key] = op.record;
      return;
    case 'dedup':
      state.dedupAliases[op.key] = op.original;
      if (state.shortRefs[op.original]) state.shortRefs[op.key] = state.shortRefs[op.original];
      return;
    case 'shortRef':
      state.shortRefs[op.key] = op.shortId;
      state.refAliases[op.shortId] = op.key;
      return;
    case 'chain':
      state.chains.push(op.entry);
      return;
    case 'summaryBody':
      state.summaryBodies.push({ toolCallIds: op.ids, text: op.text });
      return;
    default:
      throw new Error(`unknown op ${op.kind}`);
  }
}

/** Performs an indexer op with the reference ToolCallIndexer's own methods. */
function applyToIndexer(indexer, op) {
  switch (op.kind) {
    case 'record': {
      const { record } = op;
      const call = { ...record, resultText: '', isError: false, contentHash: `state:${op.key}:${op.serial}` };
      indexer.addBatch({ toolCalls: [call], turnIndex: op.serial, timestamp: 0 }, noAppend);
      return;
    }
    case 'dedup':
      indexer.registerDuplicate(op.key, op.original, noAppend);
      return;
    case 'shortRef':
      indexer.registerSummaryRefs([{ shortId: op.shortId, toolCallId: op.id, ...(op.ts === undefined ? {} : { resultTimestamp: op.ts }) }]);
      return;
    case 'chain':
      indexer.registerChain(op.entry);
      return;
    case 'summaryBody':
      indexer.registerSummaryBody(op.ids, op.text);
      return;
    default:
      throw new Error(`unknown op ${op.kind}`);
  }
}

class Host {
  constructor(g, dialect) {
    this.g = g;
    this.dialect = dialect;
    const main = session(g);
    this.source = structuredClone(main.messages);
    // Messages for other branches; each switch stamps its copies anew (pi
    // stamps a message when it is made, so a branch never shares the
    // timestamps of the one it replaces).
    this.alt = structuredClone(session(g).messages);
    this.length = Math.min(this.source.length, g(fc.integer, { min: 1, max: 6 }));
    this.ts = Math.max(main.lastTs, ...this.alt.map((m) => m.timestamp)) + 1;
    this.used = new Set();
    this.config = configFor(g, dialect);
    this.boundary = dialect === '2.4.3' ? boundaryFor(g, main) : null;
    this.state = emptyState();
    this.refN = 100;
    this.blockN = 0;
    this.serial = 0;
    // A state to start from: records (and the rest) for results shown or
    // still to come.
    const n = g(fc.integer, { min: 0, max: 8 });
    for (let i = 0; i < n; i++) {
      const op = this.indexOp(pick(g, ['record', 'record', 'record', 'dedup', 'shortRef', 'chain', 'summaryBody']));
      if (op) applyToState(this.state, op);
    }
  }

  // A timestamp no message has had: a message made now (a compaction
  // summary, a branch's copy) never matches an older one's fingerprint.
  tick() {
    while (this.used.has(++this.ts));
    this.used.add(this.ts);
    return this.ts;
  }

  /** The messages a render is handed now (the host's own objects). */
  shown() {
    return this.source.slice(0, this.length);
  }

  callIds() {
    const ids = new Set();
    for (const m of this.source) if (isObject(m) && m.role === 'toolResult' && typeof m.toolCallId === 'string') ids.add(m.toolCallId);
    return [...ids];
  }

  // Tool results of the whole source (shown or to come) with the key the
  // dialect looks them up by; 2.9.1 also keeps some bare (legacy) keys.
  results() {
    const out = [];
    for (const m of this.source) {
      if (!isObject(m) || m.role !== 'toolResult' || typeof m.toolCallId !== 'string') continue;
      const ts = this.dialect === '2.9.1' && typeof m.timestamp === 'number' ? m.timestamp : undefined;
      out.push({ m, id: m.toolCallId, ts });
    }
    return out;
  }

  keyFor(result) {
    const { g } = this;
    const ts = result.ts !== undefined && pct(g, 75) ? result.ts : undefined;
    return { key: occKey(result.id, ts), id: result.id, ts };
  }

  newRecord(key, id, ts, toolName) {
    const { g } = this;
    const record = { toolCallId: id, toolName: pct(g, 85) ? toolName : pick(g, TOOLS), args: pct(g, 80) ? { path: pick(g, PATHS) } : {} };
    if (ts !== undefined) record.resultTimestamp = ts;
    if (pct(g, 25)) {
      record.spillPath = `/tmp/spill/${key}.txt`;
      record.spillBytes = g(fc.nat, 1e6);
      record.resultPreview = words(g);
    }
    return record;
  }

  /** An indexer op of `kind`, or null when nothing fits. */
  indexOp(kind) {
    const { g, state } = this;
    const summarized = (k) => Object.hasOwn(state.records, k) || Object.hasOwn(state.dedupAliases, k);
    switch (kind) {
      case 'record': {
        const fresh = this.results()
          .map((r) => ({ ...this.keyFor(r), m: r.m }))
          .filter((r) => !Object.hasOwn(state.records, r.key));
        if (fresh.length === 0) return null;
        const r = pick(g, fresh);
        return { kind: 'record', key: r.key, record: this.newRecord(r.key, r.id, r.ts, r.m.toolName), serial: this.serial++ };
      }
      case 'recordReplaced': {
        const keys = Object.keys(state.records);
        if (keys.length === 0) return null;
        const key = pick(g, keys);
        const old = state.records[key];
        let record;
        do record = this.newRecord(key, old.toolCallId, old.resultTimestamp, old.toolName);
        while (JSON.stringify(record) === JSON.stringify(old) && pct(g, 95));
        return { kind: 'record', key, record, serial: this.serial++ };
      }
      case 'dedup': {
        const fresh = this.results()
          .map((r) => this.keyFor(r))
          .filter((r) => !summarized(r.key));
        if (fresh.length === 0) return null;
        const r = pick(g, fresh);
        const originals = Object.keys(state.records).filter((k) => k !== r.key);
        const original = originals.length > 0 && pct(g, 85) ? pick(g, originals) : 'gone_1';
        return { kind: 'dedup', key: r.key, original };
      }
      case 'shortRef': {
        const keys = [...Object.keys(state.records), ...Object.keys(state.dedupAliases)].filter((k) => !Object.hasOwn(state.shortRefs, k));
        if (keys.length === 0) return null;
        const key = pick(g, keys);
        const record = state.records[key];
        const at = this.dialect === '2.9.1' ? key.lastIndexOf('@') : -1;
        const id = record ? record.toolCallId : at > 0 ? key.slice(0, at) : key;
        const ts = record ? record.resultTimestamp : at > 0 ? Number(key.slice(at + 1)) : undefined;
        return { kind: 'shortRef', key, id, ts, shortId: `t${this.refN++}` };
      }
      case 'chain':
        return this.chainOp();
      case 'summaryBody': {
        const results = this.results();
        if (results.length === 0) return null;
        const from = g(fc.nat, results.length - 1);
        const batch = results.slice(from, from + g(fc.integer, { min: 1, max: 3 }));
        return { kind: 'summaryBody', ids: batch.map((r) => occKey(r.id, r.ts)), text: `Summary: ${words(g)}` };
      }
      default:
        throw new Error(`unknown indexer op ${kind}`);
    }
  }

  // A chain over one or two turns of the source, from one user message to
  // the last assistant before the turn after.
  chainOp() {
    const { g, state } = this;
    const users = [];
    this.source.forEach((m, i) => {
      if (isObject(m) && m.role === 'user' && typeof m.timestamp === 'number') users.push(i);
    });
    if (users.length === 0) return null;
    const u = g(fc.nat, users.length - 1);
    const end = users[Math.min(users.length, u + g(fc.integer, { min: 1, max: 2 }))] ?? this.source.length;
    const turn = this.source.slice(users[u], end);
    const results = turn.filter((m) => isObject(m) && m.role === 'toolResult' && typeof m.toolCallId === 'string');
    const assistants = turn.filter((m) => isObject(m) && m.role === 'assistant' && typeof m.timestamp === 'number');
    const dropped = results.filter(() => pct(g, 85));
    const droppedToolCallIds = dropped.map((m) => m.toolCallId);
    if (pct(g, 15)) droppedToolCallIds.push('gone_1');
    const entry = {
      blockId: `b${++this.blockN}`,
      startUserTimestamp: this.source[users[u]].timestamp,
      droppedToolCallIds,
      finalAssistantTimestamp: assistants.length > 0 && pct(g, 85) ? assistants[assistants.length - 1].timestamp : null,
      toolRefs: droppedToolCallIds.map((id) => state.shortRefs[id] ?? id),
      compressedAt: this.ts,
    };
    if (this.dialect === '2.9.1' && pct(g, 70)) entry.droppedOccurrenceKeys = dropped.map((m) => occKey(m.toolCallId, m.timestamp));
    const kept = results.filter((m) => !dropped.includes(m));
    if (kept.length > 0 && pct(g, 30)) entry.protectedToolCallIds = [pick(g, kept).toolCallId];
    if (pct(g, 50)) entry.rangeSummaryText = `Chain ${this.blockN}: ${words(g)} {b${g(fc.integer, { min: 1, max: this.blockN })}}`;
    return { kind: 'chain', entry };
  }

  /**
   * Applies one change of a kind picked from `kinds` (a table of weights).
   * Returns { kind, applied, op?, undetected? }: `applied` is false when
   * nothing fits the kind; `op` is an indexer op already written into the
   * state; `undetected` marks an edit that keeps every fingerprinted value
   * (with the message `before` and `after` it). A kind the Host does not
   * know comes back unapplied, for the caller to do.
   */
  step(kinds) {
    const { g } = this;
    const names = Object.keys(kinds);
    let roll = g(fc.nat, names.reduce((s, k) => s + kinds[k], 0) - 1);
    let kind = names[0];
    for (const k of names) {
      if (roll < kinds[k]) {
        kind = k;
        break;
      }
      roll -= kinds[k];
    }
    return { kind, ...this.apply(kind) };
  }

  apply(kind) {
    const { g } = this;
    switch (kind) {
      case 'same':
        return { applied: true };
      case 'append': {
        if (this.length >= this.source.length) this.source.push(...structuredClone(this.alt.slice(0, 4)).map((m) => ({ ...m, timestamp: this.tick() })));
        this.length = Math.min(this.source.length, this.length + g(fc.integer, { min: 1, max: 3 }));
        return { applied: true };
      }
      case 'truncate': {
        if (this.length === 0) return { applied: false };
        this.length -= g(fc.integer, { min: 1, max: Math.min(6, this.length) });
        return { applied: true };
      }
      case 'branch': {
        const cut = this.length - g(fc.integer, { min: 0, max: Math.min(6, this.length) });
        const from = g(fc.nat, Math.max(0, this.alt.length - 1));
        const suffix = structuredClone(this.alt.slice(from)).map((m) => ({ ...m, timestamp: this.tick() }));
        if (suffix.length === 0) return { applied: false };
        this.source = this.source.slice(0, cut).concat(suffix);
        this.length = Math.min(this.source.length, cut + g(fc.integer, { min: 1, max: 4 }));
        return { applied: true };
      }
      case 'compaction': {
        if (this.length < 2) return { applied: false };
        const k = g(fc.integer, { min: 1, max: this.length - 1 });
        const summary = { role: 'compactionSummary', summary: `Compacted: ${words(g)}`, tokensBefore: g(fc.nat, 200000), timestamp: this.tick() };
        this.source = [summary, ...this.source.slice(k)];
        this.length = this.length - k + 1;
        return { applied: true };
      }
      case 'undetected': {
        const targets = [];
        this.shown().forEach((m, at) => {
          for (const t of undetectedTargets(m)) targets.push({ at, ...t });
        });
        if (targets.length === 0) return { applied: false, undetected: true };
        const t = pick(g, targets);
        const before = structuredClone(this.source[t.at]);
        const applied = editUndetected(g, this.source[t.at], t);
        return { applied, undetected: true, what: t.what, before, after: this.source[t.at] };
      }
      case 'record':
      case 'recordReplaced':
      case 'dedup':
      case 'shortRef':
      case 'chain':
      case 'summaryBody': {
        const op = this.indexOp(kind);
        if (op === null) return { applied: false };
        applyToState(this.state, op);
        return { applied: true, op };
      }
      case 'config':
        this.config = configFor(g, this.dialect);
        return { applied: true };
      case 'boundary': {
        const b = boundaryFor(g, { messages: this.shown().filter((m) => isObject(m) && typeof m.timestamp === 'number'), lastTs: this.ts });
        if (Object.is(b, this.boundary)) return { applied: false };
        this.boundary = b;
        return { applied: true };
      }
      default:
        if (DETECTED[kind]) return this.editDetected(kind);
        return { applied: false };
    }
  }

  editDetected(kind) {
    const { g } = this;
    const cls = DETECTED[kind];
    const targets = [];
    this.shown().forEach((m, at) => {
      for (const b of cls.where(m)) targets.push({ at, b });
    });
    if (targets.length === 0) return { applied: false };
    const t = pick(g, targets);
    cls.edit(g, this.source[t.at], this, t.b);
    return { applied: true };
  }
}

module.exports = { Host, DETECTED, applyToIndexer };
