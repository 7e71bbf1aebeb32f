'use strict';

// The error codes: js/codes.js (JavaScript) and src/error.rs (Rust) name the
// same codes, read from the Rust source text. Every ERR_CONDENSE_ string
// anywhere in src/ is one that src/error.rs defines, and every one spelled in
// the JavaScript and TypeScript files is in js/codes.js.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const codes = require('../js/codes.js');

const ROOT = path.join(__dirname, '..');
const CODE_RE = /ERR_CONDENSE_[A-Z_]+/g;
// Thrown only by the JavaScript layer (PruneSession.close in js/session.js;
// js/sessionfile.js without the native binding).
const JS_ONLY = [codes.SESSION_CLOSED, codes.UNSUPPORTED];

function codesIn(file) {
  return new Set(fs.readFileSync(file, 'utf8').match(CODE_RE) ?? []);
}

function filesUnder(dir, ext) {
  return fs
    .readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(ext))
    .map((f) => path.join(dir, f));
}

const sorted = (set) => [...set].sort();

test('js/codes.js is frozen and spells each code once, under its own name', () => {
  assert.ok(Object.isFrozen(codes));
  const values = Object.values(codes);
  assert.equal(new Set(values).size, values.length, 'a code appears twice');
  for (const [name, code] of Object.entries(codes)) assert.equal(code, `ERR_CONDENSE_${name}`);
});

test('src/error.rs defines the codes of js/codes.js, except the JavaScript-only ones', () => {
  const rust = codesIn(path.join(ROOT, 'src', 'error.rs'));
  assert.ok(rust.size >= 8, `too few codes read from src/error.rs: ${sorted(rust)}`);
  const js = new Set(Object.values(codes));
  assert.deepEqual(sorted(rust), sorted(js).filter((code) => !JS_ONLY.includes(code)));
  for (const code of JS_ONLY) assert.ok(!rust.has(code), `${code} is in src/error.rs now: drop it from JS_ONLY`);
});

test('every code the Rust sources spell is defined in src/error.rs', () => {
  const defined = codesIn(path.join(ROOT, 'src', 'error.rs'));
  for (const file of filesUnder(path.join(ROOT, 'src'), '.rs')) {
    for (const code of codesIn(file)) assert.ok(defined.has(code), `${path.relative(ROOT, file)}: ${code}`);
  }
});

test('every code the JavaScript and TypeScript files spell is in js/codes.js', () => {
  const known = new Set(Object.values(codes));
  const files = [
    ...['index.js', 'index.mjs', 'index.d.ts', 'index.d.mts', 'loader.js'].map((f) => path.join(ROOT, f)),
    ...filesUnder(path.join(ROOT, 'js'), '.js'),
    ...filesUnder(path.join(ROOT, 'cli'), '.js'),
    ...filesUnder(path.join(ROOT, 'pi'), '.js'),
  ].filter((f) => fs.existsSync(f));
  let seen = 0;
  for (const file of files) {
    for (const code of codesIn(file)) {
      seen++;
      assert.ok(known.has(code), `${path.relative(ROOT, file)}: ${code} is not in js/codes.js`);
    }
  }
  assert.ok(seen > 10);
});
