'use strict';

// The live gate and the replay decide alike (issue 45): pi/gate.js, driven
// over a session file as pi would drive it (helpers/gate-drive.js: pi's
// context at each call, the drop-in on pi-condense's own indexer, the
// call's model, system prompt and time, pi's warms), takes the same
// decision at every call as the replay's gated walk of the file: both fit
// tokens per character on the answers before each call (src/cost/
// calibration.rs `Rolling`), keep the cache as the gate sees it and learn
// pi's warms. On the bundled sample (pauses, a warm, two model switches, a
// compaction, a branch) and on generated sessions with a tool that runs for
// minutes, a user back after the cache expired, a turn on another model.
// Node only, without pi's runtime; skips without ../shared's reference.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const { localNative } = require('./helpers/local-native.js');
const { SKIP_MESSAGE } = require('./helpers/indexer.js');
const { driveGate } = require('./helpers/gate-drive.js');
const { gateSession, thinkingSession } = require('./helpers/gate-sessions.js');

const native = localNative();
const shared = fs.existsSync(path.join(__dirname, '..', '..', 'shared', 'reference'));
const skip = !shared ? SKIP_MESSAGE : native === null ? 'no native binary loads here' : false;
const SAMPLE = path.join(__dirname, '..', 'sample', 'session.jsonl');
const CORPUS = path.join(__dirname, '..', '..', 'shared', 'corpus');

function files() {
  // The corpus's small and medium sessions (converted from another
  // format: no system message, usage that does not reconcile), when
  // ../shared has them.
  const corpus = ['small', 'medium']
    .filter((name) => fs.existsSync(path.join(CORPUS, `${name}.json`)))
    .map((name) => {
      const { convert } = require('../scripts/corpus-to-session.js');
      return [`the corpus's ${name} session`, convert(JSON.parse(fs.readFileSync(path.join(CORPUS, `${name}.json`), 'utf8')))];
    });
  return [
    ['the sample', fs.readFileSync(SAMPLE, 'utf8')],
    ...corpus,
    ...[1, 2, 3].map((seed) => [`generated session ${seed}`, gateSession(seed)]),
    ['generated session 4, a long horizon', gateSession(4, { turns: 6, longTool: 900_000 }), { horizon: 40 }],
    // Preserved thinking: the gate binds each answer's thinking as the
    // replay does, and keeps it or lets it drop alike.
    ['a session on Claude Opus 5.5', thinkingSession(2, 'claude-opus-5-5')],
    ['a session on Claude Opus 5.5, reasoning let go', thinkingSession(2, 'claude-opus-5-5'), { keepReasoning: false }],
  ];
}

for (const policy of ['config+gate', '2.9.1+gate']) {
  test(`${policy}: the live gate decides as the replay at every call`, { skip, timeout: 600_000 }, async () => {
    const { replay } = require('../index.js');
    const seen = { warms: 0, reasons: {} };
    for (const [name, text, settings] of files()) {
      const gateSettings = { enabled: true, ...settings };
      const { live, replayed, policy: p } = await driveGate(native, replay, text, policy, { gateSettings });
      assert.equal(live.length, replayed.length, name);
      for (let k = 0; k < live.length; k++) assert.equal(live[k], replayed[k], `${name}, call ${k}: the live gate ${live[k]}, the replay ${replayed[k]}`);
      seen.warms += p.warms.count;
      for (const r of replayed) seen.reasons[r] = (seen.reasons[r] ?? 0) + 1;
    }
    // The files exercise what the two could disagree on: warms, holds,
    // applies that pay, cold calls.
    assert.ok(seen.warms >= 4, JSON.stringify(seen));
    for (const r of ['cold', 'same', 'waits', 'pays']) assert.ok(seen.reasons[r] > 0, `${r}: ${JSON.stringify(seen)}`);
  });
}
