'use strict';

// The words a report uses, each explained once for a pi user: a legend
// under a table lists the terms that table shows, one line each. The cause
// names are the replay's (src/replay/cause.rs, `Cause`); the gate's
// decisions are docs/GATE.md's (src/gate/rule.rs, `Reason`); the tune's
// columns are those of tune.js.

const TERMS = {
  'x none': 'the cost as a multiple of no pruning on the same calls (below 1: pruning saves money)',
  rewrites: 'calls that wrote more to the prompt cache than the messages appended since the previous call (a rewrite of history, a partial rewrite, or an expired cache)',
  'at a flush': 'the change came with a flush, when pi-condense wrote new summaries, chains or a new thinking boundary',
  stub: 'pi-condense replaced a summarized tool result with its stub',
  errorPurge: "pi-condense purged the arguments of a failed tool call",
  chainCompression: 'pi-condense compressed a closed chain of tool calls',
  thinkingStrip: "pi-condense 2.4 stripped the thinking of turns behind its thinking boundary",
  orphanSweep: 'pi-condense 2.9 swept a tool result whose call was gone',
  compaction: "pi's compaction replaced the history with a summary",
  contextEdit: "pi's context_edit rewrote a message",
  branch: 'the session went on from an earlier message (/tree, a fork)',
  expired: 'the cache had outlived its lifetime (5 minutes, or 1 hour with long retention) since its last use',
  modelSwitch: 'another model answered, whose cache is its own',
  systemPrompt: "pi's system prompt or tools changed",
  thinkingDropped: "the provider drops the thinking of closed turns (pi-ai does so for this model), so a new user turn changes the message before it",
  lookback: "the previous cache breakpoint lies further back than the provider looks (20 blocks)",
  unknown: 'a change the replay cannot name',
  warms: "pi's cache warms: pi re-sends its last request (a one-token answer) shortly before the cache would expire, while the agent runs and, when a warm pays, while it idles; simulated per policy, each warming its own context (src/replay/warmer.rs, docs/REPLAY.md)",
  parts:
    "a policy's saving against no pruning, split into what each part of it saves (negative: costs more): stubs, purges and chains; the 2.4.3 thinking strip; the gate's holds; pi's compactions; pi's cache warms; they add up to the difference (src/replay/parts.rs)",
  'thinking dropped':
    "reasoning the model no longer sees: thinking blocks the provider drops because something before them changed since they were produced (preserved thinking's prefix check, on Claude Opus 5.5, Sonnet 5.5, Haiku 5.5, Fable 5.1 and later); not billed, and the model answers without them (docs/REPLAY.md)",
  compactions:
    "pi's compactions under that policy: when the context passes the model's window less compaction.reserveTokens, pi summarizes the older messages in a request of its own (billed, without the cache) and goes on from the summary, with a cold cache (docs/REPLAY.md)",
  'over window': "requests above the model's context window that pi could not send (the provider refuses them; compaction is off, or its summary still does not fit): counted, not priced",
  invariant:
    "pi-condense's promise that history changes only at a flush; BROKEN names a render that changed an earlier message between flushes (exit status 1 when it is your release's), a bug in that release or a state the session file does not explain; broken by design: a variant that does not promise it",
  applied: "calls where condense-native's cache-aware gate sent pi-condense's render as it is (docs/GATE.md); each applied call is one of cold, same, budget or pays",
  held: "calls where the gate sent the previous request's messages byte for byte with the new ones appended, so the cache is read, not rewritten; the release's rewrite waits",
  cold: 'applied with nothing warm to lose: the first call, another model, a context that is not an append of the previous one, or an expired cache',
  same: "applied because the release's render is the hold: nothing to decide (most calls)",
  budget: "applied because the hold would fill more than the gate's budget (0.8 by default) of the model's context window",
  pays: 'applied because rewriting pays: the extra reads the holds have cost, plus what the smaller render saves over the coming calls (the horizon), exceed what writing it costs now',
  rank: 'place by USD over all the sessions, cheapest first; "1-N=" is the group of N configurations tied with the cheapest, shown as one row: the one that changes least from yours',
  '*': 'on the front of cost against context size: no configuration is both cheaper and smaller (a smaller context also postpones compaction)',
  '(yours)': 'your settings as pi-condense reads them (when pruning is off today: what they would cost switched on)',
  release: 'the pi-condense release: 2.4.3 or 2.9.1; none is no pruning',
  chains: 'chain compression (contextPrune.chainCompression): on; "on, keep final" keeps the final answer\'s thinking (stripFinalAssistantThinking false); off',
  'error purge': 'contextPrune.purgeErrors: "2 turns, 500+ chars" replaces the arguments of a failed tool call with a stub 2 turns after it failed, when they are 500 chars or more; off',
  grace: "contextPrune.recoveryGraceTurns: user turns a result that context_tree_query brought back stays whole before pi-condense stubs it again",
  'thinking strip': "contextPrune.thinkingStrip (2.4.3 only): \"keep 16\" strips the thinking of every turn but the last 16; off; - for 2.9.1, which has none",
  gate: 'condenseNative.gate, the cache-aware gate (docs/GATE.md): on; "on, 5 calls" with that horizon; off',
  any: 'every value of that setting ties in this group: it does not matter on these sessions',
  USD: "what the sessions' model calls cost with that configuration, priced as the provider bills pi's requests",
  'vs today': 'USD against what you pay today: your settings, or no pruning when pruning is off today',
  'chars sent': 'characters of context sent over all calls (UTF-16 units)',
  'held out': 'each session priced with the configuration chosen on the other sessions only, so the saving is not measured on the data it was chosen on',
};

/** The legend lines for the terms in `used` (in the order of TERMS). */
function legend(used) {
  const lines = [];
  for (const [term, text] of Object.entries(TERMS)) {
    if (used.has(term)) lines.push(`  ${term}: ${text}`);
  }
  return lines.length ? ['', 'What the terms mean:', ...lines] : [];
}

/** Adds the cause names of a cause label ("stub at a flush") to `used`. */
function useCause(label, used) {
  const flush = label.endsWith(' at a flush');
  used.add(flush ? label.slice(0, -' at a flush'.length) : label);
  if (flush) used.add('at a flush');
}

module.exports = { legend, useCause };
