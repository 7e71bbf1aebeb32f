'use strict';

// Every file the CLI writes (--svg's chart, --contexts' files of what each
// policy sent), checked by one guard before any session file is read, as
// ripgrep never writes over an input: never over a session file of the run;
// never into a directory being replayed, nor one holding a session file of
// the run (what --contexts writes is .jsonl, which the next replay of that
// directory would read as sessions); never over an existing file unless
// condense-native wrote it (an SVG carries its mark) or --force says so; and
// only where this process can write, so a directory that cannot be written
// is a usage error before the replay, not a failure blamed on a session
// file after it. Paths are compared as the filesystem resolves them
// (symbolic links followed), so a link cannot sneak an input past.

const fs = require('node:fs');
const path = require('node:path');

/** `p` with its symbolic links resolved; the part that does not exist yet kept as written. */
function real(p) {
  const abs = path.resolve(p);
  const rest = [];
  let at = abs;
  for (;;) {
    try {
      return path.join(fs.realpathSync(at), ...rest);
    } catch {
      const up = path.dirname(at);
      if (up === at) return abs;
      rest.unshift(path.basename(at));
      at = up;
    }
  }
}

const inside = (child, parent) => child === parent || child.startsWith(parent.endsWith(path.sep) ? parent : `${parent}${path.sep}`);

function statOf(p) {
  try {
    return fs.statSync(p);
  } catch {
    return null;
  }
}

// mkdir -p one folder at a time: Node's recursive mkdir retries forever
// where the system answers ENOENT for a folder whose parent exists (/proc).
function makeDirs(dir) {
  const missing = [];
  let at = path.resolve(dir);
  while (statOf(at) === null && at !== path.dirname(at)) {
    missing.unshift(at);
    at = path.dirname(at);
  }
  for (const d of missing) fs.mkdirSync(d);
}

/**
 * Why files cannot be created in `dir`, tried for real (a probe file
 * created and removed, the folders made first when `make`), so a
 * read-only filesystem or a path the system refuses is found now; null
 * when they can.
 */
function unwritableDir(dir, make) {
  const st = statOf(dir);
  if (st === null && !make) return `the folder ${dir} does not exist (create it first)`;
  if (st !== null && !st.isDirectory()) return `${dir} is a file, not a directory`;
  const probe = path.join(dir, `.condense-native-${process.pid}.probe`);
  try {
    if (st === null) makeDirs(dir);
    fs.writeFileSync(probe, '');
    fs.unlinkSync(probe);
    return null;
  } catch (e) {
    if (e.code === 'ENOTDIR') {
      let at = path.resolve(dir);
      while (at !== path.dirname(at) && (statOf(at) === null || statOf(at).isDirectory())) at = path.dirname(at);
      return `${at} is a file, not a directory`;
    }
    return `cannot write in ${dir} (${e.code || e.message})`;
  }
}

/**
 * The first reason `flag` may not write `targets` (file paths), or null.
 * `inputs` is `{ files, dirs }`: the session files of the run and the
 * directories given to it. An existing target is refused without `force`
 * unless `isOurs(file)` (a file condense-native wrote, `ours` naming what
 * that is); `make` creates the targets' folders (the replay would), else
 * they must exist. Nothing is created unless every other check passed.
 */
function refusal(flag, targets, inputs, { force = false, isOurs = null, ours = 'file', make = false } = {}) {
  const files = inputs.files.map((f) => real(f));
  const existing = [];
  for (const target of targets) {
    if (files.includes(real(target))) return `${flag} ${target} is a session file of this run: it would be overwritten (name another file)`;
    const st = statOf(target);
    if (st !== null && st.isDirectory()) return `${flag} ${target} is a directory`;
    if (st === null) continue;
    try {
      fs.accessSync(target, fs.constants.W_OK);
    } catch (e) {
      return `${flag} ${target}: cannot write it (${e.code || e.message})`;
    }
    if (!(isOurs && isOurs(target))) existing.push(target);
  }
  if (existing.length > 0 && !force) {
    const more = existing.length > 1 ? ` (and ${existing.length - 1} more file${existing.length > 2 ? 's' : ''} this run would write)` : '';
    const not = isOurs ? ` and is not ${ours === 'file' ? 'a file' : `an ${ours}`} condense-native wrote` : '';
    return `${flag} ${existing[0]} exists${more}${not}: add --force to replace ${existing.length > 1 ? 'them' : 'it'}, or name another ${targets.length > 1 ? 'directory' : 'file'}`;
  }
  for (const dir of new Set(targets.map((t) => path.dirname(t)))) {
    const cannot = unwritableDir(dir, make);
    if (cannot) return `${flag}: ${cannot}`;
  }
  return null;
}

/**
 * The first reason --contexts may not write into `dir`, or null: the
 * directory itself (a session file, holding one, inside a directory being
 * replayed, a file), then each file it would write (`refusal`).
 */
function contextsRefusal(dir, targets, inputs, force) {
  const flag = `--contexts ${dir}`;
  const at = real(dir);
  const st = statOf(dir);
  const files = inputs.files.map((f) => ({ given: f, real: real(f) }));
  if (st !== null && !st.isDirectory()) {
    if (files.some((f) => f.real === at)) return `${flag} is a session file of this run: it would be overwritten (name a new directory)`;
    return `${flag} is a file, not a directory`;
  }
  const held = files.find((f) => inside(f.real, at));
  if (held) return `${flag} holds ${held.given}, a session file of this run: name a new directory, outside the sessions`;
  for (const d of inputs.dirs) {
    if (inside(at, real(d))) return `${flag} lies inside ${d}, a directory being replayed: the files written there would be read as sessions next time (name a directory outside it)`;
  }
  return refusal('--contexts', targets, inputs, { force, make: true });
}

/**
 * The folder --contexts writes each session file's policies to: `dir`
 * itself for one file; for several, a folder per file named by its path
 * under the folder all of them share (without `.jsonl`), so two files of
 * the same name in different folders never share one. A name that would
 * hold another file's folder keeps its `.jsonl` (`a.jsonl/` beside `a/`).
 */
function contextsDirs(dir, files) {
  const out = new Map();
  if (files.length === 0) return out;
  if (files.length === 1) {
    out.set(files[0], dir);
    return out;
  }
  const abs = files.map((f) => path.resolve(f));
  let common = path.dirname(abs[0]);
  while (!abs.every((f) => inside(path.dirname(f), common))) common = path.dirname(common);
  const rel = abs.map((f) => path.relative(common, f).replace(/^[A-Za-z]:/, ''));
  const bare = rel.map((r) => r.replace(/\.jsonl$/, ''));
  files.forEach((f, i) => {
    const holdsOther = bare.some((b, j) => j !== i && (b === bare[i] || b.startsWith(`${bare[i]}${path.sep}`)));
    out.set(f, path.join(dir, holdsOther ? rel[i] : bare[i]));
  });
  return out;
}

module.exports = { refusal, contextsRefusal, contextsDirs };
