'use strict';

// `condense-native tune [session.jsonl | DIR]...`: which pi-condense
// settings to run, from the user's own sessions. Prints the ranked
// configurations, the recommendation with its saving over the current
// settings (per session and on the held-out half), and the contextPrune
// block to paste into pi's settings.json; --json prints tune()'s result,
// --svg the cost/size front. Same CLI contract as replay (js/cli/main.js).

const fs = require('node:fs');

const { makeProgress } = require('./progress.js');
const { skippedLine, grid, group, usd } = require('./table.js');


function pct(x) {
  return `${(100 * x).toFixed(1)}%`;
}

/** The render-time settings of a configuration, in a few words. */
function describe(r) {
  if (r.release === 'none') return ['none', '-', '-', '-', '-', '-'];
  const b = r.contextPrune;
  const chain = b.chainCompression.enabled ? (b.chainCompression.stripFinalAssistantThinking ? 'on' : 'on, keep final') : 'off';
  const purge = b.purgeErrors.enabled ? `${b.purgeErrors.cooldownTurns} turns, ${b.purgeErrors.minArgChars}+ chars` : 'off';
  const strip = r.release === '2.9.1' ? '-' : b.thinkingStrip && b.thinkingStrip.enabled ? `keep ${b.thinkingStrip.keepLastTurns}` : 'off';
  const gate = r.gate ? (r.gate.horizon === 'auto' ? 'on' : `on, ${r.gate.horizon} calls`) : 'off';
  return [r.release, chain, purge, String(b.recoveryGraceTurns), strip, gate];
}

/** A configuration in a sentence: its settings, and the gate when it has one. */
function sentence(r) {
  const [gate, ...rest] = describe(r).reverse();
  return [...rest.reverse(), ...(gate.startsWith('on') ? [`behind the cache-aware gate${gate === 'on' ? '' : ` (${gate.slice(4)})`}`] : [])].join(', ');
}

/** The human report of a tune. */
function tuneTable(t, { settings, cacheModel = 'provider', shown = 15, gateOff = false } = {}) {
  const cur = t.current.costUsd;
  const model = cacheModel === 'prefix' ? 'priced with the prefix rule' : 'priced as the provider bills them';
  const lines = [];
  if (settings) lines.push(`settings: ${settings.source}; ${settings.releaseSource}`);
  lines.push(
    `${t.files.length} session file${t.files.length === 1 ? '' : 's'}, ${group(t.modelCalls)} model calls, ${t.ranked.length} configurations ${model}` +
      (t.errors && t.errors.length ? `; ${t.errors.length} file${t.errors.length === 1 ? '' : 's'} left out (named on stderr)` : ''),
  );
  if (gateOff) lines.push('The gate is switched off (--gate "enabled": false): no configuration is ranked behind it.');
  lines.push('');
  const rows = t.ranked.slice(0, shown).map((r, i) => [
    `${i + 1}${r.front ? '*' : ''}${r.current ? ' (yours)' : ''}`,
    ...describe(r),
    usd(r.costUsd),
    cur > 0 ? pct(r.costUsd / cur - 1) : '-',
    group(r.charsSent),
    group(r.rewrites),
  ]);
  lines.push(
    ...grid(['rank', 'release', 'chains', 'error purge', 'grace', 'thinking strip', 'gate', 'USD', 'vs yours', 'chars sent', 'rewrites'], rows, [false, false, false, false, true, false, false, true, true, true, true]),
  );
  const currentRank = t.ranked.findIndex((r) => r.current);
  if (currentRank >= shown) {
    const r = t.ranked[currentRank];
    lines.push(`${currentRank + 1} (yours): ${sentence(r)}: ${usd(r.costUsd)}`);
  }
  lines.push('* on the front of cost against context size (no configuration is both cheaper and smaller)', '');
  if (t.current.thinkingBoundary) lines.push(`Yours: thinking boundary ${t.current.thinkingBoundary.rule === 'recorded' ? 'as recorded' : "from the config's keepLastTurns"} (${t.current.thinkingBoundary.reason}); 'condense-native replay' prices it the same.`);
  const rec = t.recommended;
  const same = t.ranked.find((r) => r.current);
  const keep = same && rec.release === same.release && JSON.stringify(rec.contextPrune) === JSON.stringify(same.contextPrune) && JSON.stringify(rec.gate) === JSON.stringify(same.gate);
  if (keep) {
    lines.push('Recommended: keep your settings.');
  } else {
    lines.push(`Recommended: ${sentence(rec)}: ${usd(rec.costUsd)}, ${pct(rec.saving)} less than yours (${usd(t.current.costUsd)}).`);
  }
  const s = rec.savingSpread;
  if (t.files.length > 1) lines.push(`Saving per session: min ${pct(s.min)}, median ${pct(s.median)}, max ${pct(s.max)}.`);
  if (t.perFile && t.files.length > 1 && !keep) {
    for (const f of t.perFile) {
      const saving = f.currentUsd > 0 ? 1 - f.recommendedUsd / f.currentUsd : 0;
      lines.push(`  ${f.file}: ${usd(f.currentUsd)} -> ${usd(f.recommendedUsd)} (${pct(saving)} saved, ${group(f.modelCalls)} calls)`);
    }
  }
  const h = t.heldOut;
  if (h) {
    lines.push(
      `Held out: chosen on ${h.fitFiles.length} session(s), it saves ${pct(h.savingFit)} there and ${pct(h.savingTest)} on the other ${h.testFiles.length} ` +
        `(noise ${pct(h.noise)}): ${h.beatsNoise ? 'beyond the noise' : 'within the noise, so your settings are kept'}.`,
    );
  } else {
    lines.push('One session: no held-out check (give several sessions, or a directory, for one).');
  }
  lines.push(`Held at what the sessions recorded (they act only at a flush): ${t.held.join(', ')}.`);
  if (!keep && rec.release !== 'none') {
    // Behind the gate, the block turns it on too (pi's condenseNative.gate).
    const block = rec.gate ? { contextPrune: rec.contextPrune, condenseNative: { gate: { enabled: true, ...rec.gate } } } : { contextPrune: rec.contextPrune };
    lines.push('', `Paste into pi's settings.json (${settings && settings.file ? settings.file : '~/.pi/agent/settings.json'})${rec.release !== same?.release ? `, with pi-condense ${rec.release}` : ''}:`, JSON.stringify(block, null, 2));
    if (rec.gate) {
      // The gate runs only where condense-native renders: say what runs without it.
      const plain = t.ranked.find((r) => r.gate === null);
      lines.push(
        '',
        "That figure is behind the cache-aware gate, which runs in pi where condense-native renders pi-condense (README, \"Use it in pi\"; docs/GATE.md). " +
          `Without it the cheapest is ${sentence(plain)}: ${usd(plain.costUsd)}${cur > 0 ? ` (${pct(plain.costUsd / cur - 1)} vs yours)` : ''}` +
          (plain.release === 'none' ? '.' : `; its block:\n${JSON.stringify({ contextPrune: plain.contextPrune }, null, 2)}`),
      );
    }
  } else if (!keep) {
    lines.push('', 'No pruning is cheapest: pi-condense costs more than it saves on these sessions.');
  }
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
  const { tuneAsync } = require('../../index.js');
  const progress = !run.json && ctx.stderr.isTTY ? makeProgress(ctx.stderr) : null;
  let result;
  try {
    result = await tuneAsync(files, {
      ...run.options,
      config: settings.config,
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
  result.settings = { config: settings.source, release: settings.release, releaseSource: settings.releaseSource, enabled: settings.enabled };
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

module.exports = { tuneMain, tuneTable, tuneSvg };
