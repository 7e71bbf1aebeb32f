'use strict';

// The words a report uses, each explained once for a pi user: a legend
// under a table lists the terms that table shows, one line each. The cause
// names are the replay's (src/replay/bill.rs, `Cause::kind`).

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
  warms: "pi's cache warms: requests pi sends during a long pause to keep the cache alive, billed with no answer",
  invariant:
    "pi-condense's promise that history changes only at a flush; BROKEN names a render that changed an earlier message between flushes (exit status 1 when it is your release's), a bug in that release or a state the session file does not explain; broken by design: a variant that does not promise it",
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

module.exports = { legend, useCause, TERMS };
