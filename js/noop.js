'use strict';

// A cheap walk that proves a render of a state object cannot change
// anything (and would not throw), so `pruneMessages` and `PruneSession`
// answer a no-op without serializing the messages: what the pure-JS no-op
// costs. It only ever answers "maybe" when unsure; the engine decides then.

const { computeThinkingBoundary } = require('./pure.js');

function hasEntries(o) {
  if (o === null || typeof o !== 'object') return false;
  for (const _ in o) return true;
  return false;
}

// 2.9.1's sweep removes tool results whose call is not open (the rule is
// `orphanSweep` in js/pure/v2.9.js and src/phases/sweep.rs): this only
// recognises a conversation where every result answers an open call of the
// assistant before it, and says "maybe" otherwise.
function mayHaveOrphans(messages) {
  let open = null;
  for (const m of messages) {
    if (m === null || typeof m !== 'object') {
      open = null;
      continue;
    }
    if (m.role === 'assistant') {
      const c = m.content;
      if (c !== undefined && c !== null && !Array.isArray(c)) return true;
      open = [];
      if (Array.isArray(c)) {
        for (const b of c) {
          if (b === null) return true;
          // A Set: a call id issued twice is answered once.
          if (typeof b === 'object' && b.type === 'toolCall' && !open.includes(b.id)) open.push(b.id);
        }
      }
    } else if (m.role === 'toolResult') {
      const at = open === null ? -1 : open.indexOf(m.toolCallId);
      if (at < 0) return true;
      open.splice(at, 1);
    } else {
      open = null;
    }
  }
  return false;
}

/** Whether rendering `messages` with this state and config may change them. */
function mayChange(messages, state, config, dialect) {
  const s = state || {};
  const c = config || {};
  const stubs = hasEntries(s.records) || hasEntries(s.dedupAliases);
  const purge = Boolean(c.errorPurge && c.errorPurge.enabled);
  const chains = Boolean(c.chainCompression && c.chainCompression.enabled) && Array.isArray(s.chains) && s.chains.length > 0;
  const thinking = dialect === '2.4.3' && Boolean(c.thinkingStrip && c.thinkingStrip.enabled);
  if (chains) return true;
  if (dialect === '2.9.1' && mayHaveOrphans(messages)) return true;
  for (const m of messages) {
    if (m === null || m === undefined) return true;
    if (typeof m !== 'object') continue;
    if (m.role === 'toolResult') {
      if (stubs && (typeof m.toolCallId === 'string' || typeof m.timestamp === 'number')) return true;
      if (purge && m.isError === true) return true;
    } else if (thinking && m.role === 'assistant') {
      const content = m.content;
      if (!Array.isArray(content)) continue;
      for (const b of content) if (b === null || (typeof b === 'object' && b.type === 'thinking')) return true;
    }
  }
  return false;
}

/** The result of a render that changed nothing. */
function noOp(messages, config, boundary, dialect) {
  let next = null;
  const t = config && config.thinkingStrip;
  if (dialect === '2.4.3' && t && t.enabled) {
    const stamps = [];
    for (const m of messages) {
      if (m !== null && typeof m === 'object' && m.role === 'assistant' && typeof m.timestamp === 'number') {
        stamps.push(m.timestamp);
      }
    }
    const b = computeThinkingBoundary(stamps, t.keepLastTurns, boundary ?? undefined);
    next = b === undefined || Number.isNaN(b) ? null : b;
  }
  return {
    messages,
    pruned: false,
    beforeChars: 0,
    afterChars: 0,
    frontier: { thinkingStripBoundaryTimestamp: boundary, nextThinkingStripBoundaryTimestamp: next },
    stats: {
      stubbed: 0,
      purgedArgs: 0,
      chainDropped: 0,
      chainInserted: 0,
      finalThinkingStripped: 0,
      ...(dialect === '2.4.3' ? { thinkingStripped: 0 } : { orphansSwept: 0 }),
    },
    diagnostics: [],
  };
}

module.exports = { mayChange, noOp };
