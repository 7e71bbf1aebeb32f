'use strict';

// The session files a list of paths names, for the replay and the tune (the
// API and the CLI alike): a file as it is, a directory as every *.jsonl
// under it (recursively, sorted by name, as pi keeps one folder of sessions
// per project). A path that cannot be read, or a directory that holds no
// session file, is a problem named with that path; the caller decides
// whether it stops the run.

const fs = require('node:fs');
const path = require('node:path');

/**
 * `{ files, problems }`: the session files under `paths`, and for each path
 * that gave none `{ path, message }`.
 */
function sessionFiles(paths) {
  const files = [];
  const problems = [];
  const walk = (dir, out) => {
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
      if (e.isDirectory()) walk(p, out);
      else if (e.isFile() && e.name.endsWith('.jsonl')) out.push(p);
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
    walk(p, found);
    if (found.length === 0) problems.push({ path: p, message: 'no *.jsonl session file under this directory' });
    files.push(...found);
  }
  return { files: [...new Set(files)], problems };
}

module.exports = { sessionFiles };
