'use strict';

// Growing pi conversations for the differential tests against the
// reference: a seeded simulation of a host running pi-condense. Turns are
// appended one message at a time (a render after most of them), and at the
// end of some turns a flush mutates the host's real ToolCallIndexer the way
// pi-condense's flush does: records (addBatch), per-batch summaries
// (allocateSummaryRefs, registerSummaryRefs, registerSummaryBody, plus the
// summary message in the conversation), duplicates (registerDuplicate) and
// compressed chains (registerChain). It reaches what the 2.9 dialect is
// about: provider ids that restart per response (bash_0 again and again),
// legacy records written before occurrence keys (2.9: bare-keyed batches,
// then an upgrade), orphaned and duplicate results, foreign messages inside
// and between cycles, chains over several turns, nested or unresolvable
// ranges and recorded ids that disagree with the range.

// mulberry32: small, seeded, reproducible.
function createRandom(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: (xs) => xs[Math.floor(next() * xs.length)],
    subset: (xs) => xs.filter(() => next() < 0.5),
  };
}

const TOOLS = ['read', 'bash', 'edit', 'write', 'grep', 'context_tree_query'];
const PATHS = ['src/a.ts', 'src/lib/b.rs', 'docs/notes.md', 'docs\\win\\x.md', 'a\nb/c.md', '.env', 'README.md'];
const GLOBS = ['**/*.md', 'src/?.ts', 'src/**', '*.ts', '**/.env', '***'];
const TEXTS = ['ok', 'done', 'caf\u00e9', '\u{1F600} x', 'line\nbreak', 'quote " \\', 'see {b1} and {b2}', '$& {b3}'];
const ID_STYLES = ['unique', 'counter', 'functions'];

const noAppend = () => {};
const keyOf = (id, resultTimestamp) => (resultTimestamp === undefined ? id : `${id}@${resultTimestamp}`);

/**
 * Runs one conversation. `dialect` is '2.4.3' or '2.9.1', `indexer` a new
 * ToolCallIndexer of that release; `render(messages, boundary)` is called at
 * every render point with a fresh array (the host hands over a copy) and, for
 * 2.4.3, the persisted thinking boundary or undefined. Returns the config the
 * renders are to use, through `onConfig` before the first render.
 */
function simulate({ dialect, seed, indexer, onConfig, render }) {
  const rnd = createRandom(seed);
  const v29 = dialect === '2.9.1';
  let ts = 1_760_000_000_000 + rnd.int(0, 1000);
  const tick = () => (ts += rnd.pick([0, 1, 1, 3, 40, 1000]));

  const config = {
    chainCompression: rnd.chance(0.85) ? { enabled: rnd.chance(0.9), stripFinalAssistantThinking: rnd.chance(0.6) } : undefined,
    errorPurge: rnd.chance(0.6) ? { enabled: true, cooldownTurns: rnd.int(0, 3), minArgChars: rnd.pick([0, 20, 200]) } : undefined,
    protection: rnd.chance(0.4) ? { protectedTools: rnd.subset(['bash', 'edit']), protectedPaths: rnd.subset(GLOBS) } : undefined,
    recoveryGraceTurns: rnd.int(0, 3),
  };
  if (!v29 && rnd.chance(0.6)) config.thinkingStrip = { enabled: true, keepLastTurns: rnd.int(1, 4) };
  onConfig(config);

  const idStyle = rnd.pick(ID_STYLES);
  let uniqueN = 0;
  let functionsN = 0;
  // 2.9: conversations that begin before the upgrade write bare-keyed
  // records until `upgradeAtTurn`.
  const upgradeAtTurn = v29 && rnd.chance(0.3) ? rnd.int(1, 6) : 0;

  const messages = [];
  const turns = [];
  const pending = []; // finished calls not yet flushed
  let boundary;
  let blockN = 0;
  let turnIndex = 0;

  const renderNow = () => render(messages.slice(), boundary);
  const push = (msg) => {
    messages.push(msg);
    if (rnd.chance(0.6)) renderNow();
  };
  const text = () => rnd.pick(TEXTS);
  const foreign = () =>
    rnd.pick([
      { role: 'bashExecution', command: 'ls', output: text(), exitCode: 0, cancelled: false, truncated: false, timestamp: tick() },
      { role: 'custom', customType: 'note', content: text(), display: true, timestamp: tick() },
      { role: 'branchSummary', summary: text(), fromId: 'x', timestamp: tick() },
    ]);

  function newId(indexInResponse, name) {
    if (idStyle === 'unique') return `toolu_${uniqueN++}`;
    if (idStyle === 'counter') return `${name}_${indexInResponse}`;
    if (rnd.chance(0.2)) functionsN = 0;
    return `functions.${name}:${functionsN++}`;
  }

  function assistantMessage(content, stopReason) {
    return {
      role: 'assistant',
      content,
      api: 'anthropic-messages',
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      usage: { input: rnd.int(0, 90000), output: rnd.int(0, 4000) },
      stopReason,
      timestamp: tick(),
    };
  }

  function toolResult(call) {
    return {
      role: 'toolResult',
      toolCallId: call.id,
      toolName: call.name,
      content: [{ type: 'text', text: call.resultText }],
      isError: call.isError,
      timestamp: tick(),
    };
  }

  // One user turn: a user message, 0-3 tool-call responses with their
  // results, and usually a closing answer.
  function runTurn() {
    const turn = { userTs: tick(), calls: [], finalTs: null, start: messages.length };
    if (turns.length > 0 && rnd.chance(0.04)) turn.userTs = turns[turns.length - 1].userTs; // two users at one time
    turns.push(turn);
    push({ role: 'user', content: rnd.chance(0.5) ? text() : [{ type: 'text', text: text() }], timestamp: turn.userTs });
    if (rnd.chance(0.1)) push(foreign());
    const responses = rnd.int(0, 3);
    let previous = [];
    for (let r = 0; r < responses; r++) {
      const content = [];
      if (rnd.chance(0.6)) content.push({ type: 'thinking', thinking: text(), thinkingSignature: 'c2ln' });
      if (rnd.chance(0.3)) content.push({ type: 'text', text: text() });
      const calls = [];
      const count = rnd.int(1, 3);
      for (let k = 0; k < count; k++) {
        const name = rnd.pick(TOOLS);
        const args = {};
        if (rnd.chance(0.7)) args.path = rnd.pick(PATHS);
        if (rnd.chance(0.3)) args.content = 'x'.repeat(rnd.int(0, 400));
        const call = { id: newId(k, name), name, args, resultText: text(), isError: rnd.chance(0.2), turn };
        if (rnd.chance(0.05) && calls.length > 0) call.id = calls[0].id; // one response, one id twice
        calls.push(call);
        content.push({ type: 'toolCall', id: call.id, name, arguments: args });
      }
      if (rnd.chance(0.03)) content.push({ type: 'toolCall', name: 'bash', arguments: {} }); // no id
      push(assistantMessage(content, 'toolUse'));
      if (rnd.chance(0.05)) push(foreign()); // a barrier inside the cycle
      for (const call of calls) {
        if (rnd.chance(0.04)) continue; // a call left without a result
        const result = toolResult(call);
        call.resultTs = result.timestamp;
        push(result);
        if (rnd.chance(0.03)) push(toolResult(call)); // answered twice
        turn.calls.push(call);
        pending.push(call);
      }
      if (previous.length > 0 && rnd.chance(0.04)) push(toolResult(rnd.pick(previous))); // a stray for an earlier call
      previous = calls;
    }
    if (rnd.chance(0.85)) {
      const content = [];
      if (rnd.chance(0.7)) content.push({ type: 'thinking', thinking: text() });
      content.push({ type: 'text', text: text() });
      const final = assistantMessage(content, 'stop');
      turn.finalTs = final.timestamp;
      push(final);
    }
    turn.end = messages.length;
    if (rnd.chance(0.06)) push(foreign());
  }

  // pi-condense's flush over the pending calls.
  function flush() {
    const legacy = v29 && turns.length <= upgradeAtTurn;
    const batch = [];
    for (const call of pending.splice(0)) {
      const resultTimestamp = v29 && !legacy ? call.resultTs : undefined;
      const key = keyOf(call.id, resultTimestamp);
      const original = indexer.lookupByContent(call.name, call.resultText);
      if (original !== undefined && original !== key && rnd.chance(0.3)) {
        indexer.registerDuplicate(key, original, noAppend);
        continue;
      }
      const record = {
        toolCallId: call.id,
        toolName: call.name,
        args: call.args,
        resultText: call.resultText,
        isError: call.isError,
      };
      if (resultTimestamp !== undefined) record.resultTimestamp = resultTimestamp;
      if (rnd.chance(0.15)) Object.assign(record, { spillPath: `/tmp/spill/${call.id}.txt`, spillBytes: rnd.int(0, 1e6), resultPreview: text() });
      batch.push(record);
    }
    if (batch.length > 0) {
      indexer.addBatch({ toolCalls: batch, turnIndex: turnIndex++, timestamp: ts }, noAppend);
      if (rnd.chance(0.7)) {
        const refs = indexer.allocateSummaryRefs({ toolCalls: batch });
        indexer.registerSummaryRefs(refs);
        const summary = `Summary: ${text()}`;
        indexer.registerSummaryBody(refs.map((ref) => keyOf(ref.toolCallId, ref.resultTimestamp)), summary);
        messages.push({ role: 'custom', customType: 'context-prune-summary', content: summary, display: false, details: { toolCallRefs: refs }, timestamp: tick() });
      }
    }
    if (turns.length >= 2 && rnd.chance(0.5)) registerChain();
    if (config.thinkingStrip) {
      // The persisted boundary: the K-th assistant from the end, never lower.
      const stamps = messages.filter((m) => m.role === 'assistant').map((m) => m.timestamp);
      const keep = Math.max(1, config.thinkingStrip.keepLastTurns);
      if (stamps.length > keep) boundary = boundary === undefined ? stamps[stamps.length - keep] : Math.max(boundary, stamps[stamps.length - keep]);
    }
    renderNow();
  }

  // A chain over finished turns first..last (not the newest), with the
  // perturbations the render has to cope with.
  function registerChain() {
    const last = rnd.int(0, turns.length - 2);
    const first = rnd.chance(0.7) ? last : rnd.int(0, last);
    const covered = turns.slice(first, last + 1);
    const calls = covered.flatMap((t) => t.calls);
    let droppedToolCallIds = calls.map((c) => c.id);
    if (rnd.chance(0.1)) droppedToolCallIds = droppedToolCallIds.slice(1);
    if (rnd.chance(0.1)) droppedToolCallIds.push('gone_1');
    if (v29 && rnd.chance(0.1)) droppedToolCallIds = droppedToolCallIds.map((id) => `${id}@${rnd.int(1, 99)}`);
    const entry = {
      blockId: `b${++blockN}`,
      startUserTimestamp: covered[0].userTs,
      droppedToolCallIds,
      finalAssistantTimestamp: rnd.chance(0.08) ? null : covered[covered.length - 1].finalTs ?? ts,
      toolRefs: calls.map((c) => indexer.getShortRefForToolCallId(keyOf(c.id, v29 ? c.resultTs : undefined)) ?? c.id),
      compressedAt: ts,
    };
    if (v29 && rnd.chance(0.8)) entry.droppedOccurrenceKeys = calls.map((c) => keyOf(c.id, c.resultTs));
    if (rnd.chance(0.3) && calls.length > 0) entry.protectedToolCallIds = [rnd.pick(calls).id];
    if (rnd.chance(0.5)) entry.rangeSummaryText = `Chain ${blockN}: ${text()} {b${rnd.int(1, blockN)}}`;
    indexer.registerChain(entry);
  }

  if (rnd.chance(0.05)) push({ role: 'toolResult', toolCallId: 'early_0', toolName: 'bash', content: [], isError: false, timestamp: tick() });
  const turnCount = rnd.int(2, 12);
  for (let t = 0; t < turnCount; t++) {
    runTurn();
    if (rnd.chance(0.6)) flush();
  }
  renderNow();
}

module.exports = { simulate, createRandom };
