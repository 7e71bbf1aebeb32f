'use strict';

// The session files a list of paths names, for the replay and the tune (the
// API and the CLI alike): a file as it is, a directory as every *.jsonl
// under it (recursively, sorted by name, as pi keeps one folder of sessions
// per project). Symbolic links are followed as pi follows them when it
// lists sessions (a link named *.jsonl is a session, a link to a folder is
// a folder), a folder read once per path however many links reach it. A path
// that cannot be read, a link that leads nowhere, or a directory that holds
// no session file is a problem named with that path; the caller decides
// whether it stops the run. The same file reached twice (a link beside its
// target) is replayed once, and said in a note.

const fs = require('node:fs');
const path = require('node:path');

function realOf(p) {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/**
 * `{ files, problems, notes }`: the session files under `paths`; for each
 * path that gave none, or a link that leads nowhere, `{ path, message }`;
 * and `{ path, message }` notes for a file reached twice.
 */
function sessionFiles(paths) {
  const files = [];
  const problems = [];
  const notes = [];
  let seenDirs;
  const walk = (dir, out) => {
    const real = realOf(dir);
    if (seenDirs.has(real)) return;
    seenDirs.add(real);
    let entries;
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      problems.push({ path: dir, message: `cannot read the directory (${e.code || e.message})` });
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const p = path.join(dir, e.name);
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      if (e.isSymbolicLink()) {
        let stat;
        try {
          stat = fs.statSync(p);
        } catch (err) {
          // A link to a session that is gone: named, as a missing file is.
          if (e.name.endsWith('.jsonl')) problems.push({ path: p, message: `a symbolic link to ${fs.readlinkSync(p)}, which cannot be read (${err.code || err.message})` });
          continue;
        }
        isDir = stat.isDirectory();
        isFile = stat.isFile();
      }
      if (isDir) walk(p, out);
      else if (isFile && e.name.endsWith('.jsonl')) out.push(p);
    }
  };
  for (const p of paths) {
    let stat;
    try {
      stat = fs.statSync(p);
    } catch (e) {
      problems.push({ path: p, message: e.code === 'ENOENT' ? 'no such file or directory' : `cannot read it (${e.code || e.message})` });
      continue;
    }
    if (!stat.isDirectory()) {
      files.push(p);
      continue;
    }
    const found = [];
    const named = problems.length;
    seenDirs = new Set();
    walk(p, found);
    if (found.length === 0 && problems.length === named) problems.push({ path: p, message: 'no *.jsonl session file under this directory' });
    files.push(...found);
  }
  const byReal = new Map();
  const unique = [];
  for (const f of files) {
    const real = realOf(f);
    const first = byReal.get(real);
    if (first === undefined) {
      byReal.set(real, f);
      unique.push(f);
    } else if (first !== f) {
      notes.push({ path: f, message: `the same file as ${first}: replayed once` });
    }
  }
  return { files: unique, problems, notes };
}

module.exports = { sessionFiles };
