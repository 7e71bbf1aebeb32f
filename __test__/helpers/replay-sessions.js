'use strict';
// Small pi session files written out line by line for the replay tests,
// each with the messages a context handler sees, so a test can work out
// renders, breaks and chars from the message objects themselves.
//
// handSession: u1, a1 (reads a.txt), r1 (400 chars), then a2's request;
// at a2's message_end pi-condense flushes (summary s1, index, frontier,
// written after a2's request began, so not in force for it), then u2, a3.
// purgeSession: a1's write fails with 600-char arguments; no flush follows,
// so error purge's cooldown (2 assistant messages) passes mid-session.

const T0 = Date.UTC(2026, 0, 1);
const iso = (ms) => new Date(T0 + ms).toISOString();

const STUB_T1 = '[Summarized in pruner summary, ref `t1`. Use context_tree_query to retrieve full output.]';

function lines(entries) {
  const header = { type: 'session', version: 3, id: 'replay-test', timestamp: iso(0), cwd: '/w' };
  let parentId = null;
  const out = [JSON.stringify(header)];
  for (const [id, at, fields] of entries) {
    out.push(JSON.stringify({ ...fields, id, parentId, timestamp: iso(at) }));
    parentId = id;
  }
  return `${out.join('\n')}\n`;
}

function handSession() {
  const m = {
    u1: { role: 'user', content: 'read a.txt', timestamp: T0 + 1000 },
    a1: { role: 'assistant', content: [{ type: 'toolCall', id: 'c1', name: 'read', arguments: { path: 'a.txt' } }], timestamp: T0 + 2000 },
    r1: { role: 'toolResult', toolCallId: 'c1', toolName: 'read', content: [{ type: 'text', text: 'x'.repeat(400) }], isError: false, timestamp: T0 + 3000 },
    a2: { role: 'assistant', content: [{ type: 'text', text: 'a.txt holds 400 x.' }], timestamp: T0 + 5000 },
    u2: { role: 'user', content: 'thanks', timestamp: T0 + 10000 },
    a3: { role: 'assistant', content: [{ type: 'text', text: 'ok' }], timestamp: T0 + 11000 },
  };
  const summary = {
    customType: 'context-prune-summary',
    content: 'read a.txt: 400 x (`t1`)',
    display: false,
    details: { toolCallRefs: [{ shortId: 't1', toolCallId: 'c1' }] },
  };
  // The custom message pi projects from the summary entry (SESSIONS.md A.7).
  m.s1 = { role: 'custom', customType: summary.customType, content: summary.content, display: false, details: summary.details, timestamp: T0 + 6000 };
  const text = lines([
    ['u1', 1000, { type: 'message', message: m.u1 }],
    ['a1', 2000, { type: 'message', message: m.a1 }],
    ['r1', 3000, { type: 'message', message: m.r1 }],
    ['s1', 6000, { type: 'custom_message', ...summary }],
    ['i1', 6000, { type: 'custom', customType: 'context-prune-index', data: { toolCalls: [{ toolCallId: 'c1', toolName: 'read', args: { path: 'a.txt' }, resultText: 'x'.repeat(400), isError: false, turnIndex: 0, timestamp: T0 + 2000 }] } }],
    ['f1', 6000, { type: 'custom', customType: 'context-prune-frontier', data: { lastAttemptedToolCallId: 'c1', lastAttemptedToolName: 'read', lastAttemptedTurnIndex: 0, lastAttemptedTimestamp: T0 + 2000, attemptedBatchCount: 1, attemptedToolCallCount: 1, rawCharCount: 400, summaryCharCount: 24, outcome: 'summarized' } }],
    ['a2', 6001, { type: 'message', message: m.a2 }],
    ['u2', 10000, { type: 'message', message: m.u2 }],
    ['a3', 11001, { type: 'message', message: m.a3 }],
  ]);
  return { text, m };
}

function purgeSession() {
  const user = (content, at) => ({ type: 'message', message: { role: 'user', content, timestamp: T0 + at } });
  const assistant = (content, at) => ({ type: 'message', message: { role: 'assistant', content, timestamp: T0 + at } });
  return lines([
    ['u1', 1000, user('write f', 1000)],
    ['a1', 2001, assistant([{ type: 'toolCall', id: 'w1', name: 'write', arguments: { path: 'f', content: 'y'.repeat(600) } }], 2000)],
    ['r1', 3000, { type: 'message', message: { role: 'toolResult', toolCallId: 'w1', toolName: 'write', content: [{ type: 'text', text: 'EACCES' }], isError: true, timestamp: T0 + 3000 } }],
    ['a2', 4001, assistant([{ type: 'text', text: 'it failed' }], 4000)],
    ['u2', 5000, user('again', 5000)],
    ['a3', 6001, assistant([{ type: 'text', text: 'still failing' }], 6000)],
    ['u3', 7000, user('ok', 7000)],
    ['a4', 8001, assistant([{ type: 'text', text: 'done' }], 8000)],
  ]);
}

// rewindSession: the hand session continued by a3' whose request time lies
// before everything after u1 (a clock that went back), so its leaf is u1
// and the replay must rebuild from the root; then a4 in order again.
function rewindSession() {
  const { text } = handSession();
  const more = [
    { type: 'message', id: 'a3b', parentId: 'a3', timestamp: iso(12000), message: { role: 'assistant', content: [{ type: 'text', text: 'late' }], timestamp: T0 + 1500 } },
    { type: 'message', id: 'u3', parentId: 'a3b', timestamp: iso(13000), message: { role: 'user', content: 'and now?', timestamp: T0 + 13000 } },
    { type: 'message', id: 'a4', parentId: 'u3', timestamp: iso(14001), message: { role: 'assistant', content: [{ type: 'text', text: 'now' }], timestamp: T0 + 14000 } },
  ];
  return `${text}${more.map((e) => JSON.stringify(e)).join('\n')}\n`;
}

module.exports = { handSession, purgeSession, rewindSession, T0, STUB_T1 };
