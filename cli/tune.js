'use strict';

// `condense-native tune [session.jsonl | DIR]...`: which pi-condense
// settings to run, from the user's own sessions. Prints the ranked
// configurations (those tied with the cheapest as one row), the
// recommendation with what each of its changes saves against what the user
// pays today, the leave-one-file-out check, what to set in pi's
// settings.json (naming the file the settings came from), and a legend;
// --json prints tune()'s result with `settings`, `errors` and the file the
// paste block goes to; --svg the cost/size front. Same CLI contract as
// replay (main.js). The figures and every choice are the tune's
// (src/tune/): this file only words them.

const fs = require('node:fs');

const { makeProgress } = require('./progress.js');
const { skippedLine, grid, group, usd } = require('./table.js');
const { legend } = require('./legend.js');
const { shown: shownPath } = require('./user-settings.js');

// The parts of a configuration, as src/tune/explain.rs names them, with
// the table's words for them (the legend explains each).
const PARTS = ['release', 'chainCompression', 'purgeErrors', 'recoveryGraceTurns', 'thinkingStrip', 'gate'];
const LABEL = { enabled: 'pruning', release: 'release', chainCompression: 'chains', purgeErrors: 'error purge', recoveryGraceTurns: 'grace', thinkingStrip: 'thinking strip', gate: 'gate' };

function pct(x) {
  return `${(100 * x).toFixed(1)}%`;
}

/** Each part of a configuration in the table's words. */
function cells(r) {
  if (r.release === 'none') return { release: 'none', chainCompression: '-', purgeErrors: '-', recoveryGraceTurns: '-', thinkingStrip: '-', gate: '-' };
  const b = r.contextPrune;
  return {
    release: r.release,
    chainCompression: b.chainCompression.enabled ? (b.chainCompression.stripFinalAssistantThinking ? 'on' : 'on, keep final') : 'off',
    purgeErrors: b.purgeErrors.enabled ? `${b.purgeErrors.cooldownTurns} turn${b.purgeErrors.cooldownTurns === 1 ? '' : 's'}, ${b.purgeErrors.minArgChars}+ chars` : 'off',
    recoveryGraceTurns: String(b.recoveryGraceTurns),
    thinkingStrip: r.release === '2.9.1' ? '-' : b.thinkingStrip && b.thinkingStrip.enabled ? `keep ${b.thinkingStrip.keepLastTurns}` : 'off',
    gate: r.gate ? (r.gate.horizon === 'auto' ? 'on' : `on, ${r.gate.horizon} calls`) : 'off',
  };
}

/** The table's cells of a configuration, in column order. */
function describe(r) {
  const c = cells(r);
  return PARTS.map((p) => c[p]);
}

/** A configuration in a sentence, each part named but those in `free`. */
function sentence(r, free = []) {
  if (r.release === 'none') return 'no pruning';
  const c = cells(r);
  const parts = PARTS.filter((p) => p !== 'gate' && c[p] !== '-' && !free.includes(p)).map((p) => `${LABEL[p]} ${c[p]}`);
  if (r.gate) parts.push(`behind the cache-aware gate${r.gate.horizon === 'auto' ? '' : ` (horizon ${r.gate.horizon} calls)`}`);
  return parts.join(', ');
}

/** "a, b and c". */
function words(list) {
  return list.length <= 1 ? list.join('') : `${list.slice(0, -1).join(', ')} and ${list[list.length - 1]}`;
}

/** A step of the walk from today to the recommendation, in words. */
function stepText(step, t) {
  const from = cells(t.current);
  const to = cells(t.recommended);
  return step.parts
    .map((p) => {
      if (p === 'enabled') return t.recommended.release === 'none' ? 'pruning on -> off' : 'pruning off -> on, with your settings';
      return `${LABEL[p]} ${from[p]} -> ${to[p]}`;
    })
    .join(', ');
}

/** Why pruning is off today, from where the settings came. */
function whyOff(settings) {
  if (!settings || !settings.file) return "pi-condense's master switch, contextPrune.enabled, is not true";
  const file = settings.source && settings.source.startsWith('--config') ? settings.source : shownPath(settings.file);
  if (settings.exists === false) return `there is no ${file}, and pi-condense is off by default`;
  if (settings.config === null) return `${file} has no contextPrune block, and pi-condense is off by default`;
  return `contextPrune.enabled is not true in ${file}`;
}

/** Whether a ranked configuration drops thinking (its column is shown). */
const droppingAny = (t) => t.ranked.some((r) => r.thinkingDropped && r.thinkingDropped.blocks > 0);

/** The table's rows: the tied group as one row, then the rest. */
function rankRows(t, rows, used) {
  const tied = t.recommended.ties.count;
  const free = new Set(t.recommended.ties.free);
  const key = (r) => JSON.stringify([r.release, r.contextPrune, r.gate]);
  const rec = t.ranked.find((r) => key(r) === key(t.recommended));
  const cur = t.today.costUsd;
  // The dropped reasoning, where a configuration drops any (preserved
  // thinking's prefix check).
  const dropping = droppingAny(t);
  const row = (label, r, c) => [
    label + (r.front ? '*' : '') + (r.current ? ' (yours)' : ''),
    ...c,
    usd(r.costUsd),
    cur > 0 ? pct(r.costUsd / cur - 1) : '-',
    group(r.charsSent),
    group(r.rewrites),
    ...(dropping ? [r.thinkingDropped.blocks > 0 ? `${group(r.thinkingDropped.tokens)} tok` : '-'] : []),
  ];
  const first = cells(rec);
  for (const p of free) first[p] = 'any';
  if (free.size) used.add('any');
  const out = [row(tied > 1 ? `1-${tied}=` : '1', rec, PARTS.map((p) => first[p]))];
  t.ranked.slice(tied, tied + rows - 1).forEach((r, i) => out.push(row(String(tied + i + 1), r, describe(r))));
  if (t.ranked.slice(0, tied + rows - 1).some((r) => r.front)) used.add('*');
  return out;
}

/** The human report of a tune. */
function tuneTable(t, { settings, cacheModel = 'provider', rows = 15, gateOff = false } = {}) {
  const used = new Set(['rank', 'release', 'chains', 'error purge', 'grace', 'thinking strip', 'gate', 'USD', 'vs today', 'chars sent', 'rewrites']);
  const rec = t.recommended;
  const today = t.today;
  const model = cacheModel === 'prefix' ? 'priced with the prefix rule' : 'priced as the provider bills them';
  const lines = [];
  if (settings) lines.push(`settings: ${settings.source}; ${settings.releaseSource}`);
  lines.push(
    `${t.files.length} session file${t.files.length === 1 ? '' : 's'}, ${group(t.modelCalls)} model calls, ${t.ranked.length} configurations ${model}` +
      (t.errors && t.errors.length ? `; ${t.errors.length} file${t.errors.length === 1 ? '' : 's'} left out (named on stderr)` : ''),
  );
  if (gateOff) lines.push('The gate is switched off (--gate "enabled": false): no configuration is ranked behind it.');
  lines.push('');
  const header = ['rank', 'release', 'chains', 'error purge', 'grace', 'thinking strip', 'gate', 'USD', 'vs today', 'chars sent', 'rewrites', ...(droppingAny(t) ? ['thinking dropped'] : [])];
  if (droppingAny(t)) used.add('thinking dropped');
  lines.push(...grid(header, rankRows(t, rows, used), header.map((h, i) => i === 4 || i >= 7)));
  const tied = rec.ties.count;
  const yoursAt = t.ranked.findIndex((r) => r.current);
  used.add('(yours)');
  if (yoursAt >= tied + rows - 1) {
    const r = t.ranked[yoursAt];
    lines.push(`${yoursAt + 1} (yours): ${sentence(r)}: ${usd(r.costUsd)}`);
  }
  if (tied > 1) {
    const free = rec.ties.free.map((p) => LABEL[p]);
    lines.push(
      `1-${tied}=: ${tied} configurations cost within ${usd(rec.ties.withinUsd)} of the cheapest (${usd(t.ranked[0].costUsd)} to ${usd(t.ranked[tied - 1].costUsd)}): a tie` +
        (free.length ? `; ${words(free)} ${free.length === 1 ? 'does' : 'do'} not matter on these sessions` : '') +
        '; the row shows the one that changes least from yours.',
    );
  }
  lines.push('');
  if (t.current.thinkingBoundary) lines.push(`Yours: thinking boundary ${t.current.thinkingBoundary.rule === 'recorded' ? 'as recorded' : "from the config's keepLastTurns"} (${t.current.thinkingBoundary.reason}); 'condense-native replay' prices it the same.`);
  if (!today.pruningOn) {
    lines.push(`Pruning is off today (${whyOff(settings)}): pi sends these sessions unpruned, ${usd(today.costUsd)}; "(yours)" is what your settings would cost switched on, ${usd(t.current.costUsd)}.`);
  }
  const todayIs = today.pruningOn ? 'your settings' : 'no pruning';
  const paste = rec.paste;
  if (rec.release === 'none') {
    lines.push(
      today.pruningOn
        ? `Recommended: no pruning: ${usd(rec.costUsd)}, ${pct(rec.saving)} less than today (${usd(today.costUsd)}, ${todayIs}): pi-condense costs more than it saves on these sessions.`
        : `Recommended: keep pruning off: no pruning is the cheapest on these sessions (${usd(rec.costUsd)}).`,
    );
  } else if (!paste) {
    lines.push(`Recommended: keep your settings (${usd(rec.costUsd)}): nothing costs more than ${usd(rec.ties.withinUsd)} less on these sessions.`);
  } else {
    const free = rec.ties.free.filter((p) => p !== 'gate' || !rec.gate);
    const yoursFor = free.length ? ` (${words(free.map((p) => LABEL[p]))} as yours: ${free.length === 1 ? 'it does' : 'they do'} not matter)` : '';
    lines.push(`Recommended: ${sentence(rec, free)}${yoursFor}: ${usd(rec.costUsd)}, ${pct(rec.saving)} less than today (${usd(today.costUsd)}, ${todayIs}).`);
  }
  // Reasoning the recommendation drops that today's configuration keeps
  // (preserved thinking): said, never left to the table.
  const todayRun = today.pruningOn ? t.current : t.ranked.find((r) => r.release === 'none');
  const lost = rec.thinkingDropped && todayRun && todayRun.thinkingDropped ? rec.thinkingDropped.tokens - todayRun.thinkingDropped.tokens : 0;
  if (lost > 0.5) {
    used.add('thinking dropped');
    lines.push(
      `It drops ${group(lost)} tokens more of the model's earlier reasoning than today does (${group(rec.thinkingDropped.tokens)} against ${group(todayRun.thinkingDropped.tokens)}): ` +
        'the provider drops thinking after each rewrite before it (preserved thinking), and the model answers without it; the saving does not count what that costs in quality.',
    );
  }
  if (rec.changes.length > 0) {
    lines.push('What each change saves against today, over all the sessions:');
    for (const s of rec.changes) lines.push(`  ${stepText(s, t)}: ${s.savingUsd >= 0 ? `saves ${usd(s.savingUsd)}` : `costs ${usd(-s.savingUsd)} more`}`);
  }
  const s = rec.savingSpread;
  if (t.files.length > 1 && rec.changes.length > 0) {
    lines.push(`Saving per session: min ${pct(s.min)}, median ${pct(s.median)}, max ${pct(s.max)}.`);
    for (const f of t.perFile) {
      const saving = f.todayUsd > 0 ? 1 - f.recommendedUsd / f.todayUsd : 0;
      lines.push(`  ${f.file}: ${usd(f.todayUsd)} -> ${usd(f.recommendedUsd)} (${pct(saving)} saved, ${group(f.modelCalls)} calls)`);
    }
  }
  const h = t.heldOut;
  if (h) {
    used.add('held out');
    const key = (r) => JSON.stringify([r.release, r.contextPrune, r.gate]);
    lines.push('Held out (each session priced with the configuration chosen on the other sessions):');
    for (const f of h.perFile) {
      const chosen = key(f.chosen) === key(rec) ? 'the recommendation' : sentence(f.chosen);
      lines.push(`  ${f.file}: ${chosen}: ${f.saving >= 0 ? `saves ${pct(f.saving)}` : `costs ${pct(-f.saving)} more`} (${usd(f.costUsd)} against ${usd(f.todayUsd)})`);
    }
    lines.push(
      `  cross-validated: ${h.savingUsd >= 0 ? `saves ${pct(h.saving)}` : `costs ${pct(-h.saving)} more`} of today's ${usd(h.todayUsd)} (${usd(Math.abs(h.savingUsd))}); per session min ${pct(h.savingSpread.min)}, median ${pct(h.savingSpread.median)}, max ${pct(h.savingSpread.max)}; it saves on ${h.filesSaving} of ${h.perFile.length} sessions.`,
    );
  } else {
    lines.push('One session: no out-of-sample check was possible (give several sessions, or a directory, to price the choice on sessions it was not made on).');
  }
  lines.push(`Held at what the sessions recorded (they act only at a flush): ${t.held.join(', ')}.`);
  const keep = h && h.keepYours && paste;
  if (keep) {
    const keepWhat = today.pruningOn ? 'Keep your settings' : 'Keep pruning off';
    const undecided = h.perFile.filter((f) => f.todayTied).map((f) => f.file);
    let why;
    if (h.keepYours === 'not above zero') why = `held out, the saving is not above zero (${pct(h.saving)}): what is cheapest on some sessions costs more on the others.`;
    else if (undecided.length) why = `held out, the data is too small to tell: with ${words(undecided)} left out, the other sessions cannot tell ${todayIs} from their cheapest (within a cent, or 0.1%). Give more sessions to check the recommendation.`;
    else why = `held out, the saving (${usd(h.savingUsd)}) is within ${usd(h.withinUsd)} of none: too small to tell.`;
    lines.push('', `${keepWhat}: ${why}`);
  } else if (paste) {
    const target = settings && settings.file ? shownPath(settings.file) : "pi's settings.json";
    const where = settings && settings.exists === false ? `${target} (the file pi-condense reads; there is none yet, so create it with this)` : settings && settings.file ? `${target}, the file your settings came from` : target;
    const release = paste.release ? `, with pi-condense ${paste.release} installed in place of ${t.current.release}` : '';
    lines.push('', `Set in ${where}${release}; keep your other settings as they are:`, JSON.stringify(paste.settings, null, 2));
    if (paste.turnsPruning === 'on') lines.push(`Pruning is off today: this turns it on ("enabled": true).`);
    if (paste.turnsPruning === 'off') lines.push(`This turns pruning off ("enabled": false).`);
    if (rec.gate) {
      // The gate runs only where condense-native renders: say what runs without it.
      const plain = t.ranked.find((r) => r.gate === null);
      lines.push(
        "That figure is behind the cache-aware gate, which runs in pi where condense-native renders pi-condense (README, \"Use it in pi\"; docs/GATE.md). " +
          `Without it the cheapest is ${sentence(plain)}: ${usd(plain.costUsd)}${today.costUsd > 0 ? ` (${pct(plain.costUsd / today.costUsd - 1)} vs today)` : ''}.`,
      );
    }
  }
  lines.push(...legend(used));
  return lines.join('\n');
}

/** The --svg chart: every configuration's USD against its chars sent. */
function tuneSvg(t, mark) {
  const W = 760;
  const H = 460;
  const M = { left: 90, right: 30, top: 40, bottom: 50 };
  const xs = t.ranked.map((r) => r.charsSent);
  const ys = t.ranked.map((r) => r.costUsd);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  const [y0, y1] = [Math.min(...ys), Math.max(...ys)];
  const x = (v) => M.left + ((v - x0) / (x1 - x0 || 1)) * (W - M.left - M.right);
  const y = (v) => H - M.bottom - ((v - y0) / (y1 - y0 || 1)) * (H - M.top - M.bottom);
  const esc = (s) => String(s).replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]);
  const parts = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    mark,
    `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${W}" height="${H}" font-family="sans-serif">`,
    `<title>condense-native tune: cost against context size</title>`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="${M.left}" y="24" font-size="14" font-weight="bold">USD against chars sent, ${t.ranked.length} configurations</text>`,
    `<line x1="${M.left}" y1="${H - M.bottom}" x2="${W - M.right}" y2="${H - M.bottom}" stroke="#999"/>`,
    `<line x1="${M.left}" y1="${H - M.bottom}" x2="${M.left}" y2="${M.top}" stroke="#999"/>`,
    `<text x="${M.left}" y="${H - 20}" font-size="11">${group(x0)} chars</text>`,
    `<text x="${W - M.right}" y="${H - 20}" font-size="11" text-anchor="end">${group(x1)} chars</text>`,
    `<text x="${M.left - 6}" y="${H - M.bottom}" font-size="11" text-anchor="end">${usd(y0)}</text>`,
    `<text x="${M.left - 6}" y="${M.top + 4}" font-size="11" text-anchor="end">${usd(y1)}</text>`,
  ];
  const front = t.ranked.filter((r) => r.front).sort((a, b) => a.charsSent - b.charsSent);
  parts.push(`<polyline class="front" fill="none" stroke="#2563eb" stroke-width="1.5" points="${front.map((r) => `${x(r.charsSent).toFixed(1)},${y(r.costUsd).toFixed(1)}`).join(' ')}"/>`);
  t.ranked.forEach((r, i) => {
    const color = r.current ? '#dc2626' : r.front ? '#2563eb' : '#9ca3af';
    parts.push(
      `<circle class="config" data-rank="${i + 1}" data-front="${r.front}" cx="${x(r.charsSent).toFixed(1)}" cy="${y(r.costUsd).toFixed(1)}" r="${r.current || i === 0 ? 5 : 3}" fill="${color}">` +
        `<title>${esc(`#${i + 1} ${describe(r).join(', ')}: ${usd(r.costUsd)}, ${group(r.charsSent)} chars${r.current ? ' (current)' : ''}`)}</title></circle>`,
    );
  });
  parts.push(`<text x="${W - M.right}" y="${M.top}" font-size="11" text-anchor="end" fill="#dc2626">red: current settings</text>`);
  parts.push(`<text x="${W - M.right}" y="${M.top + 14}" font-size="11" text-anchor="end" fill="#2563eb">blue: the front</text>`);
  parts.push('</svg>', '');
  return parts.join('\n');
}

/** Runs `tune` for the CLI; returns the exit status. */
async function tuneMain(run, ctx) {
  const { out, errorLine, EXIT, settings, files, errors } = ctx;
  const { tuneAsync } = require('..');
  const progress = !run.json && ctx.stderr.isTTY ? makeProgress(ctx.stderr) : null;
  let result;
  try {
    result = await tuneAsync(files, {
      ...run.options,
      config: settings.config,
      compaction: settings.compaction,
      cacheWarming: settings.cacheWarming,
      release: settings.release,
      onProgress: progress ? (done, total) => progress.update(0, 1, 'tune', done, total) : null,
    });
  } catch (e) {
    if (progress) progress.clear();
    if (typeof e.code !== 'string' || !e.code.startsWith('ERR_CONDENSE_')) throw e;
    errorLine(e.message);
    if (run.json) out(`${JSON.stringify({ errors: [...errors, { file: null, error: { code: e.code, message: e.message, line: e.file ? e.line ?? null : null } }] })}\n`);
    return EXIT.ERROR;
  }
  if (progress) progress.clear();
  const left = [...errors, ...(result.errors ?? []).filter((e) => !errors.some((x) => x.file === e.file))];
  for (const e of result.errors ?? []) {
    if (errors.some((x) => x.file === e.file)) continue;
    errorLine(`${e.error.line ? `${e.file}:${e.error.line}` : e.file}: ${e.error.message}`);
  }
  for (const f of result.perFile ?? []) {
    const skipped = skippedLine(f.file, f.skippedLines);
    if (skipped) errorLine(skipped);
  }
  result.errors = left;
  result.settings = { config: settings.source, file: settings.file, release: settings.release, releaseSource: settings.releaseSource, enabled: settings.enabled };
  if (result.recommended.paste) result.recommended.paste.file = settings.file;
  out(run.json ? `${JSON.stringify(result)}\n` : `${tuneTable(result, { settings, cacheModel: run.options.cacheModel, gateOff: run.options.gate?.enabled === false })}\n`);
  if (run.svg !== null) {
    try {
      fs.writeFileSync(run.svg, tuneSvg(result, ctx.svgMark));
    } catch (e) {
      errorLine(`${run.svg}: cannot write the SVG (${e.code || e.message})`);
      return EXIT.ERROR;
    }
  }
  return left.length > 0 ? EXIT.ERROR : EXIT.OK;
}

module.exports = { tuneMain };
