'use strict';
// condense-native as a pi package (`pi install npm:condense-native`): this
// extension loads the user's installed pi-condense the way pi loads an
// extension (through the jiti instance, aliases and virtual modules pi gave
// this file), with one difference: the module pi-condense's entry imports
// its render path from (`./src/pruner.js`) answers `pruneMessages` with the
// drop-in for that release (condense-native/pi-condense-2.4 or -2.9). Every
// other module of pi-condense is its own. pi-condense's own entry is
// switched off with pi's package filter (README, "Use it in pi"), so it is
// loaded once, here. When pi loads pi-condense's own entry as well (an
// unfiltered settings entry, or `-e` on pi's command line), a second copy
// would register the same tool and pi would refuse to start: the extension
// stands down instead, after one warning naming the entry to change and the
// file it is in (or `condense-native pi-setup`, which changes it), and pi
// runs on pi-condense's own render. Where the addon costs more than it
// saves (below a crossover measured in pi, and the first render after a
// session opens) pi-condense's own function renders, the engine catching up
// in the background (pi/route.js); with the cache-aware gate on, the gate
// chooses what goes out after each render (pi/gate.js).
//
// An unknown pi-condense version, no native binary for the platform, a pi
// that did not load this file through jiti, or any error while loading:
// pi-condense is loaded as it always is, after one warning saying why. The
// setting `"condenseNative": { "enabled": false }` or CONDENSE_NATIVE=off
// keeps pi-condense's own render, timed. What the user is told (the status
// line, `/condense-native`, the render events, the warnings) is
// pi/status.js's.

const fs = require('node:fs');
const path = require('node:path');
const { createRequire } = require('node:module');

// condense-native's own modules load natively (as any Node package), not
// through the jiti instance that loaded this file.
const ownRequire = createRequire(__filename);
const { agentDirOf, locatePiCondense, switchedOff, switchWarnings, gateSettingsOf, compactionReserveOf, dropInFor, ownEntryLoaded, filteredEntry } = ownRequire('./locate.js');
const { PiGate } = ownRequire('./gate.js');
const { makeRouter } = ownRequire('./route.js');
const { makeReport } = ownRequire('./status.js');

// The specifier pi-condense 2.4.x and 2.9.x import `pruneMessages` from.
const PRUNER_SPECIFIER = './src/pruner.js';
const SETUP_COMMAND = `node ${JSON.stringify(path.join(__dirname, '..', 'bin', 'condense-native.js'))} pi-setup`;

// Why the addon did not load, and what brings a binary (a build in a
// clone, the platform package in an installed copy: pi/binary.js).
function noBinaryReason() {
  const loaded = ownRequire('../loader.js');
  const { binaryOf } = ownRequire('./binary.js');
  const found = binaryOf(path.join(__dirname, '..'));
  if (found.file === null) return `no native binary for ${process.platform}-${process.arch}: ${found.fix}`;
  // A binary is there: the loader's own words say why it did not load.
  return loaded.fallbackReason || `the native binary ${found.file} did not load`;
}

// pi's own module as pi resolves it for its extensions (null when it
// cannot be reached), for the agent directory pi uses (pi/locate.js
// agentDirOf).
function hostModule(jitiRequire) {
  try {
    return jitiRequire('@earendil-works/pi-coding-agent');
  } catch {
    return null;
  }
}

// An extension's factory, whether its module is ESM compiled by jiti (the
// factory is `default`) or CommonJS.
function interopDefault(mod) {
  return mod && typeof mod === 'object' && 'default' in mod ? mod.default : mod;
}

// The one extension a pi-condense release declares in its package.json.
function entryOf(dir) {
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const entries = pkg.pi && Array.isArray(pkg.pi.extensions) ? pkg.pi.extensions : [];
  if (entries.length !== 1) throw new Error(`pi-condense ${pkg.version} declares ${entries.length} extensions, not one`);
  return path.resolve(dir, entries[0]);
}

/**
 * Loads pi-condense's entry with `jitiRequire` (the jiti instance pi loaded
 * this file with, sharing its options) and returns its factory. With
 * `pruneMessages`, the entry's import of ./src/pruner.js answers that
 * function for `pruneMessages` and pi-condense's own module for any other
 * name; the route is in place only while the entry loads.
 */
function loadPiCondense(dir, jitiRequire, pruneMessages) {
  const entry = entryOf(dir);
  if (!pruneMessages) return interopDefault(jitiRequire(entry));
  const options = jitiRequire.options;
  if (!options || typeof options !== 'object') {
    throw new Error('pi did not load condense-native through jiti, so the import of pi-condense cannot be routed');
  }
  const source = fs.readFileSync(entry, 'utf8');
  if (!/import\s*\{[^}]*\bpruneMessages\b[^}]*\}\s*from\s*["']\.\/src\/pruner\.js["']/.test(source)) {
    throw new Error(`${entry} does not import pruneMessages from ${PRUNER_SPECIFIER}`);
  }
  let own;
  const ownPruner = () => (own ??= jitiRequire(path.join(dir, 'src', 'pruner.ts')));
  const routed = new Proxy(Object.create(null), {
    get: (_, key) => (key === 'pruneMessages' ? pruneMessages : key === '__esModule' ? true : ownPruner()[key]),
    has: (_, key) => key === 'pruneMessages' || key in ownPruner(),
    ownKeys: () => [...new Set(['pruneMessages', ...Reflect.ownKeys(ownPruner())])],
    getOwnPropertyDescriptor: (target, key) => {
      const value = key === 'pruneMessages' ? pruneMessages : ownPruner()[key];
      return value === undefined ? undefined : { value, enumerable: true, configurable: true, writable: false };
    },
  });
  const had = Object.prototype.hasOwnProperty.call(options, 'virtualModules');
  const before = options.virtualModules;
  options.virtualModules = { ...(before || {}), [PRUNER_SPECIFIER]: routed };
  try {
    return interopDefault(jitiRequire(entry));
  } finally {
    if (had) options.virtualModules = before;
    else delete options.virtualModules;
  }
}

// The warning of a stand-down: what loads pi-condense's own entry, and the
// change that lets condense-native render.
function standDownReason(twice) {
  if (twice.how === 'command line') {
    return (
      `pi loads pi-condense's own extension from the command line (-e ${twice.arg}) as well as through condense-native, ` +
      "so condense-native stands down and pi-condense renders with its own code; leave out that -e to render on condense-native"
    );
  }
  const want = JSON.stringify(filteredEntry(twice.entry));
  return (
    `pi loads pi-condense's own extension too (${JSON.stringify(twice.entry)} in the "packages" of ${twice.file}), ` +
    `so condense-native stands down and pi-condense renders with its own code. To render on condense-native, make that entry read ${want} ` +
    `in ${twice.file}, or run: ${SETUP_COMMAND}${twice.scope === 'project' ? ' --project' : ''}`
  );
}

// What `read` returns, or undefined when it throws: a read of pi's context
// for the gate never fails pi's turn.
function safely(read) {
  try {
    return read();
  } catch {
    return undefined;
  }
}

// The active tools' definitions as the request declares them, as text.
function activeToolsText(pi) {
  const active = new Set(pi.getActiveTools());
  return JSON.stringify(
    pi
      .getAllTools()
      .filter((t) => active.has(t.name))
      .map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
  );
}

/**
 * The cache-aware gate (pi/gate.js) of the settings `found` (pi/locate.js
 * `gateSettingsOf`) when they are `enabled`, else null. Settings that are wrong are
 * named in a warning with their file, and the gate stays off.
 */
function makeGate(found, enabled, warn, reserveTokens) {
  if (found === null) return null;
  let gate;
  try {
    gate = new PiGate(ownRequire('../loader.js'), found.settings, { long: process.env.PI_CACHE_RETENTION === 'long', reserveTokens });
  } catch (err) {
    warn(`"condenseNative": { "gate": ${JSON.stringify(found.settings)} } in ${found.file}: ${err.message}; the gate is off`);
    return null;
  }
  return enabled ? gate : null;
}

/**
 * The router's render with the gate's choice after it: the release's
 * render, or the hold. A render on pi-condense's own function (the addon
 * failed) cools the gate; a gate that fails is switched off after one
 * warning, and the release's render goes out.
 */
function gated(router, gate, line, status, pi) {
  const { dropIns } = ownRequire('../js/dropin.js');
  const dialect = line === '2.4' ? '2.4.3' : '2.9.1';
  let on = true;
  return function render(...args) {
    const result = router.render(...args);
    status.lastGate = null;
    const last = on && status.lastPath === 'native' ? dropIns.lastRender(args[1], dialect) : null;
    if (last === null) {
      gate.cool();
      return result;
    }
    try {
      const t0 = process.hrtime.bigint();
      const out = gate.choose(args[0], result, last);
      status.lastGateMs = Number(process.hrtime.bigint() - t0) / 1e6;
      status.lastGate = gate.last;
      return out;
    } catch (err) {
      on = false;
      status.gateFailure = `${err.code || err.name}: ${err.message}`;
      pi.events.emit('condense-native:warning', `condense-native: the gate failed (${status.gateFailure}); the release's render goes out from now on`);
      return result;
    }
  };
}

// pi-condense's own render path, loaded as its entry loads it; `load`
// brings it in up front, so no render pays for compiling it.
function ownRenderOf(dir, jitiRequire) {
  let pruner = null;
  const load = () => (pruner ??= jitiRequire(path.join(dir, 'src', 'pruner.ts')));
  return { load, render: (...args) => load().pruneMessages(...args) };
}

// What the router hears from pi: a render the addon refuses hands every
// later render to pi-condense's own function, after one warning; a context
// that may have changed as a whole (a session opened, a branch moved to, a
// compaction) is rendered by pi-condense's own while the engine catches up
// in the background, once the request has gone out (the model answering,
// or the run ending).
function routeEvents(pi, router, status) {
  router.onFailure = (err) => {
    status.engine = 'pi-condense';
    status.reason = `the addon failed a render (${err.code || err.name}: ${err.message})`;
    pi.events.emit('condense-native:warning', `condense-native: ${status.reason}; pi-condense's own render takes over`);
  };
  for (const event of ['session_start', 'session_tree', 'session_compact']) pi.on(event, () => router.cool());
  pi.on('message_start', (event) => {
    if (event && event.message && event.message.role === 'assistant') router.idle();
  });
  pi.on('agent_end', () => router.idle());
}

// What the gate hears from pi: it cools where the router does, and learns
// what the next request goes out with (the model, the system prompt, the
// active tools) and pi's cache warms since the last.
function gateEvents(pi, gate) {
  for (const event of ['session_start', 'session_tree', 'session_compact']) pi.on(event, () => gate.cool());
  pi.on('turn_start', (_event, ctx) => {
    if (ctx && typeof ctx === 'object') {
      gate.observe(ctx.model, safely(() => ctx.getSystemPrompt()), safely(() => activeToolsText(pi)));
      safely(() => gate.learnWarms(ctx.sessionManager));
    }
  });
}

/**
 * The addon's render for release `line` (the drop-in, routed against
 * pi-condense's own, behind the gate when it is on), its events wired;
 * throws when the addon did not load.
 */
function addonRender(setup, line, own) {
  const { pi, cwd, agentDir, gateFound, gateWanted, report } = setup;
  const { status } = report;
  const api = ownRequire('../index.js');
  if (api.backend !== 'native') throw new Error(noBinaryReason());
  const dropIn = ownRequire(line === '2.4' ? '../js/pi-condense-2.4.js' : '../js/pi-condense-2.9.js');
  const gate = makeGate(gateFound, gateWanted, report.warn, compactionReserveOf(cwd, agentDir));
  const router = makeRouter({ dropIn, ownRender: own.render, line, status, env: process.env, always: gate !== null });
  routeEvents(pi, router, status);
  const render = gate === null ? router.render : gated(router, gate, line, status, pi);
  if (gate !== null) {
    status.gate = gate;
    gateEvents(pi, gate);
  }
  status.engine = 'condense-native';
  status.dropIn = line;
  status.minMessages = router.minMessages;
  status.routing = gate !== null ? 'gate' : process.env.CONDENSE_NATIVE_ROUTE ? 'forced' : 'crossover';
  return render;
}

/**
 * pi-condense's extension factory, its render routed to the addon (or,
 * switched off by `off`, to pi-condense's own function), timed either way.
 * After any error, one warning, and the release's own render routed to
 * itself and timed, so the status can count it; a release condense-native
 * does not know, or one the route cannot reach, is loaded as it is, its
 * renders unseen. Null when nothing can be loaded.
 */
function routedFactory(setup, line, off) {
  const { found, jitiRequire, report } = setup;
  const { status } = report;
  const own = ownRenderOf(found.dir, jitiRequire);
  let factory = null;
  try {
    if (line === null) throw new Error(`pi-condense ${found.version} is not a release condense-native renders (2.4.x, 2.9.x)`);
    own.load();
    let render;
    if (off) {
      status.engine = 'pi-condense';
      status.reason = `switched off by ${off}`;
      render = own.render;
    } else {
      render = addonRender(setup, line, own);
    }
    factory = loadPiCondense(found.dir, jitiRequire, report.timed(render, found.version));
  } catch (err) {
    status.engine = 'pi-condense';
    status.routing = null;
    status.reason = `loaded as it is: ${err.message}`;
    report.warn(status.reason);
    factory = null;
    if (line !== null) {
      try {
        factory = loadPiCondense(found.dir, jitiRequire, report.timed(own.render, found.version));
      } catch {
        factory = null;
      }
    }
  }
  if (factory === null) {
    status.observed = status.engine !== 'pi-condense';
    try {
      factory = loadPiCondense(found.dir, jitiRequire, null);
    } catch (err) {
      status.engine = 'off';
      status.reason = `pi-condense ${found.version} could not be loaded: ${err.message}`;
      report.warn(status.reason);
    }
  }
  return factory;
}

// pi-condense's extension, loaded with its render routed, run as pi runs
// an extension.
async function runPiCondense(setup) {
  const { pi, cwd, agentDir, found, report } = setup;
  const line = dropInFor(found.version);
  const off = switchedOff(cwd, agentDir);
  for (const text of switchWarnings(cwd, agentDir)) report.warn(text);
  const factory = routedFactory(setup, line, off);
  if (typeof factory === 'function') await factory(pi);
  else if (factory !== null) report.warn(`pi-condense ${found.version} exports no extension factory`);
}

module.exports = async function condenseNative(pi) {
  const jitiRequire = require;
  const host = hostModule(jitiRequire);
  const cwd = process.cwd();
  const agentDir = agentDirOf(host);
  const report = makeReport(pi, process.env);
  const found = locatePiCondense(cwd, agentDir);
  const gateFound = gateSettingsOf(cwd, agentDir);
  const gateWanted = gateFound !== null && gateFound.settings && gateFound.settings.enabled === true;
  const twice = ownEntryLoaded(cwd, agentDir);
  if (found.dir) report.status.version = found.version;
  if (twice) {
    report.status.engine = 'stood down';
    report.status.reason = standDownReason(twice);
    report.warn(report.status.reason);
  } else if (!found.dir) {
    report.status.reason = found.why;
    report.warn(`${found.why}; nothing to render (pi install npm:pi-condense)`);
  } else {
    await runPiCondense({ pi, jitiRequire, cwd, agentDir, found, gateFound, gateWanted, report });
  }
  report.listen({ agentDir, gateFile: gateWanted ? gateFound.file : null });
};
