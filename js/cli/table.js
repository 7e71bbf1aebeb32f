'use strict';

// The human report of a replay: one table per session file, a row per
// policy, and with --renders a row per model call. Numbers are grouped by
// thousands; tokens and costs are rounded for reading (--json has them
// exact).

function group(n) {
  return Math.round(n).toLocaleString('en-US');
}

function pad(cells, widths, right) {
  return cells.map((c, i) => (right[i] ? String(c).padStart(widths[i]) : String(c).padEnd(widths[i]))).join('  ').trimEnd();
}

function grid(header, rows, right) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  return [pad(header, widths, right), pad(widths.map((w) => '-'.repeat(w)), widths, right), ...rows.map((r) => pad(r, widths, right))];
}

function invariantCell(p) {
  const inv = p.invariant;
  if (p.policy === 'none') return '-';
  if (inv.broken === 0) return `held (${inv.checked} checked)`;
  const tag = inv.flushGated ? 'BROKEN' : 'broken by design';
  const phases = [...new Set(inv.violations.map((v) => v.phase))].join(', ');
  return `${tag}: ${inv.broken} of ${inv.checked} (${phases})`;
}

function usd(n) {
  return `$${n.toFixed(n >= 100 ? 0 : n >= 1 ? 2 : 4)}`;
}

/** The table of one replayed file. */
function fileTable(name, r) {
  const none = r.policies.find((p) => p.policy === 'none');
  const provider = r.cacheModel === 'provider';
  const rows = r.policies.map((p) => [
    p.policy,
    group(p.charsSent),
    none && none.charsSent ? `${((100 * p.charsSent) / none.charsSent).toFixed(1)}%` : '-',
    group(p.billedCacheWriteTokens),
    group(p.billedCacheReadTokens),
    usd(p.costUsd),
    p.costUsdVsNone === null ? '-' : `${p.costUsdVsNone.toFixed(3)}x`,
    `${p.callClasses.rewrite + p.callClasses.partial + p.callClasses.expired}`,
    invariantCell(p),
  ]);
  const lines = [`${name}: ${r.modelCalls} model calls, priced with the ${r.cacheModel} cache model (${r.retention} retention)`, ''];
  lines.push(
    ...grid(
      ['policy', 'chars sent', 'of none', 'cache-write tok', 'cache-read tok', 'USD', 'vs none', 'rewrites', 'flush-gated invariant'],
      rows,
      [false, true, true, true, true, true, true, true, false],
    ),
  );
  if (provider) {
    lines.push('');
    for (const p of r.policies) {
      if (p.causes.length === 0) continue;
      lines.push(`${p.policy}: what rewrote the cache (tokens written beyond the appended tail)`);
      for (const c of p.causes) {
        lines.push(`    ${c.cause.padEnd(30)} ${String(c.calls).padStart(5)} calls ${group(c.tokensWritten).padStart(12)} tok ${usd(c.costUsd).padStart(10)}`);
      }
      if (p.warms > 0) lines.push(`    (pi's cache warms: ${p.warms}, ${usd(p.warmCostUsd)})`);
    }
  }
  lines.push('');
  for (const m of r.models) {
    const calib = m.calibration === 'default' ? 'default' : `${m.calibration}, ${m.calls} calls`;
    lines.push(`model ${m.model}${m.inCatalog ? '' : ' (not in pi-ai\'s catalog: default prices)'}: ${m.charsPerToken.toFixed(2)} chars per token (${calib})`);
  }
  const rec = r.recorded;
  if (rec.status === 'matched') {
    lines.push(
      `against the usage pi recorded (policy ${rec.policy}, ${rec.calls} calls): ${(100 * rec.classMatch).toFixed(1)}% of calls in the recorded class; ` +
        `cost ${usd(rec.predictedCostUsd)} predicted vs ${usd(rec.recordedCostUsd)} recorded (${(100 * rec.costError).toFixed(1)}%)`,
    );
  } else if (rec.status === 'unreconciled') {
    lines.push(`the usage pi recorded could not be reconciled: ${rec.reason}`);
  } else {
    lines.push('the session records no usage to check the model against');
  }
  for (const p of r.policies) {
    for (const v of p.invariant.violations.slice(0, p.invariant.flushGated ? 5 : 0)) {
      lines.push(`  ${p.policy}: model call ${v.render}, output message ${v.outputIndex}: ${v.phase}: ${v.detail}`);
    }
    if (p.invariant.flushGated && p.invariant.violations.length > 5) {
      lines.push(`  ${p.policy}: ... ${p.invariant.broken - 5} more (--json lists them)`);
    }
  }
  return lines.join('\n');
}

/** One row per model call: chars before, and per policy chars after / written. */
function rendersTable(r) {
  const policies = r.policies.filter((p) => p.renders);
  if (policies.length === 0) return '';
  const header = ['call', 'context chars', ...policies.map((p) => `${p.policy} after/write`)];
  const rows = policies[0].renders.map((first, k) => [
    k,
    group(first.charsBefore),
    ...policies.map((p) => {
      const x = p.renders[k];
      return `${group(x.charsAfter)}/${group(x.cacheWriteChars)}${x.cacheExpired ? ' (expired)' : ''}`;
    }),
  ]);
  return grid(header, rows, header.map(() => true)).join('\n');
}

module.exports = { fileTable, rendersTable };
