'use strict';

// The --svg chart: for each replayed file, the context size per model call
// in characters, before pruning (the series of policy `none`, dashed) and
// after pruning (one series per other policy). A render whose cache write went beyond what was
// newly appended (it rewrote history, or the cache had expired) is a
// cache-write spike, marked with a dot on its policy's line; hovering it
// shows the chars written. Plain SVG 1.1, no script; every element is
// tagged with `data-series` so tests and tools can find the series.

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
    if (r.cacheExpired || r.breakIndex < renders[k - 1].messagesAfter) out.push(k);
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
    if (p !== none) series.push({ id: p.policy, label: `after: ${p.policy}`, values: p.renders.map((x) => x.charsAfter), renders: p.renders });
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
            `<title>${escape(s.id)}, model call ${k}: ${rr.cacheWriteChars.toLocaleString('en-US')} chars written${rr.cacheExpired ? ' (cache expired)' : ` (break at message ${rr.breakIndex})`}</title></circle>`,
        );
      }
    }
  });
  const ly = top + MARGIN.top + 14 * series.length + 6;
  parts.push(`<circle cx="${WIDTH - MARGIN.right + 22}" cy="${ly}" r="3" fill="#000"/>`);
  parts.push(`<text x="${WIDTH - MARGIN.right + 38}" y="${ly + 4}" font-size="11">cache-write spike</text>`);
  parts.push('</g>');
  return parts.join('\n');
}

/** The SVG document for replayed files `[{ file, result }]`. */
function svgOf(files) {
  const height = Math.max(1, files.length) * HEIGHT;
  const body = files.map((f, i) => chart(f.file, f.result, i * HEIGHT)).join('\n');
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif">\n` +
    `<title>condense-native replay: context size per model call</title>\n` +
    `<rect width="100%" height="100%" fill="#fff"/>\n${body}\n</svg>\n`
  );
}

module.exports = { svgOf, spikes };
