'use strict';
// Runs every conformance vector file in __test__/fixtures (vectors*.json, both
// dialects where they exist) through the package's public API on whatever
// runtime starts it, and prints one JSON line: which binary answered, and per
// case a digest of what prune (bytes), pruneMessages (arrays) and
// computeThinkingBoundary returned or threw. cross/runtime.test.js compares
// these lines between the x86-64 binary and each other target's.
//
//   <runtime> cross/guest/vectors-digest.js STAGE_DIR
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');

const stage = process.argv[2];
const api = require(path.join(stage, 'index.js'));
const loaded = require(path.join(stage, 'loader.js'));
const { rawMessages } = require(path.join(stage, '__test__', 'helpers', 'vectors.js'));
const fixtures = path.join(stage, '__test__', 'fixtures');

const sha = (text) => crypto.createHash('sha256').update(text).digest('hex').slice(0, 16);
const normal = (value) => (value === null || value === undefined ? null : sha(JSON.stringify(value)));

function outcome(fn) {
  try {
    const r = fn();
    if (r === undefined || r === null || typeof r !== 'object') return { value: r ?? null };
    const messages = Buffer.isBuffer(r.messages) ? normal(JSON.parse(r.messages.toString('utf8'))) : normal(r.messages);
    return { pruned: r.pruned, beforeChars: r.beforeChars, afterChars: r.afterChars, messages, frontier: r.frontier ?? null, stats: r.stats ?? null };
  } catch (e) {
    return { error: e && e.code ? e.code : String(e && e.message) };
  }
}

const files = fs.readdirSync(fixtures).filter((f) => /^vectors.*\.json$/.test(f)).sort();
const results = [];
for (const file of files) {
  const lines = fs.readFileSync(path.join(fixtures, file), 'utf8').split('\n').filter((l) => l.startsWith('{'));
  for (const line of lines) {
    const json = line.endsWith(',') ? line.slice(0, -1) : line;
    const c = JSON.parse(json);
    const name = `${file}:${c.name}`;
    if (c.group === 'boundary') {
      results.push({ name, boundary: outcome(() => api.computeThinkingBoundary(c.assistantTimestamps, c.keepLastTurns, c.prev ?? undefined)) });
      continue;
    }
    const options = { state: c.state, config: c.config, thinkingStripBoundaryTimestamp: c.thinkingBoundaryTimestamp };
    const entry = { name, bytes: outcome(() => api.prune(Buffer.from(JSON.stringify(c.messages) ?? 'null'), options)) };
    if (c.messages !== undefined && c.group !== 'hostile') entry.array = outcome(() => api.pruneMessages(structuredClone(c.messages), options));
    if (/-raw$/.test(c.name)) entry.raw = outcome(() => api.prune(Buffer.from(rawMessages(json)), options));
    results.push(entry);
  }
}
process.stdout.write(`${JSON.stringify({ backend: api.backend, target: loaded.target, files, cases: results.length, results })}\n`);
