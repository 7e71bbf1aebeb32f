'use strict';
// Hostile session files (issue 15 item 7): each gets pi's behaviour where
// pi has a sane one (checked against pi itself), otherwise a typed error
// naming the line; never a hang, a crash or a partly loaded result.
// Runs under `node --test` and `bun test`.

const { test } = require('node:test');
const assert = require('node:assert/strict');

const { loadSession, backend } = require('..');
const { importPi, importReference, oracle } = require('./helpers/pi-session.js');

const skip = backend !== 'native' && 'native binding absent';
const HEADER = JSON.stringify({ type: 'session', version: 3, id: 'h', timestamp: '2025-01-01T00:00:00.000Z', cwd: '/w' });
const T = '2025-01-01T00:00:01.000Z';
const user = (id, parentId, content = 'hi') =>
  JSON.stringify({ type: 'message', id, parentId, timestamp: T, message: { role: 'user', content, timestamp: 1 } });
const session = (...lines) => [HEADER, ...lines].join('\n') + '\n';

async function piSees(text) {
  const pi = await importPi();
  return oracle(pi, await importReference(), text);
}

function typed(text, code, line) {
  assert.throws(
    () => loadSession(Buffer.from(text)),
    (e) => e.code === code && e.line === line && e.message.startsWith(`<buffer>:${line}: `),
  );
}

test('parent cycles are errors naming the line (pi loops forever)', { skip }, () => {
  typed(session(user('a', 'a')), 'ERR_CONDENSE_INVALID_SESSION', 2);
  typed(session(user('a', 'c'), user('b', 'a'), user('c', 'b')), 'ERR_CONDENSE_INVALID_SESSION', 2);
  // A cycle off the active path is harmless, for pi too.
  const off = session(user('x', 'y'), user('y', 'x'), user('a', null));
  assert.equal(loadSession(Buffer.from(off)).messages.length, 1);
});

test('a byte-order mark makes pi refuse the file; the error names the first entry', { skip }, async () => {
  const text = `\ufeff${session(user('a', null))}`;
  assert.ok((await piSees(text)).openError);
  typed(text, 'ERR_CONDENSE_INVALID_SESSION', 2);
});

test('a truncated last line vanishes, as in pi', { skip }, async () => {
  const text = session(user('a', null), user('b', 'a')).slice(0, -20);
  const expected = await piSees(text);
  assert.equal(expected.messages.length, 1);
  assert.deepStrictEqual(loadSession(Buffer.from(text)).messages, expected.messages);
});

test('non-object lines are entries: a stray value last is the leaf, with an empty context', { skip }, async () => {
  for (const stray of ['42', '[1,2]', '"text"', 'true']) {
    const text = session(user('a', null), stray);
    const expected = await piSees(text);
    const got = loadSession(Buffer.from(text));
    assert.deepStrictEqual(got.messages, expected.messages);
    assert.deepStrictEqual(got.messages, []);
  }
  // In the middle they change nothing.
  const text = session(user('a', null), '42', user('b', 'a'));
  assert.deepStrictEqual(loadSession(Buffer.from(text)).messages, (await piSees(text)).messages);
});

test('invalid UTF-8 decodes to U+FFFD as pi decodes it', { skip }, async () => {
  const bad = [Buffer.from([0xff]), Buffer.from([0xe2, 0x82]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xf0, 0x9f, 0x98]), Buffer.from([0xc0, 0xaf])];
  const parts = [Buffer.from(`${HEADER}\n`)];
  bad.forEach((b, i) => {
    const parent = i ? `"m${i - 1}"` : 'null';
    parts.push(Buffer.from(`{"type":"message","id":"m${i}","parentId":${parent},"timestamp":"${T}","message":{"role":"user","timestamp":1,"content":"x`));
    parts.push(b, Buffer.from('y"}}\n'));
  });
  const bytes = Buffer.concat(parts);
  const expected = await piSees(bytes);
  const got = loadSession(bytes);
  assert.equal(got.messages.length, bad.length);
  assert.ok(got.messages.every((m) => m.content.includes('\ufffd')));
  assert.deepStrictEqual(got.messages, expected.messages);
});

test('nesting deeper than 1000 levels is a typed error naming the line; valid depth loads', { skip }, () => {
  const nest = (n) => `${'['.repeat(n)}${']'.repeat(n)}`;
  const entry = (n) => `{"type":"custom","id":"d","parentId":"a","timestamp":"${T}","data":${nest(n)}}`;
  // The entry is level 1, its data level 2.
  assert.equal(loadSession(Buffer.from(session(user('a', null), entry(999)))).messages.length, 1);
  typed(session(user('a', null), entry(1000)), 'ERR_CONDENSE_TOO_DEEP', 3);
  // Malformed deep text fails JSON.parse: pi drops it, so does the loader, without recursion.
  const broken = session(user('a', null), '['.repeat(5_000_000));
  assert.equal(loadSession(Buffer.from(broken)).messages.length, 1);
});

test('duplicate ids: the later line owns the id, as in pi', { skip }, async () => {
  const text = session(user('a', null, 'first'), user('b', 'a'), user('a', null, 'second'), user('c', 'a'));
  const expected = await piSees(text);
  assert.deepStrictEqual(loadSession(Buffer.from(text)).messages, expected.messages);
  assert.deepStrictEqual(expected.messages.map((m) => m.content), ['second', 'hi']);
});

test('a custom message dated in local time is an error naming the line (JS would read the host time zone)', { skip }, () => {
  const cm = JSON.stringify({ type: 'custom_message', customType: 'x', content: 'c', display: true, id: 'c', parentId: 'a', timestamp: '2025-01-01T10:00' });
  typed(session(user('a', null), cm), 'ERR_CONDENSE_INVALID_SESSION', 3);
  const utc = JSON.stringify({ type: 'custom_message', customType: 'x', content: 'c', display: true, id: 'c', parentId: 'a', timestamp: '2025-01-01T10:00Z' });
  assert.equal(loadSession(Buffer.from(session(user('a', null), utc))).messages[1].timestamp, Date.parse('2025-01-01T10:00Z'));
});

test('a 100 MB line loads (and a 100 MB garbage line is dropped)', { skip: skip || (process.env.CONDENSE_SKIP_BIG ? 'CONDENSE_SKIP_BIG is set' : false) }, () => {
  const big = 'x'.repeat(100 * 1024 * 1024);
  const text = session(user('a', null, big));
  const got = loadSession(Buffer.from(text));
  assert.equal(got.messages[0].content.length, big.length);
  const garbage = session(user('a', null), `{"type":"message","x":"${big}`);
  assert.equal(loadSession(Buffer.from(garbage)).messages.length, 1);
});
