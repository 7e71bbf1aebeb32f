'use strict';

// `npm start`: prunes the bundled sample session with the native addon and
// prints what changed. Builds the addon first when no binary is present.

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.join(__dirname, '..');

function ensureBuilt() {
  const hasBinary = fs.readdirSync(root).some((f) => /^condense-native\..*\.node$/.test(f));
  if (hasBinary) return;
  console.log('No native binary yet: building it (npm run build)...');
  const r = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function timeMs(fn, runs) {
  const times = [];
  let result;
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    result = fn();
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return { result, median: median(times) };
}

function main() {
  ensureBuilt();
  const { Pruner } = require(root);
  const pure = require(path.join(root, 'js', 'pure.js'));
  const file = path.join(root, 'sample', 'session.json');
  const session = JSON.parse(fs.readFileSync(file, 'utf8'));
  const { messages, state, config, thinkingBoundaryTimestamp } = session;
  const bytes = Buffer.from(JSON.stringify(messages));

  const pruner = new Pruner(config).setState(state);
  const opts = { thinkingStripBoundaryTimestamp: thinkingBoundaryTimestamp };
  const native = timeMs(() => pruner.prune(bytes, opts), 50);
  const js = timeMs(() => pure.pruneMessages(messages, { state, config, ...opts }), 50);
  const r = native.result;
  const out = r.pruned ? JSON.parse(r.messages.toString('utf8')) : messages;
  const same = JSON.stringify(out) === JSON.stringify(js.result.messages) && r.afterChars === js.result.afterChars;

  const pct = (a, b) => (b ? ((100 * (b - a)) / b).toFixed(1) : '0.0');
  const s = r.stats;
  const lines = [
    `condense-native: pruned the bundled sample session (${path.relative(root, file)})`,
    '',
    `messages  ${messages.length} -> ${out.length}`,
    `chars     ${r.beforeChars} -> ${r.afterChars}  (${pct(r.afterChars, r.beforeChars)}% saved)`,
    '',
    'what each phase changed:',
    `  1 stub-replace    ${s.stubbed} tool results replaced by stubs`,
    `  2 error purge     ${s.purgedArgs} failed calls' arguments purged`,
    `  3 chain prune     ${s.chainDropped} messages dropped, ${s.chainInserted} compressed-chain blocks inserted, ` +
      `${s.finalThinkingStripped} final answers stripped of thinking`,
    `  4 thinking strip  ${s.thinkingStripped} assistant messages stripped of thinking`,
    '',
    'frontier:',
    `  boundary used       ${r.frontier.thinkingStripBoundaryTimestamp}`,
    `  next at a flush     ${r.frontier.nextThinkingStripBoundaryTimestamp}`,
    '',
    `time (median of 50): native ${native.median.toFixed(3)} ms on ${(bytes.length / 1e6).toFixed(2)} MB, ` +
      `pure JS ${js.median.toFixed(3)} ms`,
    `same result as the pure-JS implementation: ${same ? 'yes' : 'NO'}`,
  ];
  console.log(lines.join('\n'));
  if (!same) process.exit(1);
}

main();
