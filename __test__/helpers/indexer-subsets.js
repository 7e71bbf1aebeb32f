'use strict';

// The drop-ins against pi-condense's own render with indexers that lack
// methods (issue 42): for every public vector of a release, the methods the
// reference calls on it are recorded with a Proxy-like wrapper, and then the
// reference and the drop-in render with indexers reduced to each subset of
// those methods, and to the full list less one method at a time. Both must
// render the same, or both fail; where the reference fails calling a method
// the indexer lacks, the drop-in's error is ERR_CONDENSE_INVALID_ARGUMENT
// naming that method. Used by __test__/indexer-subsets.test.js, in-process
// (the native backend) and in a child with the fallback forced (the pure-JS
// backend); `node __test__/helpers/indexer-subsets.js <dialect>` prints the
// counts as JSON for that child.

const path = require('node:path');
const { loadReference, fillIndexer, referenceArgs } = require('./indexer.js');
const { loadVectors } = require('./vectors.js');

const FIXTURES = path.join(__dirname, '..', 'fixtures');
const VECTORS = { '2.4.3': path.join(FIXTURES, 'vectors.json'), '2.9.1': path.join(FIXTURES, 'vectors-2.9.json') };
const ORACLES = { '2.4.3': '../../js/pure/v2.4.js', '2.9.1': '../../js/pure/v2.9.js' };
const DROP_INS = { '2.4.3': '../../js/pi-condense-2.4.js', '2.9.1': '../../js/pi-condense-2.9.js' };

// An object with only `names` of the release's methods, each answering as
// `real` does and noting its name in `calls` when called.
function reducedIndexer(real, names, calls) {
  const out = {};
  for (const name of names) {
    out[name] = (...args) => {
      calls?.add(name);
      return real[name](...args);
    };
  }
  return out;
}

function subsetsOf(list) {
  const all = [];
  for (let mask = 0; mask < 1 << list.length; mask++) all.push(list.filter((_, n) => mask & (1 << n)));
  return all;
}

function outcome(render) {
  const reports = [];
  const sink = { report: (kind, key, detail) => reports.push({ kind, key, detail }) };
  try {
    return { value: render(sink), reports };
  } catch (error) {
    return { error, reports };
  }
}

// The method a reference failure names when it called one the indexer
// lacks ("indexer.getRecord is not a function"), or null.
function missingIn(error) {
  const m = /^indexer\.(\w+) is not a function/.exec(String(error?.message));
  return m ? m[1] : null;
}

// One vector, one reduced indexer: null when the drop-in agrees with the
// reference, else a line saying how it differs.
function compare(want, got) {
  if (want.error || got.error) {
    if (!want.error) return `the drop-in throws (${got.error.message}), the reference renders`;
    if (!got.error) return `the reference throws (${want.error.message}), the drop-in renders`;
    const method = missingIn(want.error);
    if (method === null) return null;
    if (got.error.code !== 'ERR_CONDENSE_INVALID_ARGUMENT' || !got.error.message.includes(`indexer.${method} must be a function`)) {
      return `the reference fails calling ${method}; the drop-in's error is ${got.error.code}: ${got.error.message}`;
    }
    return null;
  }
  const a = want.value;
  const b = got.value;
  for (const field of ['pruned', 'beforeChars', 'afterChars']) {
    if (a[field] !== b[field]) return `${field}: ${b[field]}, the reference ${a[field]}`;
  }
  if (JSON.stringify(a.messages) !== JSON.stringify(b.messages)) return 'the messages differ';
  if (JSON.stringify(want.reports) !== JSON.stringify(got.reports)) return 'the diagnostics differ';
  return null;
}

/**
 * Runs every vector of `dialect` with reduced indexers. Returns
 * `{ renders, failures, bothFail, missingNamed, touched, differences }`:
 * `touched` maps each method to the vector groups whose reference render
 * calls it (the table of what the release asks for on which inputs);
 * `differences` lists the first disagreements.
 */
async function runSubsets(dialect) {
  const reference = await loadReference(dialect);
  if (reference === null) return null;
  const methods = require(ORACLES[dialect]).INDEXER_METHODS;
  const dropIn = require(DROP_INS[dialect]);
  const counts = { renders: 0, bothFail: 0, missingNamed: 0, touched: {}, differences: [] };
  for (const name of methods) counts.touched[name] = {};
  for (const c of loadVectors(VECTORS[dialect])) {
    if (c.group === 'boundary') continue;
    const real = fillIndexer(reference, dialect, c.state).indexer;
    const render = (fn, indexer) => outcome((sink) => fn(structuredClone(c.messages), ...referenceArgs(dialect, c, indexer, sink)));
    const touched = new Set();
    render(reference.pruneMessages, reducedIndexer(real, methods, touched));
    for (const name of touched) counts.touched[name][c.group] = (counts.touched[name][c.group] ?? 0) + 1;
    const variants = subsetsOf([...touched]);
    for (const name of methods) variants.push(methods.filter((m) => m !== name));
    for (const names of variants) {
      const want = render(reference.pruneMessages, reducedIndexer(real, names));
      const got = render(dropIn.pruneMessages, reducedIndexer(real, names));
      counts.renders++;
      if (want.error && got.error) counts.bothFail++;
      if (missingIn(want.error)) counts.missingNamed++;
      const diff = compare(want, got);
      if (diff !== null && counts.differences.length < 10) counts.differences.push(`${c.name} with [${names.join(', ')}]: ${diff}`);
    }
  }
  return counts;
}

module.exports = { runSubsets, reducedIndexer, compare, outcome, missingIn };

if (require.main === module) {
  runSubsets(process.argv[2]).then((counts) => process.stdout.write(JSON.stringify(counts)));
}
