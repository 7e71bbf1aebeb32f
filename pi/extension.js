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
// in the background (makeRouter).
//
// An unknown pi-condense version, no native binary for the platform, a pi
// that did not load this file through jiti, or any error while loading:
// pi-condense is loaded as it always is, after one warning saying why. The
// setting `"condenseNative": { "enabled": false }` or CONDENSE_NATIVE=off
// keeps pi-condense's own render, timed. `/condense-native` (and the status
// line) says which engine rendered, how renders are routed, how many took
// each path and how long the last one took, and after a fallback why and
// what fixes it; each render is also announced on pi's event bus as
// `condense-native:render`.
// With CONDENSE_NATIVE_STATUS=1 (for `pi -p`, which shows no status line)
// each render and, at exit, the status go to stderr as well.

const fs = require('node:fs');
const path = require('node:path');
const { createRequire } = require('node:module');

// condense-native's own modules load natively (as any Node package), not
// through the jiti instance that loaded this file.
const ownRequire = createRequire(__filename);
const { agentDirOf, locatePiCondense, switchedOff, switchWarnings, gateSettingsOf, compactionReserveOf, dropInFor, ownEntryLoaded, filteredEntry, prunerSwitch } = ownRequire('./locate.js');
const { PiGate } = ownRequire('./gate.js');

// The specifier pi-condense 2.4.x and 2.9.x import `pruneMessages` from.
const PRUNER_SPECIFIER = './src/pruner.js';
const KEEP = 200; // render times kept for the median
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

function hostModule(jitiRequire) {
  try {
    return jitiRequire('@earendil-works/pi-coding-agent');
  } catch {
    return null;
  }
}

function interopDefault(mod) {
  return mod && typeof mod === 'object' && 'default' in mod ? mod.default : mod;
}

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

function median(list) {
  if (list.length === 0) return null;
  const s = [...list].sort((a, b) => a - b);
  return s[s.length >> 1];
}

// Below this many messages pi-condense's own render is as fast as the
// addon's in pi or faster, per drop-in (measured with `node
// benches/real-pi.js --min-messages 0`: docs/ADOPTING.md, "In pi, per
// render"), so the extension renders with pi-condense's own function there.
const CROSSOVER = { '2.4': 60, '2.9': 40 };

/**
 * The render condense-native hands pi-condense: the drop-in where it is
 * faster, pi-condense's own function where it is not, exact either way.
 * pi-condense's own renders while the context is below `minMessages`
 * (CONDENSE_NATIVE_MIN_MESSAGES, default the release's CROSSOVER) and while
 * the engine has not read this conversation (the first render after a
 * session opens, a branch change, a compaction). After such a render the
 * drop-in renders the same call in the background once the model starts
 * answering (the assistant's `message_start`, or `agent_end`: the request
 * has gone out), its answer dropped and 2.9.1's diagnostics not reported:
 * the one full read of the conversation is off the render path, and the
 * engine is then only the messages added since behind when it takes over.
 * Below half the crossover the engine is left alone (a small conversation
 * never loads it; the half left to the crossover is read incrementally
 * when it takes over), and renders below the crossover add no background
 * work once it has caught up. The drop-in asks the indexer everything again
 * each render and re-reads the messages from the first one it does not
 * know, so its answer is pi-condense's whatever rendered before it.
 * CONDENSE_NATIVE_ROUTE (for tests: `own`, `lag` (own, no background
 * render), `native`, comma separated, used in turn) forces each render's
 * path. `always` (the gate is on: it reads the drop-in's slots) renders
 * every call on the drop-in.
 */
function makeRouter({ dropIn, ownRender, line, status, env, always = false }) {
  const parsed = Number(env.CONDENSE_NATIVE_MIN_MESSAGES);
  const minMessages = env.CONDENSE_NATIVE_MIN_MESSAGES !== undefined && Number.isFinite(parsed) && parsed >= 0 ? parsed : CROSSOVER[line];
  const route = typeof env.CONDENSE_NATIVE_ROUTE === 'string' && env.CONDENSE_NATIVE_ROUTE.trim() ? env.CONDENSE_NATIVE_ROUTE.split(',').map((r) => r.trim()) : null;
  const diagnosticsAt = line === '2.9' ? 6 : -1;
  let warm = new WeakSet();
  let failed = null;
  let pending = null;
  let scheduled = false;
  let turn = 0;
  const router = {
    minMessages,
    onFailure: () => {},
    cool() {
      warm = new WeakSet();
    },
    render(...args) {
      if (failed !== null) {
        status.lastPath = 'own';
        return ownRender(...args);
      }
      const messages = args[0];
      const indexer = args[1];
      const n = Array.isArray(messages) ? messages.length : 0;
      const ready = indexer !== null && typeof indexer === 'object' && warm.has(indexer);
      const forced = route === null ? null : route[turn++ % route.length];
      if (forced === 'native' || (forced === null && (always || (ready && n >= minMessages)))) {
        try {
          status.lastPath = 'native';
          const result = dropIn.pruneMessages(...args);
          if (indexer !== null && typeof indexer === 'object') warm.add(indexer);
          return result;
        } catch (err) {
          fail(err);
          status.lastPath = 'own';
          return ownRender(...args);
        }
      }
      status.lastPath = 'own';
      const result = ownRender(...args);
      if (forced === 'own' || (forced === null && !ready && n >= minMessages / 2)) catchUp(args);
      return result;
    },
  };
  function fail(err) {
    if (failed !== null) return;
    failed = err;
    router.onFailure(err);
  }
  // One background render, of the latest call, once the model answers
  // (`idle`): after the request has gone out.
  function catchUp(args) {
    pending = diagnosticsAt >= 0 ? Object.assign([...args], { [diagnosticsAt]: undefined }) : args;
  }
  router.idle = () => {
    if (pending === null || scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      const call = pending;
      pending = null;
      if (failed !== null || call === null) return;
      try {
        // Twice: the first render reads the conversation, the second takes
        // the path every later render takes, so that code is compiled
        // before a render the model waits for runs it.
        dropIn.pruneMessages(...call);
        dropIn.pruneMessages(...call);
        if (call[1] !== null && typeof call[1] === 'object') warm.add(call[1]);
      } catch (err) {
        fail(err);
      }
    });
  };
  return router;
}

// The gate's line of `/condense-native`.
function describeGate(status) {
  const t = status.gate.totals();
  const usd = (v) => `$${v.toFixed(4)}`;
  const s = status.gate.settingsText;
  if (status.gateFailure) return `gate (${s}): failed (${status.gateFailure}), off`;
  return (
    `gate (${s}): ${t.applies} applies (${t.cold} cold, ${t.same} same, ${t.pays} paid, ${t.budget} over budget), ${t.holds} holds; ` +
    `the holds put off ${usd(t.deferredUsd)} of cache writes and read ${usd(t.extraReadUsd)} more since: estimated saving ${usd(t.deferredUsd - t.extraReadUsd)}`
  );
}

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

module.exports = async function condenseNative(pi) {
  const jitiRequire = require;
  const host = hostModule(jitiRequire);
  const cwd = process.cwd();
  const agentDir = agentDirOf(host);
  const warnings = [];
  const warn = (text) => warnings.push(`condense-native: ${text}`);
  // `byPath` counts the renders each path took (the addon's, pi-condense's
  // own); `observed` is false when pi-condense runs as it is, its renders
  // out of sight; `routing` says how the router picks a path.
  const status = { engine: 'off', version: null, dropIn: null, minMessages: null, routing: null, lastPath: null, reason: null, renders: 0, byPath: { native: 0, own: 0 }, observed: true, lastMs: null, times: [] };
  // Where the status line goes: the UI of the turn being rendered for
  // (none in print mode).
  const statusLine = {
    ctx: null,
    show() {
      if (this.ctx === null || status.lastMs === null) return;
      const engine = status.engine === 'condense-native' ? 'native' : 'js';
      try {
        this.ctx.ui.setStatus('condense-native', `condense ${engine} ${status.lastMs.toFixed(1)} ms`);
      } catch {
        this.ctx = null; // a context pi has replaced (a new session, a reload)
      }
    },
  };
  const toStderr = /^(1|on|true|yes|stderr)$/i.test(String(process.env.CONDENSE_NATIVE_STATUS || '').trim());

  const found = locatePiCondense(cwd, agentDir);
  const gateFound = gateSettingsOf(cwd, agentDir);
  const gateWanted = gateFound !== null && gateFound.settings && gateFound.settings.enabled === true;
  const twice = ownEntryLoaded(cwd, agentDir);
  if (found.dir) status.version = found.version;
  if (twice) {
    status.engine = 'stood down';
    status.reason = standDownReason(twice);
    warn(status.reason);
  } else if (!found.dir) {
    status.reason = found.why;
    warn(`${found.why}; nothing to render (pi install npm:pi-condense)`);
  } else {
    const line = dropInFor(found.version);
    const off = switchedOff(cwd, agentDir);
    for (const text of switchWarnings(cwd, agentDir)) warn(text);
    let factory = null;
    // The render pi-condense runs: the drop-in, or (switched off)
    // pi-condense's own, timed either way; `status.engine` says which
    // answered (the drop-in hands over to pi-condense's own after a failure).
    // pi-condense's own render path, loaded up front as pi-condense's own
    // entry loads it (so no render pays for compiling it).
    let ownPruner = null;
    const ownRender = (...args) => (ownPruner ??= jitiRequire(path.join(found.dir, 'src', 'pruner.ts'))).pruneMessages(...args);
    const timed = (render) => {
      return function pruneMessages(...args) {
        const t0 = process.hrtime.bigint();
        const result = render(...args);
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        status.renders++;
        status.lastMs = ms;
        status.times.push(ms);
        if (status.times.length > KEEP) status.times.shift();
        const by = status.engine === 'condense-native' ? status.lastPath : 'own';
        status.byPath[by]++;
        const gateOf = status.lastGate ? { gate: status.lastGate.sent, gateReason: status.lastGate.reason, gateMs: status.lastGateMs } : {};
        pi.events.emit('condense-native:render', { engine: status.engine, path: by, version: found.version, ms, pruned: result.pruned, ...gateOf });
        if (toStderr) process.stderr.write(`condense-native: render ${status.renders} on ${status.engine} (${by}) ${ms.toFixed(3)} ms\n`);
        statusLine.show();
        return result;
      };
    };
    try {
      if (line === null) throw new Error(`pi-condense ${found.version} is not a release condense-native renders (2.4.x, 2.9.x)`);
      ownPruner = jitiRequire(path.join(found.dir, 'src', 'pruner.ts'));
      let render;
      if (off) {
        status.engine = 'pi-condense';
        status.reason = `switched off by ${off}`;
        render = timed(ownRender);
      } else {
        const api = ownRequire('../index.js');
        if (api.backend !== 'native') throw new Error(noBinaryReason());
        const dropIn = ownRequire(line === '2.4' ? '../js/pi-condense-2.4.js' : '../js/pi-condense-2.9.js');
        const gate = makeGate(gateFound, gateWanted, warn, compactionReserveOf(cwd, agentDir));
        const router = makeRouter({ dropIn, ownRender, line, status, env: process.env, always: gate !== null });
        // A render the addon refuses is rendered by pi-condense's own
        // function from then on, after one warning.
        router.onFailure = (err) => {
          status.engine = 'pi-condense';
          status.reason = `the addon failed a render (${err.code || err.name}: ${err.message})`;
          pi.events.emit('condense-native:warning', `condense-native: ${status.reason}; pi-condense's own render takes over`);
        };
        // A session opened, a branch moved to, a compaction: the context
        // may have changed as a whole, so the next render is pi-condense's
        // own while the engine catches up in the background.
        for (const event of ['session_start', 'session_tree', 'session_compact']) pi.on(event, () => router.cool());
        // The model answering (or the run ending): the request has gone out.
        pi.on('message_start', (event) => {
          if (event && event.message && event.message.role === 'assistant') router.idle();
        });
        pi.on('agent_end', () => router.idle());
        render = timed(gate === null ? router.render : gated(router, gate, line, status, pi));
        if (gate !== null) {
          status.gate = gate;
          for (const event of ['session_start', 'session_tree', 'session_compact']) pi.on(event, () => gate.cool());
          // What the next request goes out with (the model, the system
          // prompt, the active tools), and pi's cache warms since the last.
          pi.on('turn_start', (_event, ctx) => {
            if (ctx && typeof ctx === 'object') {
              gate.observe(ctx.model, safely(() => ctx.getSystemPrompt()), safely(() => activeToolsText(pi)));
              safely(() => gate.learnWarms(ctx.sessionManager));
            }
          });
        }
        status.engine = 'condense-native';
        status.dropIn = line;
        status.minMessages = router.minMessages;
        status.routing = gate !== null ? 'gate' : process.env.CONDENSE_NATIVE_ROUTE ? 'forced' : 'crossover';
      }
      factory = loadPiCondense(found.dir, jitiRequire, render);
    } catch (err) {
      status.engine = 'pi-condense';
      status.routing = null;
      status.reason = `loaded as it is: ${err.message}`;
      warn(status.reason);
      factory = null;
      // A release condense-native knows: its own render, routed to itself
      // and timed (as when switched off), so the status can count it. A
      // release it does not know, or one the route cannot reach, runs as it
      // is, its renders unseen.
      if (line !== null) {
        try {
          factory = loadPiCondense(found.dir, jitiRequire, timed(ownRender));
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
        warn(status.reason);
      }
    }
    if (typeof factory === 'function') await factory(pi);
    else if (factory !== null) warn(`pi-condense ${found.version} exports no extension factory`);
  }

  const describe = () => {
    const engine =
      status.engine === 'condense-native'
        ? `condense-native (native addon, the ${status.dropIn} drop-in)`
        : status.engine === 'pi-condense'
          ? "pi-condense's own (JavaScript)"
          : status.engine === 'stood down'
            ? "pi-condense's own (condense-native stood down)"
            : 'none';
    const parts = [`render engine: ${engine}`];
    if (status.version) parts.push(`pi-condense ${status.version}`);
    if (status.reason) parts.push(status.reason);
    if (status.routing === 'gate') {
      parts.push(`the gate is on, so every render is the addon's (the gate reads its slots), whatever the size`);
    } else if (status.routing === 'forced') {
      parts.push(`each render's path forced by CONDENSE_NATIVE_ROUTE=${process.env.CONDENSE_NATIVE_ROUTE}`);
    } else if (status.routing === 'crossover') {
      parts.push(`below ${status.minMessages} messages, and for the first render after a session opens, pi-condense's own render (faster there)`);
    }
    if (status.gate) parts.push(describeGate(status));
    else if (gateWanted && status.engine !== 'condense-native') parts.push(`the gate (on in ${gateFound.file}) does not run: it needs condense-native's render`);
    if (status.lastMs !== null) {
      const by = status.engine === 'condense-native' ? (status.lastPath === 'native' ? ' on the addon' : " on pi-condense's own") : '';
      const paths = `${status.byPath.native} on the addon, ${status.byPath.own} on pi-condense's own`;
      parts.push(`last render ${status.lastMs.toFixed(2)} ms${by}, median ${median(status.times).toFixed(2)} ms over ${status.renders} render${status.renders === 1 ? '' : 's'} (${paths})`);
    } else if (!status.observed) {
      parts.push("its renders are not seen here (pi-condense runs as it is)");
    } else if (status.engine !== 'stood down') {
      const pruning = status.version ? prunerSwitch(agentDir) : null;
      parts.push(
        pruning && !pruning.on
          ? `no render yet: pi-condense's pruning is off (${pruning.why}); turn it on with /pruner on, or "contextPrune": { "enabled": true } in ${pruning.file}`
          : 'no render yet',
      );
    }
    return parts.join('; ');
  };

  pi.registerCommand('condense-native', {
    description: 'Which engine renders pi-condense, and how long the last render took',
    handler: async (_args, ctx) => {
      const text = describe();
      // Print mode (`pi -p`) has no UI to notify: the status goes to stderr.
      if (ctx && ctx.hasUI && ctx.ui && typeof ctx.ui.notify === 'function') ctx.ui.notify(text, 'info');
      else process.stderr.write(`condense-native: ${text}\n`);
      pi.events.emit('condense-native:status', { ...status, times: undefined, gate: status.gate ? status.gate.totals() : undefined, text });
    },
  });

  // The status line shows the engine and the last render's time. It is set
  // by the render itself, with the context of the turn it renders for: a
  // `context` handler of its own would cost every model call pi's copy of
  // the whole message list once more (pi filters and snapshots the messages
  // for each context handler).
  pi.on('turn_start', (_event, ctx) => {
    statusLine.ctx = ctx && ctx.hasUI && ctx.ui && typeof ctx.ui.setStatus === 'function' ? ctx : null;
  });

  if (toStderr) process.once('exit', () => process.stderr.write(`condense-native: ${describe()}\n`));

  pi.on('session_start', (_event, ctx) => {
    for (const text of warnings.splice(0)) {
      pi.events.emit('condense-native:warning', text);
      if (ctx && ctx.hasUI && ctx.ui && typeof ctx.ui.notify === 'function') ctx.ui.notify(text, 'warning');
      else process.stderr.write(`${text}\n`);
    }
  });
};

// For benches/real-pi.js, which checks each render took the path this
// crossover gives it.
module.exports.CROSSOVER = CROSSOVER;
