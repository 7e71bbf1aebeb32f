'use strict';

// The help of each command, and the reference of every field its --json
// prints with the field's unit (`--help --json`). docs/REPLAY.md "The
// result" lists the same fields; __test__/cli.test.js holds this page
// against a real --json document, so a field added to one and not the
// other fails the tests.

const { FLAGS } = require('./flags.js');

const NAME = 'condense-native';

function flagList(command) {
  return FLAGS.filter((f) => f.commands.includes(command))
    .map((f) => {
      const names = [f.short, f.name].filter(Boolean).join(', ') + (f.value ? ` ${f.value}` : '');
      return `  ${names}\n      ${f.help}`;
    })
    .join('\n');
}

const WHERE = `Settings: without --config, the contextPrune block of pi's settings.json in
the agent directory ($PI_CODING_AGENT_DIR, else ~/.pi/agent), the one file
pi-condense reads, merged over the release's defaults; the release is the
pi-condense that pi would load (from the packages of pi's settings files),
else 2.4.3. The report says where each came from.`;

const TEXT = {
  replay: `Usage: ${NAME} replay [FLAGS] [session.jsonl | DIR]...

Does pruning save you money? Replays every model call of each pi session
file (a directory: every *.jsonl under it, links followed as pi follows
them; no path: the bundled sample) as
pi-condense would have rendered it, under each pruning policy, and prices
each call as the provider bills pi's request (prompt-cache reads, writes and
expiry, pi-ai's catalog prices). With several files the totals come first.

Policies: none (no pruning), config (pi-condense 2.4.3 with your settings),
no-thinking-strip and live-thinking-strip (2.4.3 variants), 2.9.1
(pi-condense 2.9.1 with your settings). The table shows them by what they
are; the release you run is marked "(yours)" and comes right after none.

${WHERE}

Flags:
${flagList('replay')}

Exit status:
  0  every file was replayed, and pi-condense's flush-gated invariant held
     (history changed only at flushes) under your release; a policy
     compared with it that broke it is listed, and does not change the
     status;
  1  every file was replayed, and a render of your release broke that
     invariant (listed under the file's table: a bug of that release, or a
     session state the file does not explain);
  2  a usage error, or some file could not be replayed (each named on
     stderr with its line; the other files are still replayed).

Output: the report on stdout; errors, warnings and skipped-line counts on
stderr, each starting with "${NAME}:". --help --json lists the fields of
the JSON document.

Other commands: ${NAME} tune (which settings should I run?), ${NAME}
pi-setup (the settings entry pi needs to load condense-native; its own
--help).`,
  tune: `Usage: ${NAME} tune [FLAGS] [session.jsonl | DIR]...

Which settings should you run? Replays the session files under a grid of
pi-condense's render-time settings (both releases, chain compression, error
purge, recovery grace, the 2.4.3 thinking strip, and no pruning; each
also behind the cache-aware gate), prices each as the provider bills it,
and recommends the cheapest: of those within a cent (or 0.1%) of it, which
tie, the one that changes least from yours. The same files in any order
give the same answer. It says what each change saves against what you pay
today (no pruning while pi-condense is off), checks the choice with each
file left out in turn (two files or more), and prints what to set in the
settings file yours came from: only what changes, pruning switched on when
it is off, and condenseNative.gate when the gate is part of it. A legend
explains every column.

Your current settings are priced exactly as '${NAME} replay' prices the
same release and settings: both print the same USD.

${WHERE}

Flags:
${flagList('tune')}

Exit status:
  0  the files were tuned;
  2  a usage error, or some file could not be read (each named on stderr;
     the others are still tuned).

Output: the report on stdout; errors and warnings on stderr, each starting
with "${NAME}:". --help --json lists the fields of the JSON document.`,
};

// Every field of each command's --json document: [path, unit or meaning].
const FIELDS = {
  replay: [
    ['settings.config', 'where the settings came from (a path, or the defaults)'],
    ['settings.release', "the pi-condense release marked yours: '2.4.3' or '2.9.1'"],
    ['settings.releaseSource', 'where the release came from'],
    ['settings.enabled', "pi-condense's master switch in those settings (boolean; null with --config)"],
    ['totals[]', 'one per policy, summed over the replayed files'],
    ['totals[].policy', 'the policy name (none, config, no-thinking-strip, live-thinking-strip, 2.9.1; config+gate, 2.9.1+gate when asked for)'],
    ['totals[].label', 'what it is, in words ("pi-condense 2.9.1 (yours)")'],
    ['totals[].yours', 'boolean: the release and settings you run'],
    ['totals[].files', 'count of files'],
    ['totals[].modelCalls', 'count of model calls'],
    ['totals[].costUsd', 'USD, as the provider bills the calls (pi cache warms included)'],
    ['totals[].costUsdVsNone', 'ratio to policy none (null when none costs nothing)'],
    ['totals[].charsSent', 'UTF-16 code units of JSON sent (JSON.stringify of the messages), summed over calls'],
    ['totals[].rewrites', 'count of calls of class rewrite, partial or expired'],
    ['totals[].warms', "count of pi's cache warms (simulated per policy)"],
    ['totals[].warmCostUsd', "USD of pi's cache warms"],
    ['totals[].thinkingDropped', "{blocks, tokens, calls}: thinking the provider dropped under preserved thinking's prefix check, summed over the files"],
    ['totals[].prefixCheck', "boolean: a file's model runs preserved thinking's prefix check"],
    ['totals[].parts[]', '{part (pruning|thinkingStrip|gate|compactions|warms), costUsd (USD saved against none; negative: costs more)}, summed over the files'],
    ['totals[].invariantBroken', 'count of renders that broke the flush-gated invariant (policies that promise it)'],
    ['totals[].invariant', '{flushGated (boolean: the policy promises it), checked (count of calls), broken (count of renders, by design where not promised), phases[] (names)}'],
    ['totals[].gate', 'null, or on the +gate policies {applies, holds} (counts of calls)'],
    ['totals[].causes[]', '{cause, calls (count), tokensWritten (tokens), costUsd (USD)}, costliest first'],
    ['files[]', "one per replayed file: replay()'s result with the file name"],
    ['files[].file', 'the path as given'],
    ['files[].modelCalls', 'count of model calls on the active branch'],
    ['files[].cacheModel', "'provider' or 'prefix'"],
    ['files[].retention', "'short' (5 min) or 'long' (1 h)"],
    ['files[].skippedLines', '{count, lines[]}: lines pi skips too (not JSON, truncated, unknown entry type), 1-based line numbers'],
    ['files[].cacheWarming', "pi's cacheWarming mode the warms were simulated in: idle (pi's default), streaming or off"],
    ['files[].models[]', '{model, inCatalog, keepsThinking (boolean: the provider bills earlier turns\' thinking), prefixCheck (boolean: it runs preserved thinking\'s prefix check), charsPerToken (UTF-16 units per token), preambleTokens (tokens), calibration, calls (count), fitError (fraction)}'],
    ['files[].recorded', '{policy, status (matched|unreconciled|noUsage), reason, calls (count), classMatch (fraction), recordedCostUsd (USD), predictedCostUsd (USD, warms excluded), costError (fraction), warms {recorded, simulated, matched} (counts: the warms the file recorded, those simulated for the recorded policy, the recorded ones simulated within the warmer\'s slack)}'],
    ['files[].prefix', "only with --cache-model prefix: {charsPerToken, inputPrice (price unit per token), cacheWriteMultiplier, cacheReadMultiplier, cacheTtlSeconds (s)}"],
    ['files[].policies[].policy', 'the policy name'],
    ['files[].policies[].label', 'what it is, in words'],
    ['files[].policies[].yours', 'boolean'],
    ['files[].policies[].config', 'the render config it ran with (null for none)'],
    ['files[].policies[].thinkingBoundary', "null, or {rule: 'recorded'|'config', reason}: where 2.4.3's thinking boundary came from"],
    ['files[].policies[].charsSent', 'UTF-16 code units sent, summed over calls'],
    ['files[].policies[].costUsd', 'USD'],
    ['files[].policies[].costUsdVsNone', 'ratio to none (null when none costs nothing)'],
    ['files[].policies[].inputTokens', 'tokens billed at the input price'],
    ['files[].policies[].cacheReadTokens', 'tokens billed as cache reads'],
    ['files[].policies[].cacheWriteTokens', 'tokens billed as cache writes'],
    ['files[].policies[].parts[]', '{part (pruning|thinkingStrip|gate|compactions|warms), costUsd (USD saved against none; negative: costs more)}: they sum to none\'s costUsd less this one\'s; empty for none'],
    ['files[].policies[].warms', "{count, costUsd (USD)}: pi's cache warms of this policy's own requests (simulated)"],
    ['files[].policies[].thinkingDropped', "{blocks, tokens, calls}: thinking the provider dropped under preserved thinking's prefix check (not billed; reasoning the model no longer saw)"],
    ['files[].policies[].compactions', "count of pi's compactions"],
    ['files[].policies[].compactionCostUsd', 'USD of their summarization requests'],
    ['files[].policies[].overWindow', "count of requests above the model's context window (not priced)"],
    ['files[].policies[].callClasses', '{first, append, partial, rewrite, expired}: counts of calls'],
    ['files[].policies[].causes[]', '{cause, calls (count), tokensWritten (tokens), costUsd (USD)}'],
    ['files[].policies[].invariant', '{flushGated (boolean), checked (count), broken (count), violations[] {render, outputIndex, inputIndex, phase, detail}}'],
    ['files[].policies[].gate', "only on the +gate policies: {horizon ('auto' or calls), budget (fraction of the context window), applies, holds (counts of calls), reasons {cold, budget, pays, same, waits} (counts of calls)}"],
    ['files[].policies[].prefix', 'only with --cache-model prefix: {inputTokens, cacheReadTokens, cacheWriteTokens (tokens at charsPerToken), cacheReadChars, cacheWriteChars (UTF-16 units), cost (price units), costVsNone (ratio)}'],
    ['files[].policies[].renders[]', 'with --renders, one per model call: charsBefore, charsAfter (UTF-16 units), messagesBefore, messagesAfter (counts), breakIndex (message index), prefixHash, outputHash (16 hex digits), entryId, leafId, timestamp (ms since the epoch), compactions (count), warms[] (ms since the epoch: pi\'s warms before the call), stats (counts per phase), inputTokens, cacheReadTokens, cacheWriteTokens (tokens), costUsd (USD), cacheReadMessages (count), callClass, overWindow (boolean), thinkingDropped {blocks, tokens}, rewriteCause {cause, flush, gapSeconds (s)}; gate (apply|hold) and gateReason on the +gate policies (what was sent: --contexts DIR); prefix {cacheReadChars, cacheWriteChars, cacheExpired} with --cache-model prefix'],
    ['errors[]', '{file, error: {code, message, line}}: files that could not be replayed'],
    ['summary', '{files (count), failed (count), modelCalls (count), invariantBroken (count, every policy that promises the invariant; the exit status counts only yours), elapsedMs (ms)}'],
  ],
  tune: [
    ['settings', 'as in replay, and file: the settings file they came from (--config, or the one pi-condense reads, present or not): {config, file, release, releaseSource, enabled}'],
    ['files[]', 'the paths tuned'],
    ['modelCalls', 'count of model calls over the files'],
    ['held[]', 'the settings held at what the sessions recorded'],
    ['today', "{pruningOn (boolean: pi-condense's contextPrune.enabled is true), costUsd (USD)}: what you pay today, your settings, or no pruning when pruning is off; savings are against it"],
    ['current', "{release, contextPrune, gate, costUsd (USD), charsSent (UTF-16 units), thinkingBoundary}: your settings (switched on)"],
    ['recommended', '{release, contextPrune, gate, costUsd (USD), charsSent, saving (fraction of today), savingSpread {min, median, max} (fractions, per file)}: the choice of the configurations tied with the cheapest, the same for any order of the files'],
    ['recommended.ties', '{count (configurations within withinUsd of the cheapest), withinUsd (USD: a cent, or 0.1% when more), free[] (parts that do not matter on these sessions: release, thinkingStrip, purgeErrors, chainCompression, recoveryGraceTurns, gate)}'],
    ['recommended.changes[]', '{parts[] (enabled: the master switch, or the parts above), costUsd (USD after the step), savingUsd (USD saved by the step, all files)}: from today to the recommendation, a part at a time'],
    ['recommended.paste', 'null (nothing to change), or {settings {contextPrune (the keys that change), condenseNative {gate} when gated}, release (to run, when not yours; or null), turnsPruning (on|off|null), file (the settings file to set them in)}'],
    ['ranked[]', '{release, contextPrune, gate, costUsd (USD), charsSent (UTF-16 units), rewrites (count), front (boolean), tied (boolean: within ties.withinUsd of the first), current (boolean), perFileCostUsd[] (USD), causes[] {cause, calls, costUsd}}, cheapest first'],
    ['heldOut', 'null (one file), or leave one file out: {perFile[] {file, chosen {release, contextPrune, gate} (chosen on the other files), saving (fraction), costUsd, todayUsd (USD, on this file), todayTied (boolean: the other files tie the configuration of today with their cheapest)}, saving (fraction), savingUsd, todayUsd, withinUsd (USD), savingSpread {min, median, max}, filesSaving (count), keepYours (null, not above zero, too small to tell)}'],
    ['perFile[]', '{file, modelCalls (count), noneUsd, currentUsd, todayUsd, recommendedUsd (USD), skippedLines}'],
    ['errors[]', '{file, error: {code, message, line}}: files left out'],
  ],
};

function helpText(command) {
  return TEXT[command] ?? TEXT.replay;
}

function jsonHelp(command) {
  const fields = FIELDS[command] ?? FIELDS.replay;
  const width = Math.max(...fields.map(([f]) => f.length));
  return [`The fields of '${NAME} ${command} --json' (one JSON document on stdout):`, '', ...fields.map(([f, u]) => `  ${f.padEnd(width)}  ${u}`)].join('\n');
}

module.exports = { helpText, jsonHelp, FIELDS };
