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
// runs on pi-condense's own render.
//
// An unknown pi-condense version, no native binary for the platform, a pi
// that did not load this file through jiti, or any error while loading:
// pi-condense is loaded as it always is, after one warning saying why. The
// setting `"condenseNative": { "enabled": false }` or CONDENSE_NATIVE=off
// keeps pi-condense's own render, timed. `/condense-native` (and the status
// line) says which engine rendered and how long the last render took; each
// render is also announced on pi's event bus as `condense-native:render`.
// With CONDENSE_NATIVE_STATUS=1 (for `pi -p`, which shows no status line)
// each render and, at exit, the status go to stderr as well.

const fs = require('node:fs');
const path = require('node:path');
const { createRequire } = require('node:module');

// condense-native's own modules load natively (as any Node package), not
// through the jiti instance that loaded this file.
const ownRequire = createRequire(__filename);
const { agentDirOf, locatePiCondense, switchedOff, dropInFor, ownEntryLoaded, filteredEntry, prunerSwitch } = ownRequire('./locate.js');

// The specifier pi-condense 2.4.x and 2.9.x import `pruneMessages` from.
const PRUNER_SPECIFIER = './src/pruner.js';
const KEEP = 200; // render times kept for the median
const SETUP_COMMAND = `node ${JSON.stringify(path.join(__dirname, '..', 'bin', 'condense-native.js'))} pi-setup`;

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

module.exports = async function condenseNative(pi) {
  const jitiRequire = require;
  const host = hostModule(jitiRequire);
  const cwd = process.cwd();
  const agentDir = agentDirOf(host);
  const warnings = [];
  const warn = (text) => warnings.push(`condense-native: ${text}`);
  const status = { engine: 'off', version: null, dropIn: null, reason: null, renders: 0, lastMs: null, times: [] };
  const toStderr = /^(1|on|true|yes|stderr)$/i.test(String(process.env.CONDENSE_NATIVE_STATUS || '').trim());

  const found = locatePiCondense(cwd, agentDir);
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
    let factory = null;
    // The render pi-condense runs: the drop-in, or (switched off)
    // pi-condense's own, timed either way; `status.engine` says which
    // answered (the drop-in hands over to pi-condense's own after a failure).
    const timed = (render) => {
      return function pruneMessages(...args) {
        const t0 = process.hrtime.bigint();
        const result = render(...args);
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        status.renders++;
        status.lastMs = ms;
        status.times.push(ms);
        if (status.times.length > KEEP) status.times.shift();
        pi.events.emit('condense-native:render', { engine: status.engine, version: found.version, ms, pruned: result.pruned });
        if (toStderr) process.stderr.write(`condense-native: render ${status.renders} on ${status.engine} ${ms.toFixed(3)} ms\n`);
        return result;
      };
    };
    try {
      if (line === null) throw new Error(`pi-condense ${found.version} is not a release condense-native renders (2.4.x, 2.9.x)`);
      let render;
      if (off) {
        status.engine = 'pi-condense';
        status.reason = `switched off by ${off}`;
        let own;
        render = timed((...args) => (own ??= jitiRequire(path.join(found.dir, 'src', 'pruner.ts'))).pruneMessages(...args));
      } else {
        const api = ownRequire('../index.js');
        if (api.backend !== 'native') throw new Error(`no native binary loaded for ${process.platform}-${process.arch}`);
        const dropIn = ownRequire(line === '2.4' ? '../js/pi-condense-2.4.js' : '../js/pi-condense-2.9.js');
        let own = null;
        let failed = null;
        // A render the addon refuses is rendered by pi-condense's own
        // function from then on, after one warning.
        const native = (...args) => {
          if (failed === null) {
            try {
              return dropIn.pruneMessages(...args);
            } catch (err) {
              failed = err;
              status.engine = 'pi-condense';
              status.reason = `the addon failed a render (${err.code || err.name}: ${err.message})`;
              pi.events.emit('condense-native:warning', `condense-native: ${status.reason}; pi-condense's own render takes over`);
            }
          }
          own ??= jitiRequire(path.join(found.dir, 'src', 'pruner.ts'));
          return own.pruneMessages(...args);
        };
        render = timed(native);
        status.engine = 'condense-native';
        status.dropIn = line;
      }
      factory = loadPiCondense(found.dir, jitiRequire, render);
    } catch (err) {
      status.engine = 'pi-condense';
      status.reason = `loaded as it is: ${err.message}`;
      warn(status.reason);
      factory = null;
    }
    if (factory === null) {
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
    if (status.lastMs !== null) {
      parts.push(`last render ${status.lastMs.toFixed(2)} ms, median ${median(status.times).toFixed(2)} ms over ${status.renders} renders`);
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
      pi.events.emit('condense-native:status', { ...status, times: undefined, text });
    },
  });

  // After pi-condense's own context handler (registered first): the status
  // line shows the engine and the last render's time.
  pi.on('context', (_event, ctx) => {
    if (ctx && ctx.hasUI && ctx.ui && typeof ctx.ui.setStatus === 'function' && status.lastMs !== null) {
      const engine = status.engine === 'condense-native' ? 'native' : 'js';
      ctx.ui.setStatus('condense-native', `condense ${engine} ${status.lastMs.toFixed(1)} ms`);
    }
    return undefined;
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

