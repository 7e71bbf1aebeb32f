'use strict';

// The --svg charts, two per replayed file. The cost chart: the cumulative
// USD of each policy over the model calls, as the provider bills them, with
// every call that rewrote the cache (class rewrite, partial or expired)
// marked on its policy's line; hovering a mark names its cause. The size
// chart: the context size per model call in characters, before pruning
// (the series of policy `none`, dashed) and after pruning (one series per
// other policy), with cache-write spikes (a render whose output changed
// before the previous one's end, or whose cache had expired) marked. Plain
// SVG 1.1, no script; every element is tagged with `data-series` so tests
// and tools can find the series.

const COLORS = ['#6b7280', '#2563eb', '#16a34a', '#dc2626', '#9333ea', '#ea580c'];
const WIDTH = 960;
const HEIGHT = 360;
const MARGIN = { left: 80, right: 200, top: 40, bottom: 40 };

function escape(text) {
  return String(text).replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]);
}

/** Renders that wrote more than the messages appended since the previous one. */
function spikes(renders) {
  const out = [];
  for (let k = 1; k < renders.length; k++) {
    const r = renders[k];
    if (r.callClass === 'expired' || r.breakIndex < renders[k - 1].messagesAfter) out.push(k);
  }
  return out;
}

function chart(name, r, top) {
  const policies = r.policies.filter((p) => p.renders && p.renders.length);
  const n = r.modelCalls;
  const before = policies.length ? policies[0].renders.map((x) => x.charsBefore) : [];
  const max = Math.max(1, ...before, ...policies.flatMap((p) => p.renders.map((x) => x.charsAfter)));
  const w = WIDTH - MARGIN.left - MARGIN.right;
  const h = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (k) => MARGIN.left + (n > 1 ? (k * w) / (n - 1) : 0);
  const y = (v) => top + MARGIN.top + h - (v * h) / max;
  const points = (values) => values.map((v, k) => `${x(k).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  const parts = [];
  parts.push(`<g class="chart" data-file="${escape(name)}">`);
  parts.push(`<text x="${MARGIN.left}" y="${top + 24}" font-size="14" font-weight="bold">${escape(name)}: context chars per model call (${n} calls)</text>`);
  parts.push(`<line x1="${MARGIN.left}" y1="${y(0)}" x2="${MARGIN.left + w}" y2="${y(0)}" stroke="#999"/>`);
  parts.push(`<line x1="${MARGIN.left}" y1="${y(0)}" x2="${MARGIN.left}" y2="${y(max)}" stroke="#999"/>`);
  for (const frac of [0, 0.5, 1]) {
    parts.push(`<text x="${MARGIN.left - 6}" y="${y(max * frac) + 4}" font-size="11" text-anchor="end">${Math.round(max * frac).toLocaleString('en-US')}</text>`);
  }
  parts.push(`<text x="${MARGIN.left + w}" y="${y(0) + 16}" font-size="11" text-anchor="end">model call ${Math.max(0, n - 1)}</text>`);
  const none = policies.find((p) => p.policy === 'none');
  const series = [{ id: 'none', label: 'none: context as sent', values: before, renders: none ? none.renders : null }];
  for (const p of policies) {
    if (p !== none) series.push({ id: p.policy, label: `after: ${p.label ?? p.policy}`, values: p.renders.map((x) => x.charsAfter), renders: p.renders });
  }
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const dash = s.id === 'none' ? ' stroke-dasharray="4 3"' : '';
    parts.push(`<polyline class="series" data-series="${escape(s.id)}" fill="none" stroke="${color}" stroke-width="1.5"${dash} points="${points(s.values)}"/>`);
    const ly = top + MARGIN.top + 14 * i;
    parts.push(`<line x1="${WIDTH - MARGIN.right + 12}" y1="${ly}" x2="${WIDTH - MARGIN.right + 32}" y2="${ly}" stroke="${color}" stroke-width="2"${dash}/>`);
    parts.push(`<text x="${WIDTH - MARGIN.right + 38}" y="${ly + 4}" font-size="11">${escape(s.label)}</text>`);
    if (s.renders) {
      for (const k of spikes(s.renders)) {
        const rr = s.renders[k];
        parts.push(
          `<circle class="spike" data-series="${escape(s.id)}" data-call="${k}" cx="${x(k).toFixed(1)}" cy="${y(rr.charsAfter).toFixed(1)}" r="3" fill="${color}">` +
            `<title>${escape(s.id)}, model call ${k}: ${Math.round(rr.cacheWriteTokens).toLocaleString('en-US')} tokens written${rr.callClass === 'expired' ? ' (cache expired)' : ` (break at message ${rr.breakIndex})`}</title></circle>`,
        );
      }
    }
  });
  const ly = top + MARGIN.top + 14 * series.length + 6;
  parts.push(`<circle cx="${WIDTH - MARGIN.right + 22}" cy="${ly}" r="3" fill="#000"/>`);
  parts.push(`<text x="${WIDTH - MARGIN.right + 38}" y="${ly + 4}" font-size="11">cache-write spike</text>`);
  // The file's cost chart, below its size chart, inside the file's group.
  parts.push(costChart(name, r, top + HEIGHT));
  parts.push('</g>');
  return parts.join('\n');
}

const REWRITES = new Set(['rewrite', 'partial', 'expired']);

function costChart(name, r, top) {
  const policies = r.policies.filter((p) => p.renders && p.renders.length && p.renders[0].costUsd !== undefined);
  const n = r.modelCalls;
  const cumulative = policies.map((p) => {
    let sum = 0;
    return p.renders.map((x) => (sum += x.costUsd));
  });
  const max = Math.max(1e-9, ...cumulative.flat());
  const w = WIDTH - MARGIN.left - MARGIN.right;
  const h = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (k) => MARGIN.left + (n > 1 ? (k * w) / (n - 1) : 0);
  const y = (v) => top + MARGIN.top + h - (v * h) / max;
  const parts = [`<g class="cost-chart" data-file="${escape(name)}">`];
  parts.push(`<text x="${MARGIN.left}" y="${top + 24}" font-size="14" font-weight="bold">${escape(name)}: cumulative USD per policy (${r.cacheModel} cache model)</text>`);
  parts.push(`<line x1="${MARGIN.left}" y1="${y(0)}" x2="${MARGIN.left + w}" y2="${y(0)}" stroke="#999"/>`);
  parts.push(`<line x1="${MARGIN.left}" y1="${y(0)}" x2="${MARGIN.left}" y2="${y(max)}" stroke="#999"/>`);
  for (const frac of [0, 0.5, 1]) {
    parts.push(`<text x="${MARGIN.left - 6}" y="${y(max * frac) + 4}" font-size="11" text-anchor="end">$${(max * frac).toFixed(max < 10 ? 2 : 0)}</text>`);
  }
  policies.forEach((p, i) => {
    const color = COLORS[i % COLORS.length];
    const values = cumulative[i];
    parts.push(`<polyline class="cost" data-series="${escape(p.policy)}" fill="none" stroke="${color}" stroke-width="1.5" points="${values.map((v, k) => `${x(k).toFixed(1)},${y(v).toFixed(1)}`).join(' ')}"/>`);
    const ly = top + MARGIN.top + 14 * i;
    parts.push(`<line x1="${WIDTH - MARGIN.right + 12}" y1="${ly}" x2="${WIDTH - MARGIN.right + 32}" y2="${ly}" stroke="${color}" stroke-width="2"/>`);
    parts.push(`<text x="${WIDTH - MARGIN.right + 38}" y="${ly + 4}" font-size="11">${escape(p.label ?? p.policy)}: $${p.costUsd.toFixed(2)}</text>`);
    p.renders.forEach((rr, k) => {
      if (!REWRITES.has(rr.callClass)) return;
      const cause = rr.rewriteCause ? `${rr.rewriteCause.cause}${rr.rewriteCause.flush ? ' at a flush' : ''}` : rr.callClass;
      parts.push(
        `<rect class="rewrite" data-series="${escape(p.policy)}" data-call="${k}" x="${(x(k) - 2.5).toFixed(1)}" y="${(y(values[k]) - 2.5).toFixed(1)}" width="5" height="5" fill="${color}">` +
          `<title>${escape(p.policy)}, model call ${k}: ${rr.callClass}, ${Math.round(rr.cacheWriteTokens).toLocaleString('en-US')} tokens written (${escape(cause)})</title></rect>`,
      );
    });
  });
  parts.push('</g>');
  return parts.join('\n');
}

/** The SVG document for replayed files `[{ file, result }]`. */
function svgOf(files, mark) {
  const height = Math.max(1, files.length) * HEIGHT * 2;
  const body = files.map((f, i) => chart(f.file, f.result, 2 * i * HEIGHT)).join('\n');
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n${mark}\n` +
    `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif">\n` +
    `<title>condense-native replay: cost and context size per model call</title>\n` +
    `<rect width="100%" height="100%" fill="#fff"/>\n${body}\n</svg>\n`
  );
}

module.exports = { svgOf };
