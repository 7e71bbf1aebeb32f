'use strict';

// Long runs of messages reach the engine as v8.serialize bytes in Node
// (js/wire.js, src/json/v8_wire.rs). The engine must read from them exactly
// the text JSON.stringify writes, and decline whatever it cannot tell from
// them, so that JS sends JSON.stringify's own text instead:
// (a) for generated values (lone surrogates, every kind of number, holes,
//     undefined, integer keys, arrays left sparse by structuredClone), the
//     text read is JSON.stringify's, byte for byte, or the bytes are
//     declined;
// (b) what JSON.stringify writes differently from the serialized form
//     (toJSON, dates, maps, shared and cyclic objects, boxed primitives,
//     named properties on arrays) never takes the wire;
// (c) stateless pruneMessages on a conversation long enough to be sent in
//     slices answers as the pure-JS oracle does, with the wire taken where
//     it can be and JSON text elsewhere.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fc = require('fast-check');

const { pruneMessages, backend } = require('..');
const pure = { v24: require('../js/pure/v2.4.js'), v29: require('../js/pure/v2.9.js') };
const { wireBytes, wireAvailable } = require('../js/wire.js');

// wireToJson is a test-only export (helpers/test-binding.js).
const { testBinding, NO_CARGO } = require('./helpers/test-binding.js');
const native = backend === 'native' && !NO_CARGO ? testBinding() : null;
const NO_WIRE = native === null ? 'no native addon with the test exports' : !wireAvailable() ? 'this runtime has no v8.serialize format the engine reads' : false;
const SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : 20261202;

function serialize(value) {
  return require('node:v8').serialize(value);
}

// ---------------------------------------------------------------------------
// (a) generated values

const KEYS = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.constantFrom('0', '1', '7', '10', '01', '-1', '4294967294', '4294967295', '__proto__', 'toJSON', 'a', 'role'),
);

const LEAF = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: fc.constantFrom('"', '\\', '\n', '\u0001', '\u001f', '\u007f', 'é', 'ÿ', '€', '\u2028', 'a'), maxLength: 40 }),
  fc.double(),
  fc.integer(),
  fc.constantFrom(0, -0, 2 ** 31, -(2 ** 31), 2 ** 31 - 1, 2 ** 32, 2 ** 53, 1e21, 1.5e-7, 0.1, Number.MAX_VALUE, Number.MIN_VALUE, NaN, Infinity, -Infinity),
  fc.constantFrom(true, false, null, undefined),
);

const { value: VALUE } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, LEAF, tie('array'), tie('sparse'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 5 }),
  sparse: fc.sparseArray(tie('value'), { maxLength: 6, maxNumElements: 3 }),
  object: fc.dictionary(KEYS, tie('value'), { maxKeys: 5 }),
}));

test('(a) the text read from v8.serialize bytes is JSON.stringify\'s', { skip: NO_WIRE }, () => {
  let read = 0;
  fc.assert(
    fc.property(VALUE, (value) => {
      // Wrapped in an array, as the engine gets messages; and again after
      // structuredClone, which leaves arrays that V8 writes as sparse.
      for (const v of [[value], structuredClone([value])]) {
        const text = native.wireToJson(serialize(v));
        const want = JSON.stringify(v);
        // Everything generated here is plain data: nothing to decline.
        assert.notEqual(text, null, `declined: ${want}`);
        assert.equal(text.toString('utf8'), Buffer.from(want).toString('utf8'));
        assert.ok(text.equals(Buffer.from(want)), `bytes of ${want}`);
        read++;
      }
    }),
    { seed: SEED, numRuns: 1500 },
  );
  assert.ok(read >= 3000);
});

test('(a) strings at every offset of a 16-byte block, Latin-1 and two-byte', { skip: NO_WIRE }, () => {
  const specials = ['"', '\\', '\n', '\u0000', '\u001f', 'é', 'ÿ', '€', '\ud83d\ude00', '\ud800', '\udc00'];
  for (let n = 0; n < 40; n++) {
    for (const s of specials) {
      for (const at of [0, 7, 8, 15, 16, 17, n]) {
        const str = 'a'.repeat(n).slice(0, at) + s + 'b'.repeat(n);
        const v = [str, { [str]: str }];
        assert.equal(native.wireToJson(serialize(v)).toString('utf8'), JSON.stringify(v), JSON.stringify(str));
      }
    }
  }
});

// ---------------------------------------------------------------------------
// (b) values JSON writes differently

class WithToJSON {
  constructor() {
    this.x = 1;
  }
  toJSON() {
    return 'custom';
  }
}

test('(b) what JSON.stringify writes differently never takes the wire', { skip: NO_WIRE }, () => {
  const shared = { a: 1 };
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  const named = [1, 2];
  named.extra = 'x';
  const cases = {
    'a toJSON method on a class': [new WithToJSON()],
    'a date': [{ at: new Date(0) }],
    'a map': [{ m: new Map([[1, 2]]) }],
    'an object seen twice': [shared, { again: shared }],
    'a cycle': [cyclic],
    'a boxed string': [{ s: new String('x') }],
    'a named property on an array': [named],
    'a function': [{ f() {} }],
    'a typed array': [{ t: new Uint8Array(2) }],
  };
  for (const [what, messages] of Object.entries(cases)) {
    const bytes = wireBytes(messages, 0, messages.length);
    // Declined on the JS side, or by the engine.
    assert.ok(bytes === null || native.wireToJson(bytes) === null, what);
  }
  // A toJSON put on Object.prototype applies to every object.
  Object.prototype.toJSON = function () { // eslint-disable-line no-extend-native
    return 'everything';
  };
  try {
    assert.equal(wireBytes([{ a: 1 }], 0, 1), null);
  } finally {
    delete Object.prototype.toJSON;
  }
  // Plain and null-prototype objects do take it.
  const plain = [{ a: [1, { b: 'c' }] }, Object.assign(Object.create(null), { d: 2 })];
  assert.equal(native.wireToJson(wireBytes(plain, 0, 2)).toString(), JSON.stringify(plain));
});

// ---------------------------------------------------------------------------
// (c) end to end

// A conversation of `turns` turns (four messages each) with thinking, tool
// calls, errored calls with long arguments, summarized results, and values
// JSON spells in its own way in fields the render copies or rewrites.
function longConversation(turns, odd) {
  const messages = [];
  // 2.4.3 keys records by tool-call id, 2.9.1 by occurrence (id@timestamp).
  const empty = () => ({ records: {}, dedupAliases: {}, shortRefs: {}, refAliases: {}, chains: [], summaryBodies: [] });
  const state = { '2.4.3': empty(), '2.9.1': empty() };
  let ts = 1_770_000_000_000;
  for (let t = 0; t < turns; t++) {
    const id = `call_${t}`;
    const errored = t % 7 === 3;
    messages.push({ role: 'user', content: [{ type: 'text', text: `step ${t}: caf\u00e9 \u{1F600} "q" \\ \n\t\u0001 \ud800` }], timestamp: ts++, ...(odd && t % 50 === 5 ? { extra: odd(t) } : {}) });
    messages.push({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: `plan ${t}\n${'x'.repeat(t % 13)}`, thinkingSignature: 'c2ln' },
        { type: 'toolCall', id, name: errored ? 'bash' : 'read', arguments: errored ? { command: `build ${'y'.repeat(600)}` } : { path: `src/f${t}.ts`, n: -0, big: 2 ** 53, tiny: 1.5e-7 } },
      ],
      api: 'anthropic-messages',
      provider: 'anthropic',
      model: 'm',
      usage: { input: t, output: 0.5, cost: { total: NaN } },
      stopReason: 'toolUse',
      timestamp: ts++,
    });
    const resultTimestamp = ts;
    messages.push({ role: 'toolResult', toolCallId: id, toolName: errored ? 'bash' : 'read', content: [{ type: 'text', text: `out ${t} ${'z\n'.repeat(t % 17)}` }], isError: errored, timestamp: ts++, details: { holes: [1, , 3], u: undefined } }); // eslint-disable-line no-sparse-arrays
    messages.push({ role: 'assistant', content: [{ type: 'text', text: `done ${t}` }], api: 'anthropic-messages', provider: 'anthropic', model: 'm', stopReason: 'stop', timestamp: ts++ });
    if (t % 3 === 0 && !errored) {
      const record = { toolName: 'read', summary: `read f${t} \u20ac`, args: { path: `src/f${t}.ts` }, turnIndex: t };
      state['2.4.3'].records[id] = record;
      state['2.9.1'].records[`${id}@${resultTimestamp}`] = { toolCallId: id, resultTimestamp, ...record };
    }
  }
  const config = {
    chainCompression: { enabled: true, stripFinalAssistantThinking: true },
    errorPurge: { enabled: true, cooldownTurns: 2, minArgChars: 500 },
    thinkingStrip: { enabled: true, keepLastTurns: 16 },
  };
  return { messages, state, config, boundary: messages[messages.length - 200].timestamp };
}

function sameResult(got, want, label) {
  assert.equal(got.pruned, want.pruned, `${label}: pruned`);
  assert.equal(got.beforeChars, want.beforeChars, `${label}: beforeChars`);
  assert.equal(got.afterChars, want.afterChars, `${label}: afterChars`);
  assert.deepEqual(got.stats, want.stats, `${label}: stats`);
  assert.equal(JSON.stringify(got.messages), JSON.stringify(want.messages), `${label}: messages`);
}

const production = backend === 'native' ? require('../loader.js') : null;
test('(c) stateless pruneMessages of a long conversation answers as the oracle, wire or not', { skip: production === null ? 'no native addon' : false }, () => {
  // Counts the slices sent each way: as v8.serialize bytes the engine
  // took, and as JSON text (Bun, or a slice holding a date).
  const P = production.NativeEngine.prototype;
  const originals = { syncLaterWire: P.syncLaterWire, syncLater: P.syncLater };
  let taken = 0;
  let asText = 0;
  if (originals.syncLaterWire) {
    P.syncLaterWire = function (...args) {
      const ok = originals.syncLaterWire.apply(this, args);
      if (ok) taken++;
      return ok;
    };
  }
  P.syncLater = function (...args) {
    asText++;
    return originals.syncLater.apply(this, args);
  };
  try {
    const odd = (t) => (t % 100 === 5 ? { at: new Date(t) } : { sparse: structuredClone([1, , 2]), n: -0 }); // eslint-disable-line no-sparse-arrays
    for (const [label, c] of [['plain', longConversation(400)], ['with dates in some slices', longConversation(400, odd)]]) {
      for (const dialect of ['2.4.3', '2.9.1']) {
        const { thinkingStrip, ...config29 } = c.config;
        const config = dialect === '2.9.1' ? config29 : c.config;
        const options = { state: c.state[dialect], config, thinkingStripBoundaryTimestamp: c.boundary, dialect };
        const want = (dialect === '2.9.1' ? pure.v29 : pure.v24).pruneMessages(structuredClone(c.messages), { ...options });
        const got = pruneMessages(structuredClone(c.messages), options);
        assert.ok(want.pruned && want.stats.stubbed > 0 && want.stats.purgedArgs > 0, `${label}: the case prunes`);
        sameResult(got, want, `${label} ${dialect}`);
      }
    }
  } finally {
    for (const [name, f] of Object.entries(originals)) if (f) P[name] = f;
  }
  assert.ok(asText > 0, 'some slices went as JSON text');
  if (!NO_WIRE) {
    assert.ok(taken > 0, 'some slices went as v8.serialize bytes');
  }
});
