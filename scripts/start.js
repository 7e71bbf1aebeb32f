'use strict';

// `npm start`: `condense-native replay` with no path, which replays the
// bundled sample session (sample/session.jsonl) and prints the policy
// table. Builds the addon first when no binary is present (a fresh clone).

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.join(__dirname, '..');

const hasBinary = fs.readdirSync(root).some((f) => /^condense-native\..*\.node$/.test(f));
if (!hasBinary) {
  console.error('No native binary yet: building it (npm run build)...');
  const r = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

require(path.join(root, 'cli', 'main.js'))
  .main(['replay'])
  .then((code) => {
    process.exitCode = code;
  });
