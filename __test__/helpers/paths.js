'use strict';

// Every way condense-native can answer one render, for the test that holds
// them to one answer (same-answer.test.js): `prune` and `Pruner.prune` on a
// Buffer, `pruneMessages` and `PruneSession.render` on an array, and the
// pi-condense drop-ins of the case's dialect, once with the pure oracle's
// indexer over the case's state (js/pure/v2.x.js `createIndexer`) and once
// with pi-condense's own ToolCallIndexer filled from it (when ../shared has
// the reference). The session and the drop-ins render the first half of the
// messages before the whole array, so the answer compared is a kept one.
//
// Run as a script (`node paths.js cases.json`), it answers every case with
// the backend its process loaded (CONDENSE_NATIVE_FORCE_FALLBACK=1 selects
// the pure-JS one) and prints `{backend, outcomes}` as JSON: the parent
// process compares backends that one process cannot hold together.

const path = require('node:path');
const { loadReference, fillIndexer, releaseArgs } = require('./indexer.js');

const ROOT = path.join(__dirname, '..', '..');

/** What one call gave, in a form that survives JSON. */
function outcome(fn) {
  try {
    const r = fn();
    // A no-op answers with the caller's array (or null for a Buffer).
    const messages = !r.pruned ? null : Buffer.isBuffer(r.messages) ? r.messages.toString('utf8') : JSON.stringify(r.messages);
    return { value: { pruned: r.pruned, beforeChars: r.beforeChars, afterChars: r.afterChars, messages } };
  } catch (error) {
    const { code, messageIndex, field } = error;
    return { error: { code, messageIndex, field, name: error.name, message: error.message } };
  }
}

const clone = (v) => JSON.parse(JSON.stringify(v));
const half = (messages) => (Array.isArray(messages) ? messages.slice(0, Math.floor(messages.length / 2)) : messages);

function dropInArgs(c, indexer) {
  return releaseArgs(c.dialect, indexer, c.config ?? {}, c.boundary ?? undefined);
}

/**
 * The outcome of every path on case `c` ({dialect, messages, state, config,
 * boundary}), by path name. `reference` is the dialect's reference modules
 * (loadReference) or null.
 */
function everyPath(c, reference) {
  const api = require(ROOT);
  const dropIn = require(path.join(ROOT, 'js', c.dialect === '2.9.1' ? 'pi-condense-2.9.js' : 'pi-condense-2.4.js'));
  const oracle = require(path.join(ROOT, 'js', 'pure', c.dialect === '2.9.1' ? 'v2.9.js' : 'v2.4.js'));
  const options = { state: c.state, config: c.config, thinkingStripBoundaryTimestamp: c.boundary ?? null, dialect: c.dialect };
  const bytes = Buffer.from(JSON.stringify(c.messages));
  const kept = (indexer) => () => {
    // A render of the first half first: an error there is not the answer.
    outcome(() => dropIn.pruneMessages(clone(half(c.messages)), ...dropInArgs(c, indexer)));
    return dropIn.pruneMessages(clone(c.messages), ...dropInArgs(c, indexer));
  };
  const out = {
    prune: outcome(() => api.prune(bytes, options)),
    'Pruner.prune': outcome(() => new api.Pruner(c.config, { dialect: c.dialect }).setState(c.state).prune(bytes, { thinkingStripBoundaryTimestamp: options.thinkingStripBoundaryTimestamp })),
    pruneMessages: outcome(() => api.pruneMessages(clone(c.messages), options)),
    'PruneSession.render': outcome(() => {
      const session = new api.PruneSession(options);
      try {
        outcome(() => session.render(clone(half(c.messages))));
        return session.render(clone(c.messages));
      } finally {
        session.close();
      }
    }),
    'drop-in, oracle indexer': outcome(kept(oracle.createIndexer(c.state))),
  };
  if (reference) out['drop-in, reference indexer'] = outcome(kept(fillIndexer(reference, c.dialect, c.state).indexer));
  return out;
}

async function main(file) {
  const cases = JSON.parse(require('node:fs').readFileSync(file, 'utf8'));
  const references = {};
  for (const d of ['2.4.3', '2.9.1']) references[d] = await loadReference(d);
  const outcomes = cases.map((c) => everyPath(c, references[c.dialect]));
  process.stdout.write(`${JSON.stringify({ backend: require(ROOT).backend, outcomes })}\n`);
}

if (require.main === module) {
  main(process.argv[2]).catch((e) => {
    console.error(e);
    process.exit(1);
  });
}

module.exports = { everyPath, outcome };
