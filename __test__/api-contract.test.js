'use strict';
// The API's own contract for the mistakes a caller makes (issue 30 item 7,
// issue 42): a drop-in given an indexer without a method fails with
// ERR_CONDENSE_INVALID_ARGUMENT naming that method where its release's render
// calls it, and only there (the caller's array untouched); a replay config with a value of
// the wrong type fails with ERR_CONDENSE_INVALID_CONFIG naming its key path;
// and a replay told the user's release labels its policies.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');

const { backend, replay } = require('..');
const dropIn24 = require('../js/pi-condense-2.4.js');
const dropIn29 = require('../js/pi-condense-2.9.js');
const { loadVectors } = require('./helpers/vectors');

const SAMPLE = path.join(__dirname, '..', 'sample', 'session.jsonl');

test('a drop-in asks for an indexer method only where its release calls it, and names the one it lacks', () => {
  // Without ../shared the reference is absent; the oracle (the pure-JS
  // render, held against it in __test__/indexer-subsets.test.js) answers.
  for (const [release, dropIn, file] of [
    ['2.4.3', dropIn24, undefined],
    ['2.9.1', dropIn29, path.join(__dirname, 'fixtures', 'vectors-2.9.json')],
  ]) {
    // A vector that stubs with chain compression off: phase 1 asks, phase 3
    // does not.
    const c = loadVectors(file).find((v) => v.group === 'stub' && v.expected.pruned === true && !v.config.chainCompression?.enabled);
    const oracle = require(release === '2.4.3' ? '../js/pure/v2.4.js' : '../js/pure/v2.9.js');
    const seen = { renders: 0, failures: 0 };
    for (const missing of oracle.INDEXER_METHODS) {
      const inner = oracle.createIndexer(c.state);
      const indexer = {};
      for (const name of oracle.INDEXER_METHODS) if (name !== missing) indexer[name] = (...a) => inner[name](...a);
      const args = (messages) => (release === '2.4.3' ? [messages, indexer, c.config.chainCompression, c.config.errorPurge, c.config.thinkingStrip, c.config.protection, 0, undefined] : [messages, indexer, c.config.chainCompression, c.config.errorPurge, c.config.protection, 0]);
      let want;
      try {
        want = { value: oracle.pruneWithIndexer(...args(structuredClone(c.messages))) };
      } catch (error) {
        want = { error };
      }
      const messages = structuredClone(c.messages);
      const before = JSON.stringify(messages);
      if (want.error) {
        assert.equal(want.error.field, `indexer.${missing}`, want.error.message);
        assert.throws(
          () => dropIn.pruneMessages(...args(messages)),
          (e) => e.code === 'ERR_CONDENSE_INVALID_ARGUMENT' && e.message.includes(`indexer.${missing} must be a function`) && e.message.includes(`pi-condense ${release}`),
          `${release} without ${missing}`,
        );
        seen.failures++;
      } else {
        const got = dropIn.pruneMessages(...args(messages));
        assert.equal(JSON.stringify(got.messages), JSON.stringify(want.value.messages), `${release} without ${missing}`);
        assert.equal(got.afterChars, want.value.afterChars);
      }
      assert.equal(JSON.stringify(messages), before);
      seen.renders++;
    }
    // The vector reaches some methods and not others.
    assert.ok(seen.failures > 0 && seen.failures < seen.renders, `${release}: ${JSON.stringify(seen)}`);
  }
});

const skip = backend !== 'native' && 'the replay needs the native binding';

test('a replay config of the wrong type is ERR_CONDENSE_INVALID_CONFIG naming the key path', { skip }, () => {
  for (const [config, message] of [
    [{ contextPrune: { purgeErrors: { cooldownTurns: 'two' } } }, /contextPrune\.purgeErrors\.cooldownTurns must be a number >= 0, not the string "two"/],
    [{ thinkingStrip: { keepLastTurns: 'x' } }, /thinkingStrip\.keepLastTurns must be a number >= 0/],
    [{ recoveryGraceTurns: 'abc' }, /recoveryGraceTurns must be a number >= 0/],
    [{ contextPrune: { chainCompression: { enabled: 'yes' } } }, /contextPrune\.chainCompression\.enabled must be a boolean, not the string "yes"/],
    [{ contextPrune: { protectedTools: 'bash' } }, /contextPrune\.protectedTools must be an array of strings/],
    [{ errorPurge: { enabled: true, cooldownTurns: -1, minArgChars: 0 } }, /errorPurge\.cooldownTurns must be a number >= 0, not number -1/],
  ]) {
    assert.throws(() => replay(SAMPLE, { config, policies: ['none'] }), (e) => e.code === 'ERR_CONDENSE_INVALID_CONFIG' && message.test(e.message), JSON.stringify(config));
  }
  // pi-condense's other settings are not the render's: left alone.
  const ok = replay(SAMPLE, { config: { contextPrune: { summarizerModel: 42, pruneOn: 'agent-message' } }, policies: ['config'] });
  assert.equal(ok.modelCalls, 94);
});

test("a replay told the user's release labels its policies and marks theirs", { skip }, () => {
  const r = replay(SAMPLE, { policies: ['none', 'config', '2.9.1'], release: '2.9.1' });
  assert.deepEqual(
    r.policies.map((p) => [p.policy, p.label, p.yours]),
    [
      ['none', 'no pruning', false],
      ['config', 'pi-condense 2.4.3', false],
      ['2.9.1', 'pi-condense 2.9.1 (yours)', true],
    ],
  );
  const plain = replay(SAMPLE, { policies: ['config'] });
  assert.equal(plain.policies.find((p) => p.policy === 'config').yours, false);
  assert.throws(() => replay(SAMPLE, { release: '2.5.0' }), { code: 'ERR_CONDENSE_INVALID_ARGUMENT', message: /release must be one of '2\.4\.3', '2\.9\.1'/ });
});
