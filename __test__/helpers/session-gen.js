'use strict';
// Seeded random pi session files for differential loading tests: branches,
// compactions, branch summaries, custom messages, context edits, system
// messages, pi-condense's entries (summaries, index, aliases, chains,
// frontiers, backfills), duplicate ids, malformed and non-object lines,
// version 1 and 2 files, and lines spelled the way JSON.stringify would not
// (whitespace, \u escapes, \/, 1.0, duplicate keys, CRLF).

function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const r = {
    next,
    int: (n) => Math.floor(next() * n),
    chance: (p) => next() < p,
    pick: (xs) => xs[Math.floor(next() * xs.length)],
  };
  return r;
}

const TEXTS = ['plain', 'naïve café', 'emoji 😀 here', 'quote " and \\ back', 'line\nbreak\ttab', 'lone \ud800 surrogate', 'sep\u2028x', '', 'path/to/file.ts', 'ctl\u0001'];

// Spellings of one line's JSON that JSON.parse reads to the same value.
function spell(r, value) {
  const text = JSON.stringify(value);
  switch (r.int(12)) {
    case 0:
      return JSON.stringify(value, null, 1).replace(/\n/g, ' ');
    case 1:
      return text.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    case 2:
      return text.replace(/\//g, '\\/');
    case 3:
      return text.replace(/"timestamp":(\d+)/g, '"timestamp":$1.0');
    case 4:
      return text.startsWith('{"') ? `{"type":"decoy","id":"decoy",${text.slice(1)}` : text;
    case 5:
      return `${text}\r`;
    case 6:
      return text.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
    default:
      return text;
  }
}

function generate(seed, options = {}) {
  const r = rng(seed);
  const version = options.version ?? r.pick([3, 3, 3, 3, 3, 2, 1, '3', null]);
  const legacy = version === 1 || version === null;
  let clock = Date.UTC(2025, 0, 1) + r.int(1e9);
  const iso = () => {
    clock += 1 + r.int(5000);
    if (r.chance(0.03)) return r.pick([undefined, 12345, 'garbage', '2025-03-04', null, '2025-03-04T05:06:07+02:00']);
    return new Date(clock).toISOString();
  };
  const msgTime = () => clock - r.int(3000);
  const lines = [];
  const header = { type: 'session', version, id: 'sess-1', timestamp: new Date(clock).toISOString(), cwd: '/work' };
  if (version === undefined) delete header.version;
  lines.push(JSON.stringify(header));
  const entries = []; // {id, parentId}
  let leaf = null;
  let nextId = 0;
  let ref = 1;
  let block = 1;
  const recordIds = [];
  const newId = () => {
    if (entries.length > 0 && r.chance(0.004)) return r.pick(entries).id; // duplicate id
    return `e${(nextId++).toString(16).padStart(6, '0')}`;
  };
  const branchIds = () => {
    const byId = new Map(entries.map((e) => [e.id, e]));
    const out = [];
    const seen = new Set();
    for (let c = leaf && byId.get(leaf); c && !seen.has(c); c = c.parentId ? byId.get(c.parentId) : undefined) {
      seen.add(c);
      out.push(c.id);
    }
    return out;
  };
  const add = (fields) => {
    const id = newId();
    const entry = legacy ? { ...fields, timestamp: iso() } : { ...fields, id, parentId: leaf, timestamp: iso() };
    if (!legacy) {
      entries.push({ id, parentId: leaf });
      leaf = id;
    } else {
      entries.push({ id: `legacy${entries.length}` });
    }
    lines.push(spell(r, entry));
    return entry;
  };
  const message = (m) => add({ type: 'message', message: m });

  const steps = options.steps ?? 20 + r.int(60);
  for (let s = 0; s < steps; s++) {
    const k = r.int(100);
    if (k < 20) {
      const m = { role: 'user', content: r.chance(0.5) ? r.pick(TEXTS) : [{ type: 'text', text: r.pick(TEXTS) }], timestamp: msgTime() };
      if (r.chance(0.04)) r.chance(0.5) ? delete m.content : (m.content = null);
      message(m);
    } else if (k < 40) {
      const calls = Array.from({ length: r.int(3) }, () => ({ type: 'toolCall', id: `call_${r.int(40)}`, name: r.pick(['bash', 'read']), arguments: { path: r.pick(TEXTS) } }));
      const content = [...(r.chance(0.3) ? [{ type: 'thinking', thinking: 'hmm', thinkingSignature: 'sig' }] : []), { type: 'text', text: r.pick(TEXTS) }, ...calls];
      const m = { role: 'assistant', content, api: 'x', provider: 'p', model: 'm', usage: { input: 1, output: 2 }, stopReason: calls.length ? 'toolUse' : 'stop', timestamp: msgTime() };
      if (r.chance(0.03)) delete m.content;
      message(m);
      for (const c of calls) {
        message({ role: 'toolResult', toolCallId: c.id, toolName: c.name, content: [{ type: 'text', text: r.pick(TEXTS) }], isError: r.chance(0.1), timestamp: msgTime() });
      }
    } else if (k < 50) {
      // A flush: aliases, summaries with their index entries, frontier, stats, chain.
      if (recordIds.length > 1 && r.chance(0.4)) {
        const data = { newToolCallId: r.pick(recordIds), originalToolCallId: r.pick(recordIds) };
        if (r.chance(0.3)) data.newResultTimestamp = r.pick([clock, null, 'x']);
        if (r.chance(0.3)) data.originalResultTimestamp = clock - 5;
        if (r.chance(0.1)) data.newToolCallId = r.pick(['', 0, null]);
        add({ type: 'custom', customType: 'context-prune-dedup-alias', data });
      }
      const ids = Array.from({ length: 1 + r.int(3) }, () => `call_${r.int(40)}`);
      const refs = ids.map((toolCallId) => {
        const x = { shortId: `t${ref++}`, toolCallId };
        if (r.chance(0.4)) x.resultTimestamp = r.pick([clock, clock + 0.5, null, '7']);
        return x;
      });
      if (r.chance(0.1)) refs.push(r.pick([null, 5, { shortId: 7, toolCallId: 'c' }, { shortId: '', toolCallId: 'c' }, { shortId: 'same', toolCallId: 'same' }]));
      const details = r.chance(0.1) ? r.pick([null, 'str', { toolCallIds: ids }, [1]]) : { toolCallRefs: refs, toolNames: ['bash'], turnIndex: 0, timestamp: clock };
      const content = r.chance(0.7) ? `summary ${r.pick(TEXTS)}` : [{ type: 'text', text: 'a' }, { type: 'image' }, { type: 'text' }, { type: 'text', text: 5 }, ...(r.chance(0.05) ? [null] : [])];
      add({ type: 'custom_message', customType: 'context-prune-summary', content, display: false, details });
      const toolCalls = ids.map((toolCallId, i) => {
        const rec = { toolCallId, toolName: 'bash', args: { command: r.pick(TEXTS) }, resultText: r.pick(TEXTS), isError: false, turnIndex: 0, timestamp: clock };
        if (r.chance(0.5) && refs[i] && refs[i].resultTimestamp !== undefined) rec.resultTimestamp = refs[i].resultTimestamp;
        if (r.chance(0.15)) Object.assign(rec, { resultText: '', spillPath: '/tmp/x.txt', spillBytes: r.pick([1234, null, 1.5]), resultPreview: 'head', contentHash: 'abc' });
        return rec;
      });
      recordIds.push(...ids);
      let data = { toolCalls };
      if (r.chance(0.1)) Object.assign(data, { backfilled: true, refs: refs.filter((x) => x) });
      // What makes the reference throw: a null record, an unhashable one,
      // (2.9.1) an index entry without data.
      if (r.chance(0.01)) toolCalls.push(null);
      if (r.chance(0.01)) toolCalls.push({ toolCallId: 'odd', toolName: 7, resultText: 'x' });
      if (r.chance(0.01)) data = r.pick([null, undefined, 5]);
      add({ type: 'custom', customType: 'context-prune-index', data });
      const frontier = { lastAttemptedToolCallId: ids[ids.length - 1], lastAttemptedToolName: 'bash', lastAttemptedTurnIndex: 3, lastAttemptedTimestamp: clock, attemptedBatchCount: 1, attemptedToolCallCount: ids.length, rawCharCount: 100, summaryCharCount: 20, outcome: 'summarized' };
      if (r.chance(0.5)) frontier.thinkingStripBoundaryTimestamp = clock - 1000;
      if (r.chance(0.15)) delete frontier.lastAttemptedToolName;
      if (r.chance(0.1)) frontier.lastAttemptedToolCallId = r.pick(['', null]);
      add({ type: 'custom', customType: 'context-prune-frontier', data: frontier });
      add({ type: 'custom', customType: 'context-prune-stats', data: { callCount: 1 } });
      if (r.chance(0.4)) {
        add({ type: 'custom', customType: 'context-prune-chain', data: { blockId: r.chance(0.9) ? `b${block++}` : '', startUserTimestamp: r.chance(0.9) ? clock - r.int(3) * 1000 : '5', droppedToolCallIds: ids, finalAssistantTimestamp: clock, toolRefs: refs.filter((x) => x && typeof x.shortId === 'string').map((x) => x.shortId), compressedAt: clock } });
      }
    } else if (k < 55 && !legacy) {
      const branch = branchIds();
      const target = branch.length ? r.pick(branch) : 'nowhere';
      const replacement = r.pick([null, { content: r.pick(TEXTS) }, { content: [{ type: 'text', text: 'edited' }] }, { content: 5 }, 'str', {}]);
      const edit = { type: 'context_edit', targetId: target, replacement };
      // Without a replacement pi throws when the target projects to a message.
      if (r.chance(0.03)) delete edit.replacement;
      add(edit);
    } else if (k < 60 && !legacy) {
      // Navigate to an earlier entry, maybe leaving a branch summary.
      if (entries.length > 0) {
        const from = leaf;
        leaf = r.chance(0.15) ? null : r.pick(entries).id;
        if (r.chance(0.6)) add({ type: 'branch_summary', fromId: from, summary: r.pick(['left a branch', '']) });
      }
    } else if (k < 64) {
      const branch = branchIds();
      const firstKept = branch.length && r.chance(0.8) ? r.pick(branch) : r.pick(['missing', undefined]);
      const c = { type: 'compaction', summary: r.pick(['compacted', '']), tokensBefore: 1000, details: {} };
      if (legacy) c.firstKeptEntryIndex = r.int(lines.length + 2);
      else if (firstKept !== undefined) c.firstKeptEntryId = firstKept;
      if (r.chance(0.4)) c.systemMessage = { role: 'system', content: 'sys', timestamp: 0 };
      add(c);
    } else if (k < 65) {
      // pi throws building the context when such an entry is on the path.
      add({ type: 'message', ...(r.chance(0.5) ? { message: null } : {}) });
    } else if (k < 68) {
      message({ role: 'system', content: r.chance(0.8) ? 'prompt' : null, timestamp: msgTime() });
    } else if (k < 72) {
      add({ type: 'custom_message', customType: r.pick(['note', undefined]), content: r.pick(['custom text', null, [{ type: 'text', text: 'blocks' }]]), display: r.pick([true, undefined]), ...(r.chance(0.5) ? { details: { a: 1 } } : {}) });
    } else if (k < 75) {
      message({ role: r.pick(['bashExecution', legacy || version === 2 ? 'hookMessage' : 'custom']), command: 'ls', output: 'x', exitCode: 0, content: 'c', timestamp: msgTime() });
    } else if (k < 80) {
      add(r.pick([
        { type: 'label', targetId: 'x', label: 'L' },
        { type: 'model_change', provider: 'p', modelId: 'm' },
        { type: 'thinking_level_change', thinkingLevel: 'high' },
        { type: 'session_info', name: 'n' },
        { type: 'custom', customType: 'other-ext', data: { x: 1 } },
      ]));
    } else if (k < 86) {
      lines.push(r.pick(['', '   ', '{"type":"message",', 'not json', 'null', '0', 'false', '""', '\u00a0', '{"type":"session","id":"late"}']));
    } else if (k < 88 && !legacy) {
      lines.push(r.pick(['42', '[1,2]', '"text"', 'true']));
    }
  }
  const text = lines.join(r.chance(0.1) ? '\r\n' : '\n') + (r.chance(0.8) ? '\n' : '');
  // Version-1 files get random ids from pi on every load: no leaf to name.
  return { text, ids: legacy ? [] : entries.map((e) => e.id) };
}

module.exports = { generate, rng };
