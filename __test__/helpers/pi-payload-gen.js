'use strict';
// Seeded conversations in the shape pi hands pi-ai for one model call (agent
// messages before convertToLlm, pi's system messages in front), built to
// reach every rule by which pi-ai 1.6.0 turns them into Anthropic wire
// messages (transform-messages.js, anthropic-messages.js convertMessages and
// the effort messages) and pi's convertToLlm. For the differential test of
// the replay's wire model (__test__/wire-payload.test.js). Each conversation
// carries the names of the rules it reaches (`features`), so a failing case
// says what to look at.
//
// What it reaches: tool-call chains whose results merge into one user
// message; empty and whitespace-only text and thinking (JS `trim` whitespace,
// and U+200B, which trim keeps); thinking without a signature or with a blank
// one; redacted thinking; errored and aborted turns (with and without the
// tool results they left); turns from another model or provider (thinking
// dropped, tool-call ids normalized and their results renamed); calls left
// without results (pi-ai adds "No result provided"); user content as a string
// and as blocks, images included; custom messages with string and block
// content; compaction and branch summaries; bash executions, with
// excludeFromContext; tool results with isError true, false and absent, with
// several text blocks, images, or none; pi-condense's stubs, purged
// arguments, compressed chains and stripped thinking; providerThinkingLevel
// on assistant turns (effort markers); later system messages (prompt
// sections, tools added and removed); lone surrogates; and every kind of last
// message, since the cache marker goes on the last one.

const { rng } = require('./session-gen.js');

const TOOLS = {
  read: { type: 'object', properties: { path: { type: 'string' }, offset: { type: 'number' } }, required: ['path'] },
  bash: { type: 'object', properties: { command: { type: 'string' }, timeout: { type: 'number' } }, required: ['command'] },
  edit: {
    type: 'object',
    properties: { path: { type: 'string' }, oldText: { type: 'string' }, newText: { type: 'string' } },
    required: ['path', 'oldText', 'newText'],
    additionalProperties: false,
  },
  grep: { type: 'object', properties: { pattern: { type: 'string' }, glob: { type: 'string' } }, required: ['pattern'] },
  context_tree_query: { type: 'object', properties: { ref: { type: 'string' } }, required: ['ref'] },
};
const TOOL_NAMES = Object.keys(TOOLS);
const tool = (name, description = `The ${name} tool.`) => ({ name, description, parameters: structuredClone(TOOLS[name]) });

const WORDS = ['Read the file', 'running the tests', 'café', '😀 emoji', 'line\nbreak', 'quote " and \\ back', 'tab\tctl\u0001', 'sep\u2028x', 'src/a.ts', '{b1}'];
// Texts JS's trim() empties (so pi-ai drops them) and one it does not (U+200B).
const BLANKS = ['', ' ', '\n\t ', '\u00a0', '\ufeff', '\u2028', '\u3000 \u2029', '\r\n'];
const NOT_BLANK = ['\u200b', '.', '\u0000'];
const SURROGATES = ['lone \ud800 high', 'lone \udc00 low', 'pair \ud83d\ude00 ok', '\udbff', 'end \ud83d'];
const IMAGE = { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' };
const DONE = 'toolUse';

function makeUsage(r) {
  const input = r.int(5000);
  const output = r.int(900);
  return { input, output, cacheRead: 0, cacheWrite: 0, totalTokens: input + output, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}

/**
 * One conversation for `seed`: `{ name, seed, features: [...], messages }`.
 * `model` is the id most assistant turns come from (the request's model in
 * the test, so same-model thinking is kept); others come from elsewhere.
 */
function conversation(seed, { model = 'claude-opus-5' } = {}) {
  const r = rng(seed * 7919 + 13);
  const features = new Set();
  const hit = (f) => features.add(f);
  let ts = 1_780_000_000_000 + r.int(1000);
  const tick = () => (ts += 1 + r.int(3000));
  const messages = [];
  let callN = 0;

  const text = () => {
    if (r.chance(0.06)) {
      hit('surrogates');
      return r.pick(SURROGATES);
    }
    if (r.chance(0.05)) {
      hit('blank-text');
      return r.pick(BLANKS);
    }
    if (r.chance(0.03)) {
      hit('not-blank-zwsp');
      return r.pick(NOT_BLANK);
    }
    let s = r.pick(WORDS);
    for (let n = r.int(3); n > 0; n--) s += ` ${r.pick(WORDS)}`;
    return s;
  };
  const textBlock = () => ({ type: 'text', text: text() });
  const signature = () => `sig_${seed}_${r.int(1e6).toString(36)}${'Q'.repeat(r.int(40))}=`;

  // pi's leading system message: the prompt and tools; sometimes sections,
  // sometimes a second patch right behind it (as pi writes when the prompt or
  // tools change; a `context` handler that changes nothing leaves them apart).
  if (!r.chance(0.03)) {
    const head = { role: 'system', content: `You are pi, a coding agent. ${text()}` };
    if (r.chance(0.9)) head.toolsAdded = TOOL_NAMES.slice(0, 2 + r.int(3)).map((n) => tool(n));
    if (r.chance(0.3)) {
      head.sections = { skills: `Skills: ${text()}`, agents: r.chance(0.5) ? null : `AGENTS.md: ${text()}` };
      hit('system-sections');
    }
    head.timestamp = 0;
    messages.push(head);
    if (r.chance(0.2)) {
      hit('system-patch-front');
      messages.push(systemPatch());
    }
  } else {
    hit('no-system');
  }

  function systemPatch() {
    const m = { role: 'system', content: r.chance(0.5) ? `Update: ${text()}` : '' };
    if (r.chance(0.5)) m.sections = { skills: r.chance(0.4) ? null : `Skills v2: ${text()}` };
    if (r.chance(0.4)) {
      m.toolsAdded = [tool(r.pick(TOOL_NAMES), `Changed ${text()}`)];
      hit('system-tools-added');
    }
    if (r.chance(0.3)) {
      m.toolsRemoved = [{ name: r.pick(TOOL_NAMES) }];
      hit('system-tools-removed');
    }
    m.timestamp = tick();
    return m;
  }

  function user() {
    const k = r.int(10);
    if (k < 4) {
      hit('user-string');
      messages.push({ role: 'user', content: text(), timestamp: tick() });
    } else if (k < 8) {
      hit('user-blocks');
      const blocks = [];
      for (let n = 1 + r.int(3); n > 0; n--) blocks.push(r.chance(0.08) ? (hit('user-image'), { ...IMAGE }) : textBlock());
      messages.push({ role: 'user', content: blocks, timestamp: tick() });
    } else if (k === 8) {
      hit('user-blank');
      messages.push({ role: 'user', content: r.chance(0.5) ? r.pick(BLANKS) : [{ type: 'text', text: r.pick(BLANKS) }], timestamp: tick() });
    } else {
      hit('compressed-chain');
      messages.push({
        role: 'user',
        content: [{ type: 'text', text: `<compressed-chain id="b${r.int(9)}" tools="t1,t2">\n${text()}\n</compressed-chain>` }],
        timestamp: tick(),
      });
    }
  }

  function extra() {
    switch (r.int(7)) {
      case 0:
        hit('custom-string');
        messages.push({ role: 'custom', customType: 'context-prune-summary', content: `Summary: ${text()}`, display: false, details: { toolCallRefs: [], toolNames: ['read'], turnIndex: 1, timestamp: ts }, timestamp: tick() });
        break;
      case 1:
        hit('custom-blocks');
        messages.push({ role: 'custom', customType: 'note', content: r.chance(0.2) ? [textBlock(), { ...IMAGE }] : [textBlock(), textBlock()], display: true, timestamp: tick() });
        break;
      case 2:
        hit('compaction-summary');
        messages.push({ role: 'compactionSummary', summary: text(), tokensBefore: 12345, timestamp: tick() });
        break;
      case 3:
        hit('branch-summary');
        messages.push({ role: 'branchSummary', summary: text(), fromId: 'abc123', timestamp: tick() });
        break;
      default: {
        const m = { role: 'bashExecution', command: r.pick(['ls', 'npm test', 'echo "x"']), output: r.chance(0.7) ? text() : '', exitCode: r.pick([0, 1, null, 2, undefined]), cancelled: r.chance(0.15), truncated: r.chance(0.2), timestamp: tick() };
        if (m.exitCode === undefined) delete m.exitCode;
        if (m.truncated && r.chance(0.7)) m.fullOutputPath = '/tmp/pi-bash-1.log';
        if (r.chance(0.3)) {
          m.excludeFromContext = true;
          hit('bash-excluded');
        } else hit('bash');
        messages.push(m);
      }
    }
  }

  // One assistant turn: its blocks, then (for tool calls) its results.
  function assistant() {
    const from = r.int(100);
    let api = 'anthropic-messages';
    let provider = 'anthropic';
    let id = model;
    if (from < 8) {
      hit('foreign-model');
      id = r.pick(['claude-sonnet-4-5', 'claude-opus-4-8', 'claude-haiku-4-5']);
      if (id === model) id = 'claude-opus-4-1';
    } else if (from < 14) {
      hit('foreign-provider');
      api = 'openai-responses';
      provider = 'openai';
      id = 'gpt-5.5';
    }
    const foreign = api !== 'anthropic-messages' || id !== model;
    const content = [];
    if (r.chance(0.6)) {
      const k = r.int(10);
      if (k < 5) content.push({ type: 'thinking', thinking: text(), thinkingSignature: signature() });
      else if (k < 6) {
        hit('thinking-unsigned');
        content.push({ type: 'thinking', thinking: text() });
      } else if (k < 7) {
        hit('thinking-blank-signature');
        content.push({ type: 'thinking', thinking: text(), thinkingSignature: r.pick(['', '  ']) });
      } else if (k < 8) {
        hit('thinking-redacted');
        content.push({ type: 'thinking', thinking: '[Reasoning redacted]', thinkingSignature: `redacted_${signature()}`, redacted: true });
      } else if (k < 9) {
        hit('thinking-empty');
        content.push({ type: 'thinking', thinking: r.pick(BLANKS), thinkingSignature: r.chance(0.5) ? signature() : '' });
      } else {
        hit('thinking-signature-only');
        content.push({ type: 'thinking', thinking: '', thinkingSignature: signature() });
      }
    }
    if (r.chance(0.5)) {
      const b = textBlock();
      if (r.chance(0.2)) b.textSignature = 'ts_1';
      content.push(b);
    }
    const calls = [];
    if (r.chance(0.7)) {
      for (let n = 1 + (r.chance(0.4) ? r.int(4) : 0); n > 0; n--) {
        const name = r.pick(TOOL_NAMES);
        let callId = `toolu_${seed}_${++callN}`;
        if (provider === 'openai' && r.chance(0.7)) {
          callId = `call_${callN}|fc_${'x'.repeat(r.int(80))}.${seed}`;
          hit('tool-id-normalized');
        }
        const args = name === 'bash' ? { command: text() } : name === 'read' ? { path: 'src/a.ts' } : { pattern: text(), path: 'src' };
        const call = { type: 'toolCall', id: callId, name, arguments: args };
        if (r.chance(0.08)) {
          call.arguments = { _purged: '<purged-errored-args size="812"/>' };
          hit('purged-args');
        }
        if (provider === 'openai' && r.chance(0.3)) call.thoughtSignature = 'opaque';
        content.push(call);
        calls.push(call);
      }
    }
    if (r.chance(0.05)) {
      hit('assistant-empty-content');
      content.length = 0;
      calls.length = 0;
    }
    if (r.chance(0.08) && !foreign) {
      hit('thinking-stripped');
      for (let i = content.length - 1; i >= 0; i--) if (content[i].type === 'thinking') content.splice(i, 1);
    }
    let stopReason = calls.length > 0 ? DONE : 'stop';
    if (r.chance(0.07)) {
      stopReason = r.pick(['error', 'aborted']);
      hit(`assistant-${stopReason}`);
    }
    const m = { role: 'assistant', content, api, provider, model: id, usage: makeUsage(r), stopReason, timestamp: tick() };
    if (stopReason === 'error') m.errorMessage = 'overloaded';
    if (api === 'anthropic-messages' && r.chance(0.35)) {
      m.providerThinkingLevel = r.pick(['low', 'medium', 'high', 'xhigh', 'max', 'minimal', 'off']);
      hit('provider-thinking-level');
    }
    messages.push(m);

    // Results: in call order, sometimes one missing, sometimes reordered; a
    // system patch or a custom message may sit between them.
    if (calls.length > 1) hit('tool-chain');
    const order = calls.slice();
    if (order.length > 1 && r.chance(0.15)) {
      order.reverse();
      hit('results-reordered');
    }
    for (const call of order) {
      if ((stopReason === 'error' || stopReason === 'aborted') && r.chance(0.5)) continue;
      if (r.chance(0.08)) {
        hit('call-without-result');
        continue;
      }
      if (r.chance(0.04)) {
        hit('system-between-results');
        messages.push(systemPatch());
      }
      messages.push(result(call));
    }
    if (calls.length > 0 && r.chance(0.25)) {
      hit('custom-after-results');
      messages.push({ role: 'custom', customType: 'context-prune-summary', content: `[t${callN}] ${text()}`, display: false, details: { toolCallRefs: calls.map((c, i) => ({ shortId: `t${i}`, toolCallId: c.id })), toolNames: calls.map((c) => c.name), turnIndex: 1, timestamp: ts }, timestamp: tick() });
    }
    return calls.length > 0 && stopReason === DONE;
  }

  function result(call) {
    const m = { role: 'toolResult', toolCallId: call.id, toolName: call.name };
    const k = r.int(20);
    if (k < 3) {
      hit('stub');
      m.content = [{ type: 'text', text: `[Summarized in pruner summary, ref \`t${r.int(50)}\`. Use context_tree_query to retrieve full output.]` }];
    } else if (k < 4) {
      hit('stub-spilled');
      m.content = [{ type: 'text', text: `[Oversized output spilled to file — 123456 bytes.]\nTool: ${call.name}\nPreview (head):\n${text()}\nFull output — read this file (offset/limit supported): /tmp/x\nOr use context_tree_query with ref \`t3\`.` }];
    } else if (k < 6) {
      hit('result-multi-text');
      m.content = [textBlock(), textBlock(), textBlock()];
    } else if (k < 7) {
      hit('result-empty');
      m.content = [];
    } else if (k < 8) {
      hit('result-image');
      m.content = r.chance(0.5) ? [textBlock(), { ...IMAGE }] : [{ ...IMAGE }];
    } else {
      m.content = [textBlock()];
    }
    const e = r.int(10);
    if (e < 2) {
      m.isError = true;
      hit('result-error');
      if (k === 7) hit('error-result-image');
    } else if (e < 3) {
      hit('result-isError-absent');
    } else m.isError = false;
    if (r.chance(0.05)) {
      hit('result-details');
      m.details = { truncation: null, path: 'src/a.ts' };
    }
    m.timestamp = tick();
    return m;
  }

  // Turns: a user request, then assistant turns until one ends without
  // tool calls; extras and system patches between them.
  const nTurns = 1 + r.int(5);
  for (let t = 0; t < nTurns; t++) {
    user();
    if (r.chance(0.15)) extra();
    let steps = 0;
    while (assistant() && steps++ < 5) {
      if (r.chance(0.1)) extra();
      if (r.chance(0.04)) {
        hit('system-mid');
        messages.push(systemPatch());
      }
    }
    if (r.chance(0.2)) extra();
  }

  // Where the call is made: the whole list, or a cut anywhere after the
  // leading system messages (every kind of last message gets the marker
  // rule applied, calls at the cut are left without results).
  let end = messages.length;
  if (r.chance(0.4)) {
    const first = messages.findIndex((m) => m.role !== 'system');
    end = Math.max(first + 1, first + 1 + r.int(messages.length - first));
    hit('cut');
  }
  const out = messages.slice(0, end);
  // A model call follows the user's or a tool's turn; a list ending on an
  // assistant turn (a cache warm re-sends one) stays, less often.
  if (out[out.length - 1].role === 'assistant' && r.chance(0.7)) {
    user();
    out.push(messages[messages.length - 1]);
  }
  if (r.chance(0.06)) {
    hit('system-last');
    out.push(systemPatch());
  }
  const last = out[out.length - 1];
  hit(`last-${last.role}`);
  return { name: `conversation ${seed}`, seed, features: [...features].sort(), messages: out };
}

module.exports = { conversation, tool };
