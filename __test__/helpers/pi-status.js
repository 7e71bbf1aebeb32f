'use strict';
// For __test__/pi-status.test.js, run as a child process (the extension
// reads its environment, and the loader its fallback switch, once): pi's
// own extension loader loads condense-native's extension (pi/extension.js)
// over a small pi-condense 2.4.3 stand-in whose own render is the pure-JS
// oracle of 2.4.3 (same signature, same answer), and pi's ExtensionRunner
// emits a session's events: session_start, then per model call a turn_start,
// the context event with the first N messages of the bundled sample, and an
// agent_end (the request has gone out). Then `/condense-native` runs in
// print mode. Prints `{ renders, statuses, warnings }` as JSON, the events
// the extension announced on pi's bus.
//
//   node pi-status.js '{"work": DIR, "sizes": [10, 80, 90], "extension": FILE}'

const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const ROOT = path.join(__dirname, '..', '..');
const PI_NAME = '@earendil-works/pi-coding-agent';
const PI_DIR = path.join(ROOT, 'node_modules', ...PI_NAME.split('/'));
const PI_PKG = JSON.parse(fs.readFileSync(path.join(PI_DIR, 'package.json'), 'utf8'));

// pi's entry needs Node >= 22.19 (it imports fs.globSync); below that, the
// modules it re-exports the loader, the runner and the event bus from.
async function importPi() {
  const want = /^>=\s*(\d+)\.(\d+)/.exec(PI_PKG.engines.node);
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (process.versions.bun || major > Number(want[1]) || (major === Number(want[1]) && minor >= Number(want[2]))) return import(PI_NAME);
  const dist = (file) => pathToFileURL(path.join(PI_DIR, 'dist', ...file.split('/'))).href;
  const [extensions, bus] = await Promise.all([import(dist('core/extensions/index.js')), import(dist('core/event-bus.js'))]);
  return { ...extensions, createEventBus: bus.createEventBus };
}

/** A pi-condense 2.4.3 in `dir`: its entry imports pruneMessages from ./src/pruner.js, as the real one does. */
function standIn(dir) {
  const pure = JSON.stringify(path.join(ROOT, 'js', 'pure', 'v2.4.js'));
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'pi-condense', version: '2.4.3', pi: { extensions: ['./index.ts'] } }));
  fs.writeFileSync(path.join(dir, 'src', 'pruner.ts'), `export { pruneWithIndexer as pruneMessages } from ${pure};\n`);
  fs.writeFileSync(
    path.join(dir, 'index.ts'),
    `import { pruneMessages } from "./src/pruner.js";
import { createIndexer } from ${pure};
const state = ${JSON.stringify(JSON.parse(fs.readFileSync(path.join(ROOT, 'sample', 'session.json'), 'utf8')).state)};
export default function (pi) {
  const indexer = createIndexer(state);
  pi.on("context", (event) => {
    const r = pruneMessages(event.messages, indexer, { enabled: true, stripFinalAssistantThinking: true }, { enabled: true, cooldownTurns: 2, minArgChars: 500 },
      { enabled: false, keepLastTurns: 16 }, { protectedTools: [], protectedPaths: [] }, 3, undefined);
    return r.pruned ? { messages: r.messages } : undefined;
  });
}
`,
  );
  return dir;
}

async function main() {
  const { work, sizes, extension = path.join(ROOT, 'pi', 'extension.js') } = JSON.parse(process.argv[2]);
  const cwd = path.join(work, 'project');
  const agentDir = process.env.PI_CODING_AGENT_DIR;
  fs.mkdirSync(cwd, { recursive: true });
  process.chdir(cwd);
  const messages = JSON.parse(fs.readFileSync(path.join(ROOT, 'sample', 'session.json'), 'utf8')).messages;
  const pi = await importPi();
  const bus = pi.createEventBus();
  const heard = { renders: [], statuses: [], warnings: [] };
  bus.on('condense-native:render', (r) => heard.renders.push(r.path));
  bus.on('condense-native:status', (s) => heard.statuses.push(s.text));
  bus.on('condense-native:warning', (w) => heard.warnings.push(w));
  const loaded = await pi.discoverAndLoadExtensions([extension], cwd, agentDir, bus);
  if (loaded.errors.length > 0) throw new Error(JSON.stringify(loaded.errors));
  const runner = new pi.ExtensionRunner(loaded.extensions, loaded.runtime, cwd, undefined, undefined);
  runner.onError((err) => {
    throw new Error(`pi reported ${JSON.stringify(err)}`);
  });
  await runner.emit({ type: 'session_start' });
  for (const n of sizes) {
    await runner.emit({ type: 'turn_start', turnIndex: 0, timestamp: Date.now() });
    await runner.emitContext(messages.slice(0, n));
    await runner.emit({ type: 'agent_end', messages: [] });
    // The background render runs on the next turn of the event loop.
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await runner.getCommand('condense-native').handler('', runner.createContext());
  process.stdout.write(`${JSON.stringify(heard)}\n`);
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${err.stack}\n`);
    process.exit(1);
  });
}

module.exports = { standIn };
