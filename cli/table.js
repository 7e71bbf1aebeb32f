'use strict';

// The human report of a replay: the totals over every file (a row per
// policy), a table per file, and with --renders a row per model call.
// Policies are shown by label ("pi-condense 2.9.1 (yours)"), the user's
// release first after no pruning. Numbers are grouped by thousands; tokens
// and costs are rounded for reading (--json has them exact). Each table
// collects the terms it shows into `used`, for the legend (legend.js).

const { useCause } = require('./legend.js');

function group(n) {
  return Math.round(n).toLocaleString('en-US');
}

function plural(n, word) {
  return `${group(n)} ${word}${n === 1 ? '' : 's'}`;
}

function usd(n) {
  return `$${n.toFixed(n >= 100 ? 0 : n >= 1 ? 2 : 4)}`;
}

function ratio(x) {
  return x === null || !Number.isFinite(x) ? '-' : `${x.toFixed(3)}x`;
}

function pad(cells, widths, right) {
  return cells.map((c, i) => (right[i] ? String(c).padStart(widths[i]) : String(c).padEnd(widths[i]))).join('  ').trimEnd();
}

function grid(header, rows, right) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  return [pad(header, widths, right), pad(widths.map((w) => '-'.repeat(w)), widths, right), ...rows.map((r) => pad(r, widths, right))];
}

/** The stderr line for the lines a file's loader skipped (null: none). */
function skippedLine(name, skipped) {
  if (!skipped || skipped.count === 0) return null;
  return `${name}: ${plural(skipped.count, 'line')} skipped as pi skips them (not JSON, truncated, or an unknown entry type): line ${skipped.lines.join(', ')}${skipped.count > skipped.lines.length ? ', ...' : ''}`;
}

/** Policies in the order a user reads them: none, theirs, the rest. */
function ordered(policies) {
  const rank = (p) => (p.policy === 'none' ? 0 : p.yours ? 1 : 2);
  return policies.map((p, i) => [p, i]).sort((a, b) => rank(a[0]) - rank(b[0]) || a[1] - b[1]).map(([p]) => p);
}

const rewritesOf = (p) => p.callClasses.rewrite + p.callClasses.partial + p.callClasses.expired;

// pi's compactions under a policy, and the requests above the window it
// could not send: "1", "2 (3 over window)", "-".
function compactionsCell(c, over, used) {
  if (c === 0 && over === 0) return '-';
  used.add('compactions');
  if (over > 0) used.add('over window');
  return over > 0 ? `${group(c)} (${group(over)} over window)` : group(c);
}

// Thinking the API dropped under preserved thinking's prefix check: its
// tokens and the calls it left without it, or "-".
function droppedCell(d, used) {
  if (!d || d.blocks === 0) return '-';
  used.add('thinking dropped');
  return `${group(d.tokens)} tok, ${plural(d.calls, 'call')}`;
}

// What the invariant did under a policy, in the file tables and the
// totals alike (a policy is said the same of in both): `p` is a file's
// policy, or a total of one (`invariant.violations` the phases seen).
function invariantCell(p, used) {
  const inv = p.invariant;
  if (p.policy === 'none') return '-';
  // Behind the gate, history changes when the gate applies, flush or not.
  if (p.gate) {
    const reasons = ['cold', 'same', 'budget', 'pays'];
    for (const term of ['applied', 'held', ...reasons]) used.add(term);
    return `gate: ${p.gate.applies} applied (${reasons.map((r) => `${p.gate.reasons[r]} ${r}`).join(', ')}), ${p.gate.holds} held`;
  }
  used.add('invariant');
  if (inv.broken === 0) return `held (${plural(inv.checked, 'call')} checked)`;
  const tag = inv.flushGated ? 'BROKEN' : 'broken by design';
  const phases = [...new Set(inv.violations.map((v) => v.phase))].join(', ');
  return `${tag}: ${group(inv.broken)} of ${plural(inv.checked, 'call')} (${phases})`;
}

/** The causes of a policy, the `n` costliest, in a few words. */
function topCauses(causes, n, used) {
  const top = [...causes].sort((a, b) => b.costUsd - a.costUsd).slice(0, n);
  for (const c of top) useCause(c.cause, used);
  return top.map((c) => `${c.cause} ${usd(c.costUsd)}`).join(', ') || '-';
}

/**
 * Totals per policy over the replayed files: calls, USD, the ratio to no
 * pruning, rewrites, chars sent, causes summed by name; the invariant
 * (`invariant`: whether the policy promises it, calls checked, renders
 * that broke it, the phases that did; `invariantBroken`: the renders that
 * broke a promise) and the gate's applies and holds, summed as the file
 * tables show them.
 */
function totalsOf(results) {
  const byPolicy = new Map();
  for (const { result } of results) {
    for (const p of result.policies) {
      let t = byPolicy.get(p.policy);
      if (!t) {
        t = {
          policy: p.policy,
          label: p.label,
          yours: p.yours,
          files: 0,
          modelCalls: 0,
          costUsd: 0,
          charsSent: 0,
          rewrites: 0,
          warms: 0,
          warmCostUsd: 0,
          thinkingDropped: { blocks: 0, tokens: 0, calls: 0 },
          prefixCheck: false,
          parts: new Map(),
          compactions: 0,
          compactionCostUsd: 0,
          overWindow: 0,
          invariantBroken: 0,
          invariant: { flushGated: p.invariant.flushGated, checked: 0, broken: 0, phases: new Set() },
          gate: p.gate ? { applies: 0, holds: 0, reasons: {} } : null,
          causes: new Map(),
        };
        byPolicy.set(p.policy, t);
      }
      t.files++;
      t.modelCalls += result.modelCalls;
      t.costUsd += p.costUsd;
      t.charsSent += p.charsSent;
      t.rewrites += rewritesOf(p);
      t.warms += p.warms.count;
      for (const k of ['blocks', 'tokens', 'calls']) t.thinkingDropped[k] += p.thinkingDropped[k];
      t.prefixCheck = t.prefixCheck || result.models.some((m) => m.prefixCheck);
      t.warmCostUsd += p.warms.costUsd;
      for (const part of p.parts) t.parts.set(part.part, (t.parts.get(part.part) ?? 0) + part.costUsd);
      t.compactions += p.compactions;
      t.compactionCostUsd += p.compactionCostUsd;
      t.overWindow += p.overWindow;
      if (p.invariant.flushGated) t.invariantBroken += p.invariant.broken;
      t.invariant.checked += p.invariant.checked;
      t.invariant.broken += p.invariant.broken;
      for (const v of p.invariant.violations) t.invariant.phases.add(v.phase);
      if (t.gate && p.gate) {
        t.gate.applies += p.gate.applies;
        t.gate.holds += p.gate.holds;
        for (const [r, n] of Object.entries(p.gate.reasons)) t.gate.reasons[r] = (t.gate.reasons[r] ?? 0) + n;
      }
      for (const c of p.causes) {
        const have = t.causes.get(c.cause) ?? { cause: c.cause, calls: 0, tokensWritten: 0, costUsd: 0 };
        have.calls += c.calls;
        have.tokensWritten += c.tokensWritten;
        have.costUsd += c.costUsd;
        t.causes.set(c.cause, have);
      }
    }
  }
  const none = byPolicy.get('none');
  return [...byPolicy.values()].map((t) => ({
    ...t,
    costUsdVsNone: none && none.costUsd > 0 ? t.costUsd / none.costUsd : null,
    invariant: { ...t.invariant, phases: [...t.invariant.phases] },
    causes: [...t.causes.values()].sort((a, b) => b.costUsd - a.costUsd),
    parts: [...t.parts].map(([part, costUsd]) => ({ part, costUsd })),
  }));
}

// The parts of a policy's saving against no pruning (src/replay/parts.rs
// defines them and their JSON names), in words.
const PART_WORDS = {
  pruning: 'stubs, purges and chains',
  thinkingStrip: 'thinking strip',
  gate: 'gate holds',
  compactions: 'compactions',
  warms: 'cache warms',
};

/** "saves $0.13: stubs, purges and chains $0.13, ..." for a policy, or null for none. */
function partsLine(p, used) {
  if (p.policy === 'none' || !p.parts || p.parts.length === 0) return null;
  used.add('parts');
  const total = p.parts.reduce((a, x) => a + x.costUsd, 0);
  // pi's compactions and warms are named when they differ from no pruning's.
  const shown = p.parts.filter((x) => !['compactions', 'warms'].includes(x.part) || Math.abs(x.costUsd) >= 5e-5);
  const each = shown.map((x) => `${PART_WORDS[x.part] ?? x.part} ${signedUsd(x.costUsd)}`).join(', ');
  return `${p.label}: ${total >= 0 ? 'saves' : 'costs'} ${usd(Math.abs(total))} against no pruning: ${each}`;
}

// A saving as "$0.13", a cost as "-$0.02".
const signedUsd = (v) => (v < -5e-7 ? `-${usd(-v)}` : usd(Math.abs(v)));

/**
 * What the thinking strip's and the gate's savings rest on, per model,
 * when either saves anything: whether the provider keeps earlier turns'
 * thinking in the prompt it bills (pi-ai sends it back either way).
 */
function thinkingNotes(policies, models) {
  const rests = policies.some((p) => (p.parts ?? []).some((x) => (x.part === 'thinkingStrip' || x.part === 'gate') && Math.abs(x.costUsd) >= 0.005));
  if (!rests) return [];
  return models.map((m) =>
    m.keepsThinking
      ? `${m.model} keeps earlier turns' thinking in the prompt it bills (pi-ai sends it back): the thinking strip's saving, and the gate's holds of it, rest on that`
      : `${m.model} drops earlier turns' thinking before it bills the prompt: stripping it saves nothing there`,
  );
}

/** The totals table over several files. */
function totalsTable(totals, used) {
  used.add('x none');
  used.add('rewrites');
  const checks = totals.some((t) => t.prefixCheck);
  const rows = ordered(totals).map((t) => [
    t.label,
    group(t.modelCalls),
    usd(t.costUsd),
    ratio(t.costUsdVsNone),
    group(t.rewrites),
    compactionsCell(t.compactions, t.overWindow, used),
    ...(checks ? [droppedCell(t.thinkingDropped, used)] : []),
    group(t.charsSent),
    invariantCell({ ...t, invariant: { ...t.invariant, violations: t.invariant.phases.map((phase) => ({ phase })) } }, used),
    topCauses(t.causes, 3, used),
  ]);
  const header = ['policy', 'calls', 'USD', 'x none', 'rewrites', 'compactions', ...(checks ? ['thinking dropped'] : []), 'chars sent', 'invariant', 'costliest causes of rewrites'];
  const lines = grid(header, rows, header.map((h, i) => i > 0 && h !== 'invariant' && h !== 'costliest causes of rewrites'));
  const parts = ordered(totals).map((t) => partsLine(t, used)).filter((l) => l !== null);
  if (parts.length > 0) lines.push('', ...parts);
  return lines.join('\n');
}

/** The table of one replayed file, with its causes and calibration lines. */
function fileTable(name, r, used, { synthetic = false } = {}) {
  used.add('x none');
  used.add('rewrites');
  const policies = ordered(r.policies);
  // The thinking column where a model runs preserved thinking's prefix check.
  const checks = r.models.some((m) => m.prefixCheck);
  const rows = policies.map((p) => [
    p.label,
    usd(p.costUsd),
    ratio(p.costUsdVsNone),
    group(p.cacheWriteTokens),
    group(p.cacheReadTokens),
    group(rewritesOf(p)),
    compactionsCell(p.compactions, p.overWindow, used),
    ...(checks ? [droppedCell(p.thinkingDropped, used)] : []),
    group(p.charsSent),
    invariantCell(p, used),
  ]);
  const lines = [`${name}: ${plural(r.modelCalls, 'model call')}`, ''];
  const header = ['policy', 'USD', 'x none', 'cache-write tok', 'cache-read tok', 'rewrites', 'compactions', ...(checks ? ['thinking dropped'] : []), 'chars sent', 'flush-gated invariant'];
  lines.push(...grid(header, rows, header.map((h, i) => i > 0 && h !== 'flush-gated invariant')));
  const boundaries = policies.filter((p) => p.thinkingBoundary);
  for (const p of boundaries) lines.push(`${p.label}: thinking boundary ${p.thinkingBoundary.rule === 'recorded' ? 'as recorded' : "from the config's keepLastTurns"} (${p.thinkingBoundary.reason})`);
  if (r.cacheModel === 'provider') {
    lines.push('');
    for (const p of policies) {
      if (p.causes.length === 0 && p.warms.count === 0 && p.compactions === 0 && p.thinkingDropped.blocks === 0) continue;
      lines.push(`${p.label}: what rewrote the cache (tokens written beyond the appended messages)`);
      for (const c of p.causes) {
        useCause(c.cause, used);
        lines.push(`    ${c.cause.padEnd(30)} ${plural(c.calls, 'call').padStart(11)} ${group(c.tokensWritten).padStart(12)} tok ${usd(c.costUsd).padStart(10)}`);
      }
      if (p.warms.count > 0) {
        used.add('warms');
        lines.push(`    ${"pi's cache warms".padEnd(30)} ${plural(p.warms.count, 'call').padStart(11)} ${''.padStart(16)} ${usd(p.warms.costUsd).padStart(10)} (in the USD above)`);
      }
      if (p.thinkingDropped.blocks > 0) {
        used.add('thinking dropped');
        const d = p.thinkingDropped;
        lines.push(`    ${'thinking dropped after a rewrite'.padEnd(30)} ${plural(d.calls, 'call').padStart(11)} ${group(d.tokens).padStart(12)} tok ${''.padStart(10)} (not billed: reasoning the model no longer saw)`);
      }
      if (p.compactions > 0) {
        used.add('compactions');
        lines.push(`    ${"pi's compaction summaries".padEnd(30)} ${plural(p.compactions, 'compaction').padStart(11)} ${''.padStart(16)} ${usd(p.compactionCostUsd).padStart(10)} (in the USD above)`);
      }
      const none = policies.find((q) => q.policy === 'none');
      if (none && p.policy !== 'none' && p.compactions !== none.compactions) {
        used.add('compactions');
        const d = p.compactions - none.compactions;
        lines.push(`    ${`${plural(Math.abs(d), 'compaction')} ${d > 0 ? 'more' : 'fewer'} than no pruning`}`);
      }
    }
  }
  const parts = policies.map((p) => partsLine(p, used)).filter((l) => l !== null);
  if (parts.length > 0) lines.push('', ...parts, ...thinkingNotes(policies, r.models));
  lines.push('');
  for (const m of r.models) {
    const calib = m.calibration === 'default' ? 'default' : `${m.calibration}, ${plural(m.calls, 'call')}`;
    lines.push(`model ${m.model}${m.inCatalog ? '' : " (not in pi-ai's catalog: default prices)"}: ${m.charsPerToken.toFixed(2)} chars per token (${calib})`);
  }
  const rec = r.recorded;
  if (rec.status === 'matched') {
    const none = r.policies.find((p) => p.policy === rec.policy);
    // What the total adds to the calls the usage records: pi's warms and
    // its compactions' summaries.
    const adds = none ? [none.warms.count > 0 ? `pi's cache warms, ${usd(none.warms.costUsd)}` : null, none.compactions > 0 ? `pi's compaction summaries, ${usd(none.compactionCostUsd)}` : null].filter(Boolean) : [];
    const warms = adds.length > 0 ? `; the ${usd(none.costUsd)} of ${rec.policy === 'none' ? 'no pruning' : rec.policy} above adds ${adds.join(' and ')}` : '';
    lines.push(
      `against the usage pi recorded (policy ${rec.policy}, ${plural(rec.calls, 'call')}): ${(100 * rec.classMatch).toFixed(1)}% of calls in the recorded class; ` +
        `cost ${usd(rec.predictedCostUsd)} predicted vs ${usd(rec.recordedCostUsd)} recorded (${(100 * rec.costError).toFixed(1)}%)${warms}`,
    );
    if (synthetic) lines.push("  (this file's usage is synthetic, made by this same cost model: the match shows the replay is consistent, not that it is right; sample/README.md)");
  } else if (rec.status === 'unreconciled') {
    lines.push(`the usage pi recorded could not be reconciled: ${rec.reason}`);
  } else {
    lines.push('the session records no usage to check the model against');
  }
  const w = rec.warms;
  if (w && (w.recorded > 0 || w.simulated > 0)) {
    used.add('warms');
    lines.push(
      `pi's cache warmer (${r.cacheWarming}), simulated for each policy: ${plural(w.simulated, 'warm')} under ${rec.policy === 'none' ? 'no pruning' : rec.policy}, ` +
        (w.recorded === 0 ? 'the file records none' : `the file records ${w.recorded}, ${w.matched} of them at a simulated one's time (within the warmer's 15 s slack)`),
    );
  }
  for (const p of policies) {
    for (const v of p.invariant.violations.slice(0, p.invariant.flushGated ? 5 : 0)) {
      lines.push(`  ${p.label}: model call ${v.render}, output message ${v.outputIndex}: ${v.phase}: ${v.detail}`);
    }
    if (p.invariant.flushGated && p.invariant.violations.length > 5) {
      lines.push(`  ${p.label}: ... ${p.invariant.broken - 5} more (--json lists them)`);
    }
  }
  return lines.join('\n');
}

/** One row per model call: context chars, and per policy chars after / tokens written. */
function rendersTable(r) {
  const policies = ordered(r.policies).filter((p) => p.renders);
  if (policies.length === 0) return '';
  const header = ['call', 'context chars', ...policies.map((p) => `${p.policy} chars/write tok`)];
  const rows = policies[0].renders.map((first, k) => [
    k,
    group(first.charsBefore),
    ...policies.map((p) => {
      const x = p.renders[k];
      return `${group(x.charsAfter)}/${group(x.cacheWriteTokens)}${x.callClass === 'expired' ? ' (expired)' : ''}`;
    }),
  ]);
  return grid(header, rows, header.map(() => true)).join('\n');
}

module.exports = { skippedLine, grid, fileTable, rendersTable, totalsTable, totalsOf, usd, group, plural };
