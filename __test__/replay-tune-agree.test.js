'use strict';
// One answer (issue 30): a replay and a tune of the same file, with the
// same release and settings, price "yours" to the same USD and chars, with
// the same thinking-boundary rule, on the sample, generated sessions and
// the corpus files present in ../shared/corpus (converted to pi session
// files by scripts/corpus-to-session.js, which writes at each flush the
// boundary pi-condense 2.4.3 computes there). The huge corpus file is left
// out for time (its tune takes about 45 s here); the closing note of the
// issue gives it by hand.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { backend, replay, tune } = require('..');
const { tuneSession } = require('./helpers/tune-sessions.js');
const { convert } = require('../scripts/corpus-to-session.js');

const skip = backend !== 'native' && 'the replay needs the native binding';
const ROOT = path.join(__dirname, '..');
const CORPUS = path.join(ROOT, '..', 'shared', 'corpus');
const POLICY_OF = { '2.4.3': 'config', '2.9.1': '2.9.1' };

function files() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'condense-agree-'));
  const out = [['sample', path.join(ROOT, 'sample', 'session.jsonl')]];
  for (const seed of [3, 11]) {
    const f = path.join(dir, `generated-${seed}.jsonl`);
    fs.writeFileSync(f, tuneSession(seed));
    out.push([`generated ${seed}`, f]);
  }
  for (const name of ['small', 'medium', 'large']) {
    const from = path.join(CORPUS, `${name}.json`);
    if (!fs.existsSync(from)) continue;
    const f = path.join(dir, `${name}.jsonl`);
    fs.writeFileSync(f, convert(JSON.parse(fs.readFileSync(from, 'utf8'))));
    out.push([`corpus ${name}`, f]);
  }
  return out;
}

// The tune's row for `release` with the block of its current row (a tune
// prices both releases' configurations: one tune answers for both).
function rowOf(t, release) {
  if (t.current.release === release) return t.current;
  const { thinkingStrip: _a, ...block } = t.current.contextPrune;
  return t.ranked.find((r) => {
    if (r.release !== release || r.gate !== null) return false;
    const { thinkingStrip: _b, ...other } = r.contextPrune;
    return JSON.stringify(other) === JSON.stringify(block);
  });
}

test('replay and tune price your release and settings alike, on every file', { skip, timeout: 600000 }, () => {
  const settings = { contextPrune: { enabled: true, thinkingStrip: { enabled: true, keepLastTurns: 8 }, recoveryGraceTurns: 1 } };
  for (const [name, file] of files()) {
    // The corpus files with the defaults only (a tune of large takes seconds).
    for (const config of name.startsWith('corpus') ? [undefined] : [undefined, settings]) {
      const t = tune(file, { release: '2.4.3', config });
      for (const release of ['2.4.3', '2.9.1']) {
        const r = replay(file, { policies: ['none', POLICY_OF[release]], release, config });
        const yours = r.policies.find((p) => p.yours);
        const row = rowOf(t, release);
        const what = `${name}, ${release}${config ? ', settings' : ''}`;
        assert.ok(row, `${what}: the tune has a row for it`);
        assert.equal(row.costUsd, yours.costUsd, `${what}: USD`);
        assert.equal(row.charsSent, yours.charsSent, `${what}: chars`);
        if (release === '2.4.3') {
          assert.deepEqual(t.current.thinkingBoundary, yours.thinkingBoundary, `${what}: boundary rule`);
          assert.ok(['recorded', 'config'].includes(yours.thinkingBoundary.rule), what);
        } else {
          assert.equal(yours.thinkingBoundary, null, what);
        }
      }
    }
  }
});
