'use strict';
// What condense-native tells a pi user about pi-condense's renders:
// pi/extension.js fills the status as it loads pi-condense, and this file
// words it. Each render is counted, timed and announced on pi's event bus
// (`condense-native:render`) and on the status line; `/condense-native`
// says which engine renders, how renders are routed, how many took each
// path and how long the last one took, and after a fallback why and what
// fixes it; the warnings of loading are shown once a session starts. With
// CONDENSE_NATIVE_STATUS=1 (for `pi -p`, which shows no status line) each
// render and, at exit, the status go to stderr as well.

const { prunerSwitch } = require('./locate.js');

const KEEP = 200; // render times kept for the median

function median(list) {
  if (list.length === 0) return null;
  const s = [...list].sort((a, b) => a - b);
  return s[s.length >> 1];
}

/**
 * The report of one pi process: `status`, what loaded and the renders so
 * far, which the extension fills as it loads pi-condense; `warn`, a
 * warning shown when a session starts; `timed`, a render counted, timed
 * and announced; `listen`, the command, the status line, the warnings and
 * the exit line, registered with pi once pi-condense is loaded.
 */
function makeReport(pi, env) {
  const warnings = [];
  // `byPath` counts the renders each path took (the addon's, pi-condense's
  // own); `observed` is false when pi-condense runs as it is, its renders
  // out of sight; `routing` says how the router picks a path.
  const status = { engine: 'off', version: null, dropIn: null, minMessages: null, routing: null, lastPath: null, reason: null, renders: 0, byPath: { native: 0, own: 0 }, observed: true, lastMs: null, times: [] };
  const statusLine = makeStatusLine(status);
  const toStderr = /^(1|on|true|yes|stderr)$/i.test(String(env.CONDENSE_NATIVE_STATUS || '').trim());
  return {
    status,
    warn: (text) => warnings.push(`condense-native: ${text}`),
    timed: (render, version) => timedRender(render, { pi, status, statusLine, version, toStderr }),
    listen: (about) => listen(pi, { status, statusLine, warnings, toStderr, describe: () => describe(status, about, env) }),
  };
}

// Where the status line goes: the UI of the turn being rendered for (none
// in print mode).
function makeStatusLine(status) {
  return {
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
}

// The render pi-condense runs, timed: `status.engine` says which engine
// answered (the drop-in hands over to pi-condense's own after a failure),
// `status.lastPath` which path the router took.
function timedRender(render, { pi, status, statusLine, version, toStderr }) {
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
    pi.events.emit('condense-native:render', { engine: status.engine, path: by, version, ms, pruned: result.pruned, ...gateOf });
    if (toStderr) process.stderr.write(`condense-native: render ${status.renders} on ${status.engine} (${by}) ${ms.toFixed(3)} ms\n`);
    statusLine.show();
    return result;
  };
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

/**
 * The text of `/condense-native`. `about`: `agentDir` (where pi-condense's
 * pruning switch is read) and `gateFile`, the settings file that turns the
 * gate on (null: it is off).
 */
function describe(status, { agentDir, gateFile }, env) {
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
    parts.push(`each render's path forced by CONDENSE_NATIVE_ROUTE=${env.CONDENSE_NATIVE_ROUTE}`);
  } else if (status.routing === 'crossover') {
    parts.push(`below ${status.minMessages} messages, and for the first render after a session opens, pi-condense's own render (faster there)`);
  }
  if (status.gate) parts.push(describeGate(status));
  else if (gateFile !== null && status.engine !== 'condense-native') parts.push(`the gate (on in ${gateFile}) does not run: it needs condense-native's render`);
  if (status.lastMs !== null) {
    const by = status.engine === 'condense-native' ? (status.lastPath === 'native' ? ' on the addon' : " on pi-condense's own") : '';
    const paths = `${status.byPath.native} on the addon, ${status.byPath.own} on pi-condense's own`;
    parts.push(`last render ${status.lastMs.toFixed(2)} ms${by}, median ${median(status.times).toFixed(2)} ms over ${status.renders} render${status.renders === 1 ? '' : 's'} (${paths})`);
  } else if (!status.observed) {
    parts.push('its renders are not seen here (pi-condense runs as it is)');
  } else if (status.engine !== 'stood down') {
    const pruning = status.version ? prunerSwitch(agentDir) : null;
    parts.push(
      pruning && !pruning.on
        ? `no render yet: pi-condense's pruning is off (${pruning.why}); turn it on with /pruner on, or "contextPrune": { "enabled": true } in ${pruning.file}`
        : 'no render yet',
    );
  }
  return parts.join('; ');
}

// The command, the status line, the exit line and the warnings, registered
// after pi-condense's own handlers.
function listen(pi, { status, statusLine, warnings, toStderr, describe }) {
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
}

module.exports = { makeReport };
