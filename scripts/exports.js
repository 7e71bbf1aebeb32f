#!/usr/bin/env node
'use strict';

// No export without an importer (issue 43): lists every member a module of
// js/, cli/ or pi/ (or loader.js) puts on `module.exports` that no other
// file loading that module takes (tests, scripts and benches included).
// An export nobody imports is dead code or a helper used only inside its
// own file, and a reader cannot tell which. The
// package's public entries (package.json main and exports) are for users
// and exempt, as is the default export of pi's extension (pi loads it).
// Exit 1 when it lists anything; __test__/exports.test.js holds it at none.

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const SKIPPED_DIRS = new Set(['node_modules', 'target', 'npm-cache']);
const SOURCE = /\.(c|m)?(js|ts)$/;

function walk(dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.') || SKIPPED_DIRS.has(e.name)) continue;
    const full = path.join(dir, e.name);
    if (e.isDirectory()) walk(full, out);
    else if (SOURCE.test(e.name)) out.push(full);
  }
  return out;
}

// The public entries, as repository paths: `api`, what package.json's main
// and exports name (every member is for users); `loaded`, pi's extensions
// (pi loads the default export; other members need an importer).
function publicEntries() {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const api = [pkg.main];
  const collect = (v) => {
    if (typeof v === 'string') api.push(v);
    else if (v && typeof v === 'object') Object.values(v).forEach(collect);
  };
  collect(pkg.exports);
  const full = (list) => new Set(list.map((t) => path.join(ROOT, t)));
  return { api: full(api), loaded: full(pkg.pi?.extensions ?? []) };
}

// The text with its comments blanked (strings and template literals kept,
// regular expressions taken as code: good enough for what is read here).
function withoutComments(text) {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

// The top-level entries of the object literal opening at `open` (a `{`):
// the text of each, split at commas outside brackets and strings.
function entriesOf(code, open) {
  const entries = [];
  let depth = 0;
  let start = open + 1;
  for (let i = open; i < code.length; i++) {
    const c = code[i];
    if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      while (j < code.length && code[j] !== c) j += code[j] === '\\' ? 2 : 1;
      i = j;
    } else if (c === '{' || c === '(' || c === '[') depth++;
    else if (c === '}' || c === ')' || c === ']') {
      depth--;
      if (depth === 0) {
        entries.push(code.slice(start, i));
        return entries;
      }
    } else if (c === ',' && depth === 1) {
      entries.push(code.slice(start, i));
      start = i + 1;
    }
  }
  throw new Error('module.exports object literal not closed');
}

/**
 * What a module exports: `{ names, whole }`, `names` the members of a
 * `module.exports = { ... }` literal and of `module.exports.x =`; `whole`
 * when module.exports is set to something else (a function, a frozen
 * object), which then only needs an importer.
 */
function exportsOf(file) {
  const code = withoutComments(fs.readFileSync(file, 'utf8'));
  const names = [];
  let whole = false;
  for (const m of code.matchAll(/^module\.exports\s*=\s*/gm)) {
    const at = m.index + m[0].length;
    if (code[at] !== '{') {
      whole = true;
      continue;
    }
    for (const entry of entriesOf(code, at)) {
      const text = entry.trim();
      if (text === '' || text.startsWith('...')) continue;
      const name = /^(?:async\s+|get\s+|set\s+)?\*?\s*(['"]?)([\w$]+)\1/.exec(text);
      if (!name) throw new Error(`${path.relative(ROOT, file)}: cannot read the export ${text}`);
      names.push(name[2]);
    }
  }
  for (const m of code.matchAll(/^(?:module\.)?exports\.([\w$]+)\s*=/gm)) names.push(m[1]);
  return { names, whole };
}

// An importer that keeps a module whole (hands it on, or reads it in a way
// not followed here): any name it spells may be a use.
const WHOLE = null;

// What one import takes, read around the call at code[start..end): the
// member read off the call, the keys destructured from it (or named in an
// `import { }`), or the members read off the name it is bound to; WHOLE
// otherwise.
function takenBy(code, start, end) {
  const member = /^\s*\??\.\s*([\w$]+)/.exec(code.slice(end));
  if (member) return new Set([member[1]]);
  const before = code.slice(Math.max(0, start - 4000), start);
  const keys = /(?:const|let|var)\s*\{([^{}]*)\}\s*=\s*(?:await\s+)?$/.exec(before) ?? /\bimport\s+(?:type\s+)?\{([^{}]*)\}\s*$/.exec(before);
  if (keys) {
    return new Set(
      keys[1]
        .split(',')
        .map((k) => /^\s*([\w$]+)/.exec(k))
        .filter(Boolean)
        .map((k) => k[1]),
    );
  }
  const bound = /(?:const|let|var)\s+([\w$]+)\s*=\s*(?:await\s+)?$/.exec(before) ?? /\bimport\s+(?:\*\s+as\s+)?([\w$]+)\s*$/.exec(before);
  if (!bound) return WHOLE;
  const name = bound[1].replace(/\$/g, '\\$');
  const taken = new Set();
  for (const m of code.matchAll(new RegExp(`(^|[^\\w$.])${name}(?![\\w$])(\\s*\\??\\.\\s*([\\w$]+)|\\s*=(?!=)|\\s+from\\b)?`, 'g'))) {
    if (m[3]) taken.add(m[3]);
    else if (!m[2]) return WHOLE; // the binding used other than by a member
  }
  return taken;
}

// The modules a source file loads, each with what it takes (a Set of
// names, or WHOLE): `require(...)` (or a require of its own making, as
// pi/extension.js's `ownRequire`) and `import` of a relative path,
// resolved; a `path.join(..., 'dir', 'file.js')` argument matched by its
// literal parts (each of the module's folders, in order, and its name).
function loadsOf(file, code, modules) {
  const loaded = new Map();
  const take = (mod, taken) => {
    const had = loaded.get(mod);
    if (had === WHOLE || taken === WHOLE) loaded.set(mod, WHOLE);
    else loaded.set(mod, new Set([...(had ?? []), ...taken]));
  };
  const resolve = (spec) => {
    const base = path.resolve(path.dirname(file), spec);
    for (const c of [base, `${base}.js`, path.join(base, 'index.js')]) if (modules.has(c)) return c;
    return null;
  };
  const calls = /\b(?:[\w$]*[rR]equire|import)\s*\(([^;]*?)\)(?=\s*[;.,)\n])|\bfrom\s+(['"][^'"]+['"])/g;
  for (const m of code.matchAll(calls)) {
    const arg = m[1] ?? m[2];
    const taken = takenBy(code, m.index, m.index + m[0].length);
    const literals = [...arg.matchAll(/'([^']*)'|"([^"]*)"/g)].map((x) => x[1] ?? x[2]);
    if (literals.length === 1 && /^\s*['"]/.test(arg) && literals[0].startsWith('.')) {
      const hit = resolve(literals[0]);
      if (hit) take(hit, taken);
      continue;
    }
    for (const mod of modules) {
      const parts = path.relative(ROOT, mod).split(path.sep);
      const name = parts.pop();
      if (!literals.includes(name)) continue;
      let k = 0;
      for (const lit of literals) if (lit === parts[k]) k++;
      if (k === parts.length) take(mod, taken);
    }
  }
  return loaded;
}

/**
 * `{ missing, scanned, exported }`: `missing` lists as `{ module, name }`
 * each export that no other file loading its module takes.
 */
function unimported() {
  const files = walk(ROOT);
  const exempt = publicEntries();
  const scanned = files.filter((f) => {
    const rel = path.relative(ROOT, f).split(path.sep);
    return f.endsWith('.js') && (rel[0] === 'loader.js' || ['js', 'cli', 'pi'].includes(rel[0]));
  });
  const modules = new Set(scanned);
  const importers = new Map(scanned.map((m) => [m, []]));
  for (const file of files) {
    const code = withoutComments(fs.readFileSync(file, 'utf8'));
    for (const [mod, taken] of loadsOf(file, code, modules)) if (mod !== file) importers.get(mod).push({ code, taken });
  }
  const missing = [];
  let exported = 0;
  for (const mod of scanned) {
    const { names, whole } = exportsOf(mod);
    exported += names.length;
    const rel = path.relative(ROOT, mod);
    const users = importers.get(mod);
    if (exempt.api.has(mod)) continue;
    if (whole && users.length === 0 && !exempt.loaded.has(mod)) missing.push({ module: rel, name: 'module.exports' });
    for (const name of names) {
      const word = new RegExp(`(^|[^\\w$])${name.replace(/\$/g, '\\$')}([^\\w$]|$)`);
      const used = users.some(({ code, taken }) => (taken === WHOLE ? word.test(code) : taken.has(name)));
      if (!used) missing.push({ module: rel, name });
    }
  }
  return { missing, scanned: scanned.length, exported };
}

module.exports = { unimported };

if (require.main === module) {
  const { missing } = unimported();
  for (const { module: m, name } of missing) process.stdout.write(`${m}: ${name}\n`);
  process.exitCode = missing.length > 0 ? 1 : 0;
}
