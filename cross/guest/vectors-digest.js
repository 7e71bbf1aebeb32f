'use strict';
// Runs every conformance vector file in __test__/fixtures (vectors*.json, each
// in its pi-condense dialect) through the package's public API on whatever
// runtime starts it, and prints one JSON line: which binary answered, per case
// a digest of what prune (bytes), pruneMessages (arrays) and
// computeThinkingBoundary returned or threw, and the cases whose byte result
// is not the vector's expected one (outside the hostile group, where a typed
// error may stand in for it). cross/runtime.test.js compares these lines
// between the x86-64 binary and each other target's.
//
//   <runtime> cross/guest/vectors-digest.js STAGE_DIR
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');

// The dialect each vector file is in: the `dialect` option of the API.
// A new vectors file needs its line here (the run stops on an unknown one).
const DIALECTS = { 'vectors.json': '2.4.3', 'vectors-2.9.json': '2.9.1' };

const stage = process.argv[2];
const api = require(path.join(stage, 'index.js'));
const loaded = require(path.join(stage, 'loader.js'));
const { rawMessages } = require(path.join(stage, '__test__', 'helpers', 'vectors.js'));
const fixtures = path.join(stage, '__test__', 'fixtures');

const sha = (text) => crypto.createHash('sha256').update(text).digest('hex').slice(0, 16);
const digestOf = (value) => (value === null || value === undefined ? null : sha(JSON.stringify(value)));

function outcome(fn) {
  try {
    const r = fn();
    if (r === undefined || r === null || typeof r !== 'object') return { value: r ?? null };
    const messages = Buffer.isBuffer(r.messages) ? JSON.parse(r.messages.toString('utf8')) : r.messages;
    return { pruned: r.pruned, beforeChars: r.beforeChars, afterChars: r.afterChars, messages: digestOf(messages), frontier: r.frontier ?? null, stats: r.stats ?? null };
  } catch (e) {
    return { error: e && e.code ? e.code : String(e && e.message) };
  }
}

// Whether a byte-path outcome is what the vector expects (conformance.test.js's rule).
function conforms(c, got) {
  const exp = c.expected;
  if (exp.throws !== undefined) return got.error !== undefined && /^ERR_CONDENSE_/.test(got.error);
  if (got.error !== undefined) return c.group === 'hostile' && /^ERR_CONDENSE_/.test(got.error);
  return (
    got.pruned === exp.pruned &&
    got.beforeChars === exp.beforeChars &&
    got.afterChars === exp.afterChars &&
    got.messages === (exp.pruned ? digestOf(exp.messages) : null)
  );
}

const files = fs.readdirSync(fixtures).filter((f) => /^vectors.*\.json$/.test(f)).sort();
const results = [];
const nonConforming = [];
for (const file of files) {
  const dialect = DIALECTS[file];
  if (!dialect) throw new Error(`${file}: no dialect known for it (cross/guest/vectors-digest.js DIALECTS)`);
  const lines = fs.readFileSync(path.join(fixtures, file), 'utf8').split('\n').filter((l) => l.startsWith('{'));
  for (const line of lines) {
    const json = line.endsWith(',') ? line.slice(0, -1) : line;
    const c = JSON.parse(json);
    const name = `${file}:${c.name}`;
    if (c.group === 'boundary') {
      const got = outcome(() => api.computeThinkingBoundary(c.assistantTimestamps, c.keepLastTurns, c.prev ?? undefined));
      if ((got.value ?? null) !== c.expected.value) nonConforming.push(name);
      results.push({ name, boundary: got });
      continue;
    }
    const options = { state: c.state, config: c.config, thinkingStripBoundaryTimestamp: c.thinkingBoundaryTimestamp, dialect };
    const entry = { name, bytes: outcome(() => api.prune(Buffer.from(JSON.stringify(c.messages) ?? 'null'), options)) };
    if (!conforms(c, entry.bytes)) nonConforming.push(name);
    if (Array.isArray(c.messages)) entry.array = outcome(() => api.pruneMessages(structuredClone(c.messages), options));
    if (/-raw$/.test(c.name)) entry.raw = outcome(() => api.prune(Buffer.from(rawMessages(json)), options));
    results.push(entry);
  }
}
process.stdout.write(`${JSON.stringify({ backend: api.backend, target: loaded.target, files, cases: results.length, nonConforming, results })}\n`);
