'use strict';
// The tune (issues 23 and 46): on generated sessions
// (helpers/tune-sessions.js) and the sample, the recommendation is the
// choice of the configurations tied with the cheapest of the grid under the
// same cost model, the ranking and the front follow from the figures, and
// every configuration's figures equal a plain `replay` with that
// configuration (release 2.4.3 -> policy 'config', 2.9.1 -> '2.9.1', none
// -> 'none'; the thinking boundary from the configuration's keepLastTurns,
// as the tune computes it). Savings are against what the user pays today
// (no pruning while pi-condense's master switch is off); the block to paste
// sets only what changes. With several files: the leave-one-file-out
// check, per-file costs that add up and match single-file tunes, and one
// answer for every order of the files. tuneAsync and typed errors. Runs
// under `node --test` and `bun test`.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { tune, tuneAsync, replay, backend } = require('..');
const { tuneSession } = require('./helpers/tune-sessions.js');

const skip = backend !== 'native' && 'the tune needs the native binding';
const ROOT = path.join(__dirname, '..');
const SAMPLE = path.join(ROOT, 'sample', 'session.jsonl');
const POLICY = { '2.4.3': 'config', '2.9.1': '2.9.1', none: 'none' };
// 121 configurations and a gated twin of each but no pruning.
const GRID = 241;

let dir = null;
let files = [];

before(() => {
  if (skip) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-tune-'));
  files = [1, 2, 3].map((seed) => {
    const f = path.join(dir, `session-${seed}.jsonl`);
    fs.writeFileSync(f, tuneSession(seed));
    return f;
  });
});

after(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const key = (c) => JSON.stringify([c.release, c.contextPrune, c.gate]);
const sameConfig = (a, b, what) => {
  assert.equal(a.release, b.release, `${what}: release`);
  assert.deepEqual(a.contextPrune, b.contextPrune, `${what}: contextPrune`);
  assert.deepEqual(a.gate, b.gate, `${what}: gate`);
};
const near = (got, want, what) => {
  const scale = Math.max(Math.abs(want), Math.abs(got), 1e-300);
  assert.ok(Math.abs(got - want) <= 1e-9 * scale, `${what}: ${got} != ${want}`);
};
const cost = (c, fileIdx) => fileIdx.reduce((n, f) => n + c.perFileCostUsd[f], 0);

/** What holds of every tune: ranking, front, current, sums. */
function checkShape(r, nFiles) {
  assert.equal(r.files.length, nFiles);
  const inGrid = r.ranked.length === GRID;
  assert.ok(inGrid || r.ranked.length === GRID + 1, `ranked.length ${r.ranked.length}`);
  assert.equal(new Set(r.ranked.map(key)).size, r.ranked.length, 'every configuration once');
  assert.equal(r.ranked.filter((c) => c.release === 'none').length, 1);
  assert.equal(r.ranked.filter((c) => c.release === '2.4.3').length, 2 * 96 + (inGrid || r.current.release !== '2.4.3' ? 0 : 1));
  assert.equal(r.ranked.filter((c) => c.release === '2.9.1').length, 2 * 24 + (inGrid || r.current.release !== '2.9.1' ? 0 : 1));
  // Every gated twin has the tune's gate settings and its ungated sibling.
  const twins = r.ranked.filter((c) => c.gate !== null);
  assert.equal(twins.length, 120);
  for (const c of twins) {
    assert.deepEqual(c.gate, { horizon: 'auto', budget: 0.8 });
    assert.ok(r.ranked.some((d) => d.gate === null && key({ ...d, gate: c.gate }) === key(c)), `${key(c)}: its sibling`);
  }
  const cur = r.ranked.filter((c) => c.current);
  assert.equal(cur.length, 1, 'exactly one current configuration');
  sameConfig(cur[0], r.current, 'current');
  assert.equal(cur[0].costUsd, r.current.costUsd);
  assert.equal(cur[0].charsSent, r.current.charsSent);
  for (let i = 0; i < r.ranked.length; i++) {
    const c = r.ranked[i];
    assert.equal(c.perFileCostUsd.length, nFiles);
    near(cost(c, [...c.perFileCostUsd.keys()]), c.costUsd, `${key(c)} per-file costs add up`);
    assert.ok(Number.isInteger(c.charsSent) && c.charsSent > 0);
    assert.ok(Number.isInteger(c.rewrites) && c.rewrites >= 0);
    if (i > 0) {
      const p = r.ranked[i - 1];
      assert.ok(p.costUsd < c.costUsd || (p.costUsd === c.costUsd && p.charsSent <= c.charsSent), `ranked ${i - 1} before ${i}`);
    }
    // The front: exactly the configurations no other is both cheaper-or-equal and smaller-or-equal than, one strictly.
    const dominated = r.ranked.some((d) => d.costUsd <= c.costUsd && d.charsSent <= c.charsSent && (d.costUsd < c.costUsd || d.charsSent < c.charsSent));
    assert.equal(c.front, !dominated, `${key(c)} front`);
  }
  assert.ok(r.ranked.some((c) => c.front));
  const rec = r.ranked.find((c) => key(c) === key(r.recommended));
  assert.ok(rec, 'the recommendation is a ranked configuration');
  assert.equal(rec.costUsd, r.recommended.costUsd);
  assert.equal(rec.charsSent, r.recommended.charsSent);
  // Today: yours when pruning is on, else no pruning.
  const none = r.ranked.find((c) => c.release === 'none');
  assert.equal(r.today.costUsd, r.today.pruningOn ? r.current.costUsd : none.costUsd);
  near(r.recommended.saving, 1 - r.recommended.costUsd / r.today.costUsd, 'saving');
  const { min, median, max } = r.recommended.savingSpread;
  assert.ok(min <= median && median <= max, `savingSpread ${min} ${median} ${max}`);
  // The ties: a prefix of the ranking within a cent (or 0.1%) of the
  // first; the recommendation is one of them.
  const { count, withinUsd } = r.recommended.ties;
  assert.equal(withinUsd, Math.max(0.01, 0.001 * r.ranked[0].costUsd));
  assert.deepEqual(r.ranked.map((c) => c.tied), r.ranked.map((_, i) => i < count));
  assert.ok(r.ranked.every((c) => c.tied === c.costUsd - r.ranked[0].costUsd <= withinUsd), 'tied is within the tolerance');
  assert.ok(rec.tied, 'the recommendation is tied with the cheapest');
  checkPaste(r);
  // The changes walk from today to the recommendation: their savings add
  // up, each lands on a priced configuration, the last on it.
  const steps = r.recommended.changes;
  near(steps.reduce((n, x) => n + x.savingUsd, 0) + r.recommended.costUsd, r.today.costUsd, 'the changes add up');
  for (const x of steps) assert.ok(r.ranked.some((c) => c.costUsd === x.costUsd), `a step lands on a priced configuration: ${JSON.stringify(x)}`);
  if (steps.length) assert.equal(steps[steps.length - 1].costUsd, r.recommended.costUsd);
}

/** The block to paste: only the keys that change, and pruning switched on. */
function checkPaste(r) {
  const rec = r.recommended;
  const p = rec.paste;
  if (rec.release === 'none') {
    if (r.today.pruningOn) assert.deepEqual(p, { settings: { contextPrune: { enabled: false } }, release: null, turnsPruning: 'off' });
    else assert.equal(p, null);
    return;
  }
  const changed = Object.keys(rec.contextPrune).filter((k) => k !== 'enabled' && JSON.stringify(rec.contextPrune[k]) !== JSON.stringify(r.current.contextPrune[k]));
  const want = {};
  if (!r.today.pruningOn) want.enabled = true;
  for (const k of changed) want[k] = rec.contextPrune[k];
  const release = rec.release === r.current.release ? null : rec.release;
  if (Object.keys(want).length === 0 && !rec.gate && !release) {
    assert.equal(p, null, 'nothing to change');
    return;
  }
  const settings = {};
  if (Object.keys(want).length) settings.contextPrune = want;
  if (rec.gate) settings.condenseNative = { gate: { enabled: true, ...rec.gate } };
  assert.deepEqual(p, { settings, release, turnsPruning: r.today.pruningOn ? null : 'on' });
  // Nothing the ties say does not matter is set.
  for (const part of rec.ties.free) assert.ok(!(part in want), `${part} does not matter, yet is set`);
}

/** Every ranked configuration equals a plain replay of `file` with it. */
function checkAgainstReplay(r, file, options = {}) {
  for (const c of r.ranked) {
    const policy = c.gate ? `${POLICY[c.release]}+gate` : POLICY[c.release];
    const config = { contextPrune: c.release === 'none' ? {} : c.contextPrune };
    const rp = replay(file, { ...options, policies: [policy], config, thinkingBoundary: 'config', ...(c.gate ? { gate: c.gate } : {}) });
    const p = rp.policies.find((x) => x.policy === policy);
    assert.ok(p, `policy ${policy} in the replay`);
    const what = `${path.basename(file)} ${key(c)}`;
    near(c.costUsd, p.costUsd, `${what} costUsd`);
    assert.equal(c.charsSent, p.charsSent, `${what} charsSent`);
    assert.equal(c.rewrites, p.callClasses.partial + p.callClasses.rewrite + p.callClasses.expired, `${what} rewrites`);
  }
}

test('one generated session: the recommendation is the cheapest, the ranking and front follow', { skip }, () => {
  const r = tune(files[0]);
  checkShape(r, 1);
  assert.equal(r.ranked.length, GRID, 'the default configuration is in the grid');
  assert.equal(r.heldOut, null);
  assert.ok(r.modelCalls > 30, `modelCalls ${r.modelCalls}`);
  assert.equal(r.today.pruningOn, false, "pi-condense's defaults: pruning is off");
  assert.ok(r.recommended.costUsd - r.ranked[0].costUsd <= r.recommended.ties.withinUsd);
  const { min, median, max } = r.recommended.savingSpread;
  assert.equal(min, max);
  assert.equal(median, max);
  near(median, r.recommended.saving, 'one file: the spread is the saving');
  // The session is long enough that the configurations differ.
  assert.ok(new Set(r.ranked.map((c) => c.costUsd)).size >= 20, 'costs differ between configurations');
  // Each render-time setting the grid varies changes the bill somewhere.
  for (const setting of ['thinkingStrip', 'purgeErrors', 'chainCompression']) {
    const groups = new Map();
    for (const c of r.ranked.filter((x) => x.release === '2.4.3')) {
      const k = JSON.stringify({ ...c.contextPrune, [setting]: null });
      groups.set(k, [...(groups.get(k) ?? []), c.costUsd]);
    }
    assert.ok([...groups.values()].some((costs) => new Set(costs).size > 1), `${setting} changes the cost`);
  }
  assert.ok(r.ranked[0].costUsd < r.ranked.find((c) => c.release === 'none').costUsd);
});

test('one generated session: every configuration equals a plain replay with its config', { skip }, () => {
  const r = tune(files[0]);
  checkAgainstReplay(r, files[0]);
});

test('the sample session: cheapest recommendation, every configuration equals a plain replay', { skip }, () => {
  const r = tune(SAMPLE);
  checkShape(r, 1);
  // 16 configurations of 2.9.1 behind the gate cost the same; the error
  // purge and the grace do not matter; the one that changes least from
  // pi-condense's defaults is recommended, and pruning is switched on.
  assert.equal(r.recommended.ties.count, 16);
  assert.deepEqual(r.recommended.ties.free, ['purgeErrors', 'recoveryGraceTurns']);
  assert.equal(r.recommended.release, '2.9.1');
  assert.deepEqual(r.recommended.paste, {
    settings: { contextPrune: { enabled: true }, condenseNative: { gate: { enabled: true, horizon: 'auto', budget: 0.8 } } },
    release: '2.9.1',
    turnsPruning: 'on',
  });
  assert.deepEqual(r.recommended.changes.map((x) => x.parts), [['enabled'], ['release'], ['gate']]);
  assert.equal(Math.round(r.recommended.changes[0].savingUsd * 1e4), Math.round((r.today.costUsd - r.current.costUsd) * 1e4));
  checkAgainstReplay(r, SAMPLE);
});

test('a current configuration outside the grid is ranked too, and equals a plain replay', { skip }, () => {
  const config = { contextPrune: { purgeErrors: { enabled: true, cooldownTurns: 3, minArgChars: 700 }, thinkingStrip: { enabled: true, keepLastTurns: 12 } } };
  const r = tune(files[1], { config });
  checkShape(r, 1);
  assert.equal(r.ranked.length, GRID + 1);
  assert.equal(r.current.release, '2.4.3');
  assert.deepEqual(r.current.contextPrune.purgeErrors, config.contextPrune.purgeErrors);
  assert.deepEqual(r.current.contextPrune.thinkingStrip, config.contextPrune.thinkingStrip);
  // The grid is built over the user's block: their settings stay where the grid does not set them.
  for (const c of r.ranked) if (c.contextPrune) assert.deepEqual(c.contextPrune.protectedPaths, ['**/skills/**/*.md']);
  const cur = r.ranked.find((c) => c.current);
  checkAgainstReplay({ ranked: [cur, r.ranked[0]] }, files[1]);
  const r29 = tune(files[1], { config, release: '2.9.1' });
  assert.equal(r29.current.release, '2.9.1');
  checkShape(r29, 1);
  checkAgainstReplay({ ranked: [r29.ranked.find((c) => c.current)] }, files[1]);
});

test('several sessions: leave one file out, per-file costs match single-file tunes', { skip }, () => {
  const all = [...files, SAMPLE];
  const r = tune(all);
  checkShape(r, all.length);
  assert.deepEqual(r.files, all);
  const h = r.heldOut;
  assert.ok(h, 'heldOut with two or more files');
  assert.deepEqual(h.perFile.map((x) => x.file), all);
  const none = r.ranked.find((c) => c.release === 'none');
  const today = r.today.pruningOn ? r.ranked.find((c) => c.current) : none;
  all.forEach((file, f) => {
    const x = h.perFile[f];
    // Chosen on the other files: among those tied there with the cheapest.
    const others = all.map((_, g) => g).filter((g) => g !== f);
    const chosen = r.ranked.find((c) => key(c) === key(x.chosen));
    assert.ok(chosen, `${file}: the chosen configuration is ranked`);
    const cheapest = Math.min(...r.ranked.map((c) => cost(c, others)));
    assert.ok(cost(chosen, others) - cheapest <= Math.max(0.01, 0.001 * cheapest) + 1e-12, `${file}: chosen ties with the cheapest on the others`);
    // Priced on the file left out.
    assert.equal(x.costUsd, chosen.perFileCostUsd[f]);
    assert.equal(x.todayUsd, today.perFileCostUsd[f]);
    near(x.saving, 1 - x.costUsd / x.todayUsd, `${file}: saving`);
  });
  near(h.todayUsd, cost(today, [0, 1, 2, 3]), 'today over the files');
  near(h.savingUsd, h.perFile.reduce((n, x) => n + x.todayUsd - x.costUsd, 0), 'the held-out saving');
  near(h.saving, h.savingUsd / h.todayUsd, 'held-out fraction');
  assert.equal(h.withinUsd, Math.max(0.01, 0.001 * h.todayUsd));
  assert.equal(h.filesSaving, h.perFile.filter((x) => x.saving > 0).length);
  const sorted = h.perFile.map((x) => x.saving).sort((a, b) => a - b);
  assert.deepEqual(h.savingSpread, { min: sorted[0], median: sorted[2], max: sorted[3] });
  for (const [f, x] of h.perFile.entries()) {
    const others = all.map((_, g) => g).filter((g) => g !== f);
    const cheapest = Math.min(...r.ranked.map((c) => cost(c, others)));
    assert.equal(x.todayTied, cost(today, others) - cheapest <= Math.max(0.01, 0.001 * cheapest), `${x.file}: todayTied`);
  }
  const undecided = h.perFile.some((x) => x.todayTied);
  assert.equal(h.keepYours, h.savingUsd > h.withinUsd ? null : undecided || h.savingUsd > 0 ? 'too small to tell' : 'not above zero');
  // These sessions save with pruning on, and the saving holds out.
  assert.equal(h.keepYours, null);
  assert.ok(h.saving > 0.3, `held-out saving ${h.saving}`);
  const cur = today;
  // Per-file savings of the recommendation.
  const rec = r.ranked.find((c) => key(c) === key(r.recommended));
  const savings = all.map((_, f) => 1 - rec.perFileCostUsd[f] / cur.perFileCostUsd[f]).sort((a, b) => a - b);
  r.perFile.forEach((x, f) => assert.equal(x.todayUsd, cur.perFileCostUsd[f]));
  near(r.recommended.savingSpread.min, savings[0], 'spread min');
  near(r.recommended.savingSpread.max, savings[savings.length - 1], 'spread max');
  near(r.recommended.savingSpread.median, savings[Math.floor(savings.length / 2)], 'spread median');
  // Each file's column equals that file's own tune.
  all.forEach((file, f) => {
    const one = new Map(tune(file).ranked.map((c) => [key(c), c]));
    for (const c of r.ranked) {
      const o = one.get(key(c));
      assert.ok(o, `${key(c)} in ${file}'s tune`);
      near(c.perFileCostUsd[f], o.costUsd, `${path.basename(file)} ${key(c)}`);
    }
  });
  // A directory is its *.jsonl files, sorted.
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'not a session');
  const byDir = tune(dir);
  assert.deepEqual(byDir.files, files);
  const byList = tune(files);
  assert.deepEqual(byDir, byList);
});

// Issue 46: the three generated sessions each have another cheapest
// configuration; every order of them gives one answer.
test('every order of the same files: one recommendation, ranking and held-out check', { skip }, () => {
  const alone = files.map((f) => tune(f).recommended);
  assert.equal(new Set(alone.map(key)).size, 3, `the cheapest of each session differ: ${alone.map(key).join(' | ')}`);
  const orders = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
  const answers = orders.map((order) => {
    const r = tune(order.map((i) => files[i]));
    checkShape(r, 3);
    const byFile = (list) => Object.fromEntries(list.map((x) => [x.file, x]));
    return {
      recommended: r.recommended,
      today: r.today,
      ranked: r.ranked.map((c) => [key(c), c.costUsd, c.charsSent, c.tied, c.front]),
      heldOut: { ...r.heldOut, perFile: byFile(r.heldOut.perFile) },
      perFile: byFile(r.perFile),
    };
  });
  for (const [i, a] of answers.entries()) assert.deepEqual(a, answers[0], `order ${orders[i].join('')}`);
  // The answer is the ranking's: the choice of the group tied with its first.
  const r = tune(files);
  const first = r.ranked[0];
  assert.ok(r.recommended.costUsd - first.costUsd <= r.recommended.ties.withinUsd);
  assert.ok(r.ranked.find((c) => key(c) === key(r.recommended)).tied);
});

test('tuneAsync gives the same result as tune and reports progress', { skip }, async () => {
  const calls = [];
  const got = await tuneAsync(files, { onProgress: (done, total) => calls.push([done, total]) });
  assert.deepEqual(got, tune(files));
  assert.ok(calls.length > 0, 'progress reported');
  const [done, total] = calls[calls.length - 1];
  assert.ok(total > 0, `total ${total}`);
  assert.equal(done, total);
  for (const [d, t] of calls) assert.ok(d <= t && d >= 0, `progress ${d}/${t}`);
  for (let i = 1; i < calls.length; i++) assert.ok(calls[i][0] >= calls[i - 1][0], 'done never goes back');
  assert.deepEqual(await tuneAsync(files[0]), tune(files[0]));
});

test('bad input throws typed errors', { skip }, async () => {
  const code = (fn) => {
    try {
      fn();
    } catch (e) {
      return e.code;
    }
    return 'no error';
  };
  for (const fn of [() => tune([]), () => tune('/no/such/file.jsonl'), () => tune(files[0], { release: '3.0' }), () => tune(42), () => tune(files[0], { cacheModel: 'bogus' })]) {
    const c = code(fn);
    assert.match(String(c), /^ERR_CONDENSE_/, `${fn}: ${c}`);
  }
  assert.equal(code(() => tune('/no/such/file.jsonl')), 'ERR_CONDENSE_IO');
  const empty = fs.mkdtempSync(path.join(dir, 'empty-'));
  assert.match(String(code(() => tune(empty))), /^ERR_CONDENSE_/);
  for (const args of [[[]], ['/no/such/file.jsonl'], [files[0], { release: '3.0' }], [files[0], { onProgress: 5 }]]) {
    await assert.rejects(() => tuneAsync(...args), (e) => /^ERR_CONDENSE_/.test(e.code));
  }
});

test("replay's config row and the tune's current cost the same, with the same boundary rule", { skip }, () => {
  for (const file of [SAMPLE, files[0]]) {
    const what = path.basename(file);
    for (const thinkingBoundary of [undefined, 'recorded', 'config']) {
      const options = thinkingBoundary ? { thinkingBoundary } : {};
      const t = tune(file, options);
      const p = replay(file, { ...options, policies: ['config'] }).policies.find((x) => x.policy === 'config');
      assert.equal(t.current.costUsd, p.costUsd, `${what} ${thinkingBoundary}: USD`);
      assert.equal(t.current.charsSent, p.charsSent, `${what} ${thinkingBoundary}: chars`);
      assert.deepEqual(t.current.thinkingBoundary, p.thinkingBoundary, `${what} ${thinkingBoundary}: rule`);
      if (thinkingBoundary) assert.deepEqual(t.current.thinkingBoundary, { rule: thinkingBoundary, reason: 'as asked' });
    }
  }
  // The sample's frontier entries follow 2.4.3's rule on the branch pi is
  // on (scripts/make-sample.js), so they are what the config computes.
  assert.deepEqual(tune(SAMPLE).current.thinkingBoundary, { rule: 'recorded', reason: "the session's frontier entries, written under this config" });
  // The generated sessions write the boundary 2.4.3 computes at each flush.
  assert.deepEqual(tune(files[0]).current.thinkingBoundary, { rule: 'recorded', reason: "the session's frontier entries, written under this config" });
  // Another keepLastTurns than the one the frontier was written under.
  const k8 = { contextPrune: { thinkingStrip: { enabled: true, keepLastTurns: 8 } } };
  assert.equal(tune(files[0], { config: k8 }).current.thinkingBoundary.rule, 'config');
  assert.equal(tune(files[0], { release: '2.9.1' }).current.thinkingBoundary, null);
});

test('a file that cannot be read or parsed is left out and listed; perFile says what the recommendation saves', { skip }, () => {
  const mixed = fs.mkdtempSync(path.join(dir, 'mixed-'));
  const good = [1, 2].map((seed) => {
    const f = path.join(mixed, `b-${seed}.jsonl`);
    fs.copyFileSync(files[seed - 1], f);
    return f;
  });
  const garbage = path.join(mixed, 'a-garbage.jsonl');
  fs.writeFileSync(garbage, 'not json\n{"type":"message"}\n');
  const blank = path.join(mixed, 'c-empty.jsonl');
  fs.writeFileSync(blank, ' \n\n');
  const r = tune(mixed);
  assert.deepEqual(r.files, good);
  assert.deepEqual(r.errors, [
    { file: garbage, error: { code: 'ERR_CONDENSE_INVALID_SESSION', message: 'not a pi session: the first entry is not a header {type:"session", id:<string>}', line: 2 } },
    { file: blank, error: { code: 'ERR_CONDENSE_INVALID_SESSION', message: 'empty file: not a pi session', line: null } },
  ]);
  assert.deepEqual(r.perFile.map((f) => f.file), good);
  const none = r.ranked.find((c) => c.release === 'none');
  const cur = r.ranked.find((c) => c.current);
  const rec = r.ranked.find((c) => key(c) === key(r.recommended));
  r.perFile.forEach((f, i) => {
    const one = tune(good[i]);
    assert.equal(f.modelCalls, one.modelCalls);
    assert.equal(f.noneUsd, none.perFileCostUsd[i]);
    assert.equal(f.currentUsd, cur.perFileCostUsd[i]);
    assert.equal(f.recommendedUsd, rec.perFileCostUsd[i]);
    assert.equal(f.currentUsd, one.current.costUsd);
    assert.deepEqual(f.skippedLines, { count: 0, lines: [] });
  });
  assert.equal(r.modelCalls, r.perFile.reduce((n, f) => n + f.modelCalls, 0));
  assert.ok(r.perFile.every((f) => f.noneUsd > 0 && f.currentUsd > 0));
  // An unreadable path is left out the same way.
  const gone = path.join(mixed, 'gone.jsonl');
  const withGone = tune([good[0], gone]);
  assert.deepEqual(withGone.files, [good[0]]);
  assert.equal(withGone.errors[0].file, gone);
  assert.equal(withGone.errors[0].error.code, 'ERR_CONDENSE_IO');
  assert.ok(withGone.errors[0].error.message && !withGone.errors[0].error.message.includes(gone), withGone.errors[0].error.message);
  // No file left: an error naming every file.
  assert.throws(
    () => tune([garbage, blank]),
    (e) => e.code === 'ERR_CONDENSE_INVALID_SESSION' && e.message.includes(`${garbage}:2: not a pi session`) && e.message.includes(`${blank}: empty file: not a pi session`),
  );
  assert.throws(() => tune(blank), (e) => e.code === 'ERR_CONDENSE_INVALID_SESSION' && e.message.endsWith('empty file: not a pi session'));
});

const CORPUS_SMALL = path.join(ROOT, '..', 'shared', 'corpus', 'small.json');

test('a converted corpus file records at each flush the boundary 2.4.3 computes: replay and tune agree on it', { skip: skip || (!fs.existsSync(CORPUS_SMALL) && '../shared/corpus is absent') }, () => {
  const { convert, computeThinkingBoundary } = require('../scripts/corpus-to-session.js');
  const corpus = JSON.parse(fs.readFileSync(CORPUS_SMALL, 'utf8'));
  const text = convert(corpus);
  const file = path.join(dir, 'corpus-small.jsonl');
  fs.writeFileSync(file, text);
  // Each frontier entry: the rule over the assistants written before it.
  const times = [];
  let prev;
  const boundaries = [];
  for (const line of text.trimEnd().split('\n')) {
    const e = JSON.parse(line);
    if (e.type === 'message' && e.message.role === 'assistant') times.push(e.message.timestamp);
    if (e.type === 'custom' && e.customType === 'context-prune-frontier') {
      prev = computeThinkingBoundary(times, 16, prev);
      assert.equal(e.data.thinkingStripBoundaryTimestamp, prev, `frontier ${boundaries.length}`);
      boundaries.push(prev);
    }
  }
  // The boundary moves with the session, not the final one everywhere.
  assert.ok(new Set(boundaries.filter((b) => b !== undefined)).size > 10, `${new Set(boundaries).size} distinct boundaries`);
  assert.ok(boundaries.some((b) => b !== corpus.thinkingBoundaryTimestamp));
  // Under the default ('auto') the replay finds the recorded frontier equal
  // to the config's at every render, and renders what 'recorded' renders.
  const auto = replay(file, { policies: ['config'], renders: true }).policies[1];
  const recorded = replay(file, { policies: ['config'], renders: true, thinkingBoundary: 'recorded' }).policies[1];
  assert.deepEqual(auto.thinkingBoundary, { rule: 'recorded', reason: "the session's frontier entries, written under this config" });
  assert.deepEqual(auto.renders.map((x) => x.outputHash), recorded.renders.map((x) => x.outputHash));
  assert.equal(auto.costUsd, recorded.costUsd);
  const t = tune(file);
  assert.equal(t.current.costUsd, auto.costUsd);
  assert.deepEqual(t.current.thinkingBoundary, auto.thinkingBoundary);
});
