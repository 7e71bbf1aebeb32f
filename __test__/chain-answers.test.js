'use strict';
// js/chain-answers.js: the chain answers a kept conversation brings up to
// date after a flush equal the answers asked afresh. Random flushes against
// an indexer answering as pi-condense's own does (a chain's summary: the
// registered summaries naming one of its dropped ids, or its range
// summary): summaries registered, chains added, replaced and removed, some
// with dropped ids that are not a list or entries that are not objects.
// After each, `update` must give every entry the answer asked afresh, the
// same block-id counts and index as answers built from nothing, and a
// `from` no later than the first entry that differs. Runs under
// `node --test` and `bun test`.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { ChainAnswers, sameAnswer } = require('../js/chain-answers.js');
const { rng } = require('./helpers/session-gen.js');

const idsOf = (entry) => entry.droppedToolCallIds;

function world(seed) {
  const { next: rnd, int: pick } = rng(seed);
  const registry = [];
  let asked = 0;
  const summaryOf = (entry) => {
    asked++;
    try {
      const range = entry.rangeSummaryText;
      if (range !== undefined && range !== null) return { v: range };
      const ids = new Set(idsOf(entry));
      return { v: registry.filter((s) => s.ids.some((id) => ids.has(id))).map((s) => s.text).join('\n\n') };
    } catch {
      return { throws: true };
    }
  };
  let n = 0;
  const chain = () => {
    n++;
    const r = rnd();
    if (r < 0.05) return null;
    if (r < 0.1) return { blockId: `b${n}`, droppedToolCallIds: 'c1' };
    if (r < 0.4) return { blockId: `b${n}`, droppedToolCallIds: [`c${pick(12)}`], rangeSummaryText: `Fused {b${pick(n)}} ${n}.` };
    return { blockId: `b${n}`, droppedToolCallIds: [`c${pick(12)}`, `c${pick(12)}`] };
  };
  return { rnd, pick, registry, summaryOf, chain, asked: () => asked };
}

test('chain answers brought up to date after random flushes equal the answers asked afresh', () => {
  for (let seed = 1; seed <= 40; seed++) {
    const w = world(seed);
    let entries = [w.chain(), w.chain(), w.chain()];
    const kept = new ChainAnswers(entries.slice(), entries.map(w.summaryOf), idsOf);
    for (let step = 0; step < 30; step++) {
      const before = { entries: kept.entries.slice(), summaries: kept.summaries.slice() };
      const registered = w.registry.length;
      const next = entries.slice();
      const r = w.rnd();
      // A summary naming a tool call, or (rarely) a character of the ids
      // that are one string, which `new Set(ids)` splits.
      if (r < 0.4) w.registry.push({ ids: [w.rnd() < 0.15 ? 'c' : `c${w.pick(12)}`], text: `S${step}` });
      if (r > 0.2 && r < 0.6) next.push(w.chain());
      else if (r >= 0.6 && r < 0.75 && next.length > 0) next[w.pick(next.length)] = w.chain();
      else if (r >= 0.75 && r < 0.85 && next.length > 0) next.splice(w.pick(next.length), 1);
      else if (r >= 0.85) next.splice(w.pick(next.length + 1), 0, w.chain());
      const touched = new Set(w.registry.slice(registered).flatMap((s) => s.ids));
      let p = 0;
      while (p < Math.min(entries.length, next.length) && next[p] === entries[p]) p++;
      entries = next;
      const asked = w.asked();
      const from = kept.update(entries.slice(), p, touched, w.summaryOf);
      const what = `seed ${seed} step ${step}`;
      const fresh = new ChainAnswers(entries.slice(), entries.map(w.summaryOf), idsOf);
      assert.equal(kept.summaries.length, entries.length, what);
      kept.summaries.forEach((a, k) => assert.ok(sameAnswer(a, fresh.summaries[k]), `${what}: entry ${k}`));
      assert.deepEqual([...kept.refs].sort(), [...fresh.refs].sort(), `${what}: block ids cited`);
      assert.deepEqual([...kept.byId].sort(), [...fresh.byId].sort(), `${what}: dropped ids`);
      assert.deepEqual([kept.loose, kept.strays], [fresh.loose, fresh.strays], `${what}: loose and stray entries`);
      entries.forEach((e, k) => {
        if (e === null || typeof e !== 'object' || entries.indexOf(e) !== entries.lastIndexOf(e)) return;
        assert.equal(kept.answerOf(e), kept.summaries[k], `${what}: the answer of entry ${k} by its object`);
      });
      // Everything before `from` is what the engine keeps.
      for (let k = 0; k < from; k++) {
        assert.equal(entries[k], before.entries[k], `${what}: entry ${k} before from ${from}`);
        assert.ok(sameAnswer(kept.summaries[k], before.summaries[k]), `${what}: answer ${k} before from ${from}`);
      }
      // The entry at `from`, if any, differs (or the list got shorter).
      if (from < entries.length && from < before.entries.length) {
        const same = entries[from] === before.entries[from] && sameAnswer(kept.summaries[from], before.summaries[from]);
        assert.ok(!same, `${what}: from ${from} is not the first difference`);
      }
      // With no summary registered, only the new entries and the strays are asked.
      if (touched.size === 0) {
        const strays = entries.slice(0, p).filter((e) => e === null || typeof e !== 'object').length;
        assert.ok(w.asked() - fresh.entries.length - asked <= entries.length - p + strays, `${what}: asked too much`);
      }
    }
  }
});
