'use strict';
// condense-native inside real pi, installed as a pi user installs it. For
// each pi-condense release (2.4.3 and 2.9.1, from ../shared/pi-condense),
// pi-condense and condense-native's packed tarballs go into a fresh agent
// directory the way `pi install` puts packages there (npm install --prefix
// <agentDir>/npm, pi's flags), and pi 1.6.0's own CLI runs in print mode a
// scripted session of tool calls (fixtures/pi-extension/faux-model.js: pi-ai's
// faux provider, no network) long enough that pi-condense flushes, stubs
// summarized results, compresses closed chains and purges failed calls:
//
//   alone   pi-condense as `pi install npm:pi-condense` leaves it;
//   native  condense-native's package too, pi-condense's own entry switched
//           off with the package filter of the README;
//   twice   both installed, pi-condense's entry not filtered (pi loads its
//           own entry too): condense-native stands down with one warning;
//   routed  as native, with the path of each render forced in turn
//           (CONDENSE_NATIVE_ROUTE): the addon, pi-condense's own with the
//           engine catching up in the background, or without (the engine
//           several renders behind), across the switch both ways;
//   off     the same, with condense-native switched off (the environment
//           variable for 2.4.3, the setting for 2.9.1);
//   binary  as native, in pi's own Bun binary (scripts/pi-binary.js builds
//           it with pi's compile flags), where Bun is installed.
//
// Every request the model receives must be, byte for byte, the one of the
// `alone` run; the native run must have rendered each context event on
// pi-condense's own function below the crossover (and the first) and on the
// addon from there on, the off run on pi-condense's own function. The test
// prints the time per render of both. A pi-condense of another version must
// run as it always does, after a warning. Clocks stand still
// (fixtures/pi-extension/frozen-clock.js), so the runs stamp their messages
// alike.
//
// Needs a Node >= 22.19 (pi's engines): this Node, or under Bun the `node`
// on PATH; skips with the reason otherwise, and without a local build of the
// addon or ../shared/pi-condense.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { localBinary } = require('./helpers/pack.js');
const { replay } = require('..');
const { FIXTURES, SHARED, PI_PKG, PI_CLI, RELEASES, CONTEXT_PRUNE, FILTERED, sessionFileOf, piNode, run, cleanEnv, makeWorkspace } = require('./helpers/real-pi.js');

const PROMPTS = Array.from({ length: 7 }, (_, i) => `Prompt ${i + 1}: go on with the task.`);

const NODE = piNode();
// pi's release binary needs Bun (the devDependency) to be built.
const BUN_BINARY = fs.existsSync(path.join(__dirname, '..', 'node_modules', '.bin', 'bun'))
  ? { path: () => require('../scripts/pi-binary.js').piBinary() }
  : { why: 'no node_modules/.bin/bun to build pi\'s binary with' };
const skip = NODE.why
  ? `${NODE.why}; pi runs on Node ${PI_PKG.engines.node} (npm test under Node 22 or 24 runs this)`
  : !localBinary()
    ? 'no local build of the addon (npm run build)'
    : !RELEASES.every((r) => fs.existsSync(path.join(SHARED, r, 'package.json')))
      ? `pi-condense ${RELEASES.join(' and ')} are absent from ${SHARED}`
      : false;

let workspace;
const prepare = () => (workspace ??= makeWorkspace());
const installAgent = (release) => prepare().installAgent(release);

// A project folder with the files the script reads, the same path for
// every run (pi puts the working directory into the system prompt).
function project(work) {
  const dir = path.join(work, 'project');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, 'notes'), { recursive: true });
  for (let p = 1; p <= PROMPTS.length; p++) {
    fs.writeFileSync(path.join(dir, 'notes', `f${p}.txt`), `Notes ${p}: ${'the ledger balances once the importer runs. '.repeat(40 + p)}`);
  }
  return dir;
}

/**
 * One pi run over a fresh session: `packages` is the settings' list, `extra`
 * more settings, `envExtra` more environment. Returns the requests (JSON
 * lines), the renders condense-native announced, and its warnings.
 */
function piRun(agent, { packages, extra = {}, envExtra = {}, prompts = PROMPTS, binary = null }) {
  const { work } = prepare();
  const cwd = project(work);
  fs.rmSync(path.join(agent, 'sessions'), { recursive: true, force: true });
  fs.writeFileSync(path.join(agent, 'settings.json'), JSON.stringify({ packages, contextPrune: CONTEXT_PRUNE, ...extra }, null, 2));
  const log = path.join(work, 'requests.jsonl');
  const renders = path.join(work, 'renders.jsonl');
  fs.rmSync(log, { force: true });
  fs.rmSync(renders, { force: true });
  const env = cleanEnv(work, { PI_CODING_AGENT_DIR: agent, PI_OFFLINE: '1', FAUX_LOG: log, FAUX_RENDERS: renders, ...envExtra });
  // pi's CLI on Node with the clock preloaded, or pi's Bun binary with the
  // clock as its first extension.
  const start = binary
    ? ['-e', path.join(FIXTURES, 'frozen-clock-extension.js')]
    : ['-r', path.join(FIXTURES, 'frozen-clock.js'), PI_CLI];
  const args = [...start, '--print', '--model', 'faux/scripted', '--tools', 'read,bash', '-e', path.join(FIXTURES, 'faux-model.js'), ...prompts];
  const r = run(binary || NODE.node, args, { cwd, env });
  const lines = (file) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
  const events = lines(renders).map((l) => JSON.parse(l));
  return {
    requests: lines(log),
    renders: events.filter((e) => e.engine !== undefined),
    warnings: events.filter((e) => e.warning !== undefined).map((e) => e.warning),
    statuses: events.filter((e) => e.status !== undefined).map((e) => e.status),
    stdout: r.stdout,
    stderr: r.stderr,
  };
}

function assertSameRequests(got, want, label) {
  assert.equal(got.requests.length, want.requests.length, `${label}: ${got.requests.length} requests, pi-condense alone sent ${want.requests.length}`);
  for (let n = 0; n < want.requests.length; n++) {
    if (got.requests[n] !== want.requests[n]) {
      const a = got.requests[n];
      const b = want.requests[n];
      let at = 0;
      while (at < a.length && a[at] === b[at]) at++;
      assert.fail(`${label}: request ${n + 1} differs from pi-condense alone's at character ${at}:\n  got  ${a.slice(Math.max(0, at - 80), at + 120)}\n  want ${b.slice(Math.max(0, at - 80), at + 120)}`);
    }
  }
}

const median = (list) => [...list].sort((a, b) => a - b)[list.length >> 1];

for (const release of RELEASES) {
  test(`pi ${PI_PKG.version} with pi-condense ${release}: condense-native sends the model what pi-condense alone sends`, { skip, timeout: 600_000 }, () => {
    const agent = installAgent(release);
    const alone = piRun(agent, { packages: ['npm:pi-condense'] });
    // The session pi-condense wrote, replayed with the same settings: under
    // 2.4.3 its frontier entries hold the boundary the replay computes from
    // the config at each flush (the replay's 'auto' finds them recorded).
    const written = sessionFileOf(agent);
    const replayed = replay(written, { policies: ['none', release === '2.4.3' ? 'config' : '2.9.1'], config: { contextPrune: CONTEXT_PRUNE }, release });
    const yours = replayed.policies.find((p) => p.yours);
    assert.equal(replayed.modelCalls, alone.requests.filter((l) => l.startsWith('{"kind":"agent"')).length, 'the replay finds every model call of the agent');
    if (release === '2.4.3') assert.deepEqual(yours.thinkingBoundary, { rule: 'recorded', reason: "the session's frontier entries, written under this config" });
    else assert.equal(yours.thinkingBoundary, null);
    const native = piRun(agent, { packages: FILTERED, prompts: [...PROMPTS, '/condense-native'] });
    // Installed, the settings not yet changed: pi loads pi-condense's own
    // entry, condense-native stands down and pi starts.
    const twice = piRun(agent, { packages: ['npm:pi-condense', 'npm:condense-native'], prompts: [...PROMPTS, '/condense-native'] });
    // The path forced render by render, across the switch both ways: the
    // engine one render behind (own), several behind (lag), up to date.
    const ROUTE = ['own', 'native', 'native', 'lag', 'lag', 'native', 'own', 'own', 'native', 'lag', 'native'];
    const routed = piRun(agent, { packages: FILTERED, envExtra: { CONDENSE_NATIVE_ROUTE: ROUTE.join(','), CONDENSE_NATIVE_STATUS: '1' } });
    // pi-condense's own switch off (its default): nothing renders, and the
    // status says so, on stderr in print mode.
    const idle = piRun(agent, { packages: FILTERED, extra: { contextPrune: { ...CONTEXT_PRUNE, enabled: false } }, prompts: ['/condense-native'] });
    const offBy = release === '2.4.3' ? { envExtra: { CONDENSE_NATIVE: 'off' } } : { extra: { condenseNative: { enabled: false } } };
    const off = piRun(agent, { packages: FILTERED, ...offBy });
    // pi's own Bun binary (built here with pi's flags): pi-condense alone
    // and with the addon, loaded from the same installed packages (its
    // system prompt names where the binary is, so alone runs there too).
    const inBinary = BUN_BINARY.why
      ? null
      : {
          alone: piRun(agent, { packages: ['npm:pi-condense'], binary: BUN_BINARY.path() }),
          native: piRun(agent, { packages: FILTERED, binary: BUN_BINARY.path() }),
        };

    // The session did what it is for.
    const agentCalls = alone.requests.filter((l) => l.startsWith('{"kind":"agent"')).length;
    const summaries = alone.requests.length - agentCalls;
    assert.equal(agentCalls, PROMPTS.length * 4, 'four model calls per prompt');
    assert.ok(summaries >= PROMPTS.length, `pi-condense flushed ${summaries} times`);
    const all = alone.requests.join('\n');
    for (const [what, mark] of [
      ['a stubbed tool result', '[Summarized in pruner summary, ref'],
      ['a compressed chain', '<compressed-chain id=\\"b'],
      ['a purged failed call', '"_purged"'],
    ]) {
      assert.ok(all.includes(mark), `pi-condense ${release} alone never sent ${what}: the session does not exercise it`);
    }

    assertSameRequests(native, alone, `${release} on condense-native`);
    assertSameRequests(off, alone, `${release} with condense-native switched off`);
    assertSameRequests(twice, alone, `${release} with pi-condense's own entry unfiltered`);
    assertSameRequests(routed, alone, `${release} switching between the addon and pi-condense's own`);
    if (inBinary) {
      assert.equal(inBinary.alone.requests.length, alone.requests.length, "pi's binary: as many requests as on Node");
      assertSameRequests(inBinary.native, inBinary.alone, `${release} on condense-native in pi's Bun binary`);
      assert.deepEqual(inBinary.native.warnings, [], `${release}: condense-native warned in pi's binary`);
      assert.deepEqual(inBinary.native.renders.map((r) => r.path), native.renders.map((r) => r.path), "pi's binary: the same path per render as on Node");
    }

    assert.deepEqual(native.warnings, [], `${release}: condense-native warned`);
    assert.equal(native.renders.length, agentCalls, 'one render per context event');
    assert.ok(native.renders.every((r) => r.engine === 'condense-native' && r.version === release), JSON.stringify(native.renders[0]));
    // Below the crossover (60 messages for 2.4.3, 40 for 2.9.1) and for the first render
    // pi-condense's own renders; from there on the addon.
    const paths = native.renders.map((r) => r.path);
    assert.equal(paths[0], 'own', 'the first render, the engine still cold');
    assert.ok(paths.includes('native') && paths.slice(paths.indexOf('native')).every((p) => p === 'native'), paths.join(' '));
    assert.deepEqual(
      routed.renders.map((r) => r.path),
      Array.from({ length: agentCalls }, (_, n) => (ROUTE[n % ROUTE.length] === 'native' ? 'native' : 'own')),
    );
    const lines = routed.stderr.split('\n').filter((l) => /^condense-native: render \d+ on /.test(l));
    assert.equal(lines.length, agentCalls, 'CONDENSE_NATIVE_STATUS=1: a line per render');
    assert.match(lines[1], /^condense-native: render 2 on condense-native \(native\) [\d.]+ ms$/);
    assert.match(
      routed.stderr,
      new RegExp(`\\ncondense-native: render engine: condense-native .*; each render's path forced by CONDENSE_NATIVE_ROUTE=${ROUTE.join(',')}; .* median [\\d.]+ ms over ${agentCalls} renders \\(\\d+ on the addon, \\d+ on pi-condense's own\\)\\n$`),
      'and the status at exit',
    );
    assert.ok(native.renders.some((r) => r.pruned));
    assert.equal(native.statuses.length, 1, '/condense-native answered');
    assert.match(
      native.statuses[0],
      new RegExp(
        `^render engine: condense-native \\(native addon, the ${release.slice(0, 3).replace('.', '\\.')} drop-in\\); pi-condense ${release.replace(/\./g, '\\.')}; ` +
          `below ${release === '2.4.3' ? 60 : 40} messages, and for the first render after a session opens, pi-condense's own render \\(faster there\\); last render [\\d.]+ ms on the addon, median [\\d.]+ ms over ${agentCalls} renders ` +
          `\\(${paths.filter((p) => p === 'native').length} on the addon, ${paths.filter((p) => p === 'own').length} on pi-condense's own\\)$`,
      ),
    );
    assert.equal(native.statuses[0].split(release).length, 2, 'the release is named once');

    assert.equal(idle.renders.length, 0);
    assert.equal(idle.statuses.length, 1);
    assert.match(
      idle.statuses[0],
      /; no render yet: pi-condense's pruning is off \("contextPrune": \{ "enabled": false \} in .+settings\.json\); turn it on with \/pruner on, or "contextPrune": \{ "enabled": true \} in .+settings\.json$/,
    );
    assert.ok(idle.stderr.includes(`condense-native: ${idle.statuses[0]}`), 'print mode: the status on stderr');

    assert.equal(twice.renders.length, 0, 'condense-native stood down');
    assert.equal(twice.warnings.length, 1, JSON.stringify(twice.warnings));
    const settings = path.join(agent, 'settings.json');
    assert.ok(
      twice.warnings[0].includes(`("npm:pi-condense" in the "packages" of ${settings})`) &&
        twice.warnings[0].includes(`make that entry read {"source":"npm:pi-condense","extensions":[]} in ${settings}, or run: node `) &&
        twice.warnings[0].endsWith('pi-setup'),
      twice.warnings[0],
    );
    assert.ok(twice.stderr.includes(twice.warnings[0]), 'the warning is on stderr in print mode');
    assert.doesNotMatch(twice.stderr, /conflicts with/);
    assert.equal(twice.statuses.length, 1);
    assert.match(twice.statuses[0], /^render engine: pi-condense's own \(condense-native stood down\); pi-condense [\d.]+; pi loads pi-condense's own extension too/);
    assert.equal(off.renders.length, agentCalls);
    assert.ok(off.renders.every((r) => r.engine === 'pi-condense'), JSON.stringify(off.renders[0]));
    assert.deepEqual(off.warnings, []);

    const ms = (runOf) => runOf.renders.map((r) => r.ms);
    const fmt = (list) => list.map((v) => v.toFixed(2)).join(' ');
    console.log(
      `# real pi ${PI_PKG.version} (Node ${process.versions.bun ? 'on PATH' : process.versions.node}), pi-condense ${release}, ${agentCalls} renders, ms per render:\n` +
        `#   pi-condense's own: median ${median(ms(off)).toFixed(3)}  [${fmt(ms(off))}]\n` +
        `#   condense-native:   median ${median(ms(native)).toFixed(3)}  [${fmt(ms(native))}]`,
    );
  });
}

// The gate (docs/GATE.md) in real pi: the model priced as Anthropic prices
// Sonnet, the clock moving a second per request and ten minutes (past the
// cache lifetime) after prompts 2 and 5, as a user pausing. Off (`enabled:
// false`), every request is pi-condense alone's; on, every request the gate
// held begins with the previous request's messages byte for byte, every
// request after a pause (and the first) applies as cold, `/condense-native`
// counts them, and the replay of the session pi wrote, behind the same
// gate, decides every call as pi did.
const GATE_CLOCK = { FAUX_PAUSES: '600000@2,5', FAUX_COST: JSON.stringify({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }) };

for (const release of RELEASES) {
  test(`pi ${PI_PKG.version} with pi-condense ${release}: the gate holds the previous request, applies when cold, and off changes nothing`, { skip, timeout: 600_000 }, () => {
    const agent = installAgent(release);
    const alone = piRun(agent, { packages: ['npm:pi-condense'], envExtra: GATE_CLOCK });
    const off = piRun(agent, { packages: FILTERED, envExtra: GATE_CLOCK, extra: { condenseNative: { gate: { enabled: false, horizon: 4 } } } });
    const on = piRun(agent, { packages: FILTERED, envExtra: GATE_CLOCK, extra: { condenseNative: { gate: { enabled: true } } }, prompts: [...PROMPTS, '/condense-native'] });
    assertSameRequests(off, alone, `${release} with the gate off`);
    assert.deepEqual(on.warnings, [], `${release}: the gate warned`);
    const agentRequests = (r) => r.requests.filter((l) => l.startsWith('{"kind":"agent"')).map((l) => JSON.parse(l));
    const sent = agentRequests(on);
    assert.equal(on.renders.length, sent.length, 'one render per request');
    const messages = (q) => q.context.messages.map((m) => JSON.stringify(m));
    let holds = 0;
    let pauses = 0;
    for (let k = 0; k < sent.length; k++) {
      const r = on.renders[k];
      assert.equal(r.path, 'native', `request ${k + 1}: the gate renders on the addon`);
      const gap = k === 0 ? Infinity : sent[k].at - sent[k - 1].at;
      if (gap > 300_000) {
        pauses += k > 0;
        assert.deepEqual([r.gate, r.gateReason], ['apply', 'cold'], `request ${k + 1}, ${gap} ms after the previous one`);
      }
      if (r.gate !== 'hold') continue;
      holds++;
      const before = messages(sent[k - 1]);
      const now = messages(sent[k]);
      assert.ok(now.length > before.length, `request ${k + 1}: a hold appends`);
      const differs = before.findIndex((m, i) => now[i] !== m);
      assert.equal(differs, -1, `request ${k + 1} (a hold): message ${differs} differs from the previous request's`);
    }
    const reasons = on.renders.map((r) => r.gateReason).join(' ');
    assert.ok(holds > 0 && pauses > 0, `${release}: ${holds} holds, ${pauses} pauses (${reasons})`);
    console.log(`# the gate in pi, ${release}: ${reasons}`);
    const applies = on.renders.length - holds;
    assert.equal(on.statuses.length, 1);
    assert.match(on.statuses[0], /; the gate is on, so every render is the addon's \(the gate reads its slots\), whatever the size; /);
    assert.match(on.statuses[0], new RegExp(`; gate \\(horizon auto, budget 0\\.8\\): ${applies} applies \\(\\d+ cold, \\d+ same, \\d+ paid, \\d+ over budget\\), ${holds} holds; `));
    const cold = on.renders.filter((r) => r.gateReason === 'cold').length;
    assert.ok(on.statuses[0].includes(`${applies} applies (${cold} cold,`), on.statuses[0]);
    // The replay of the session pi wrote, behind the same gate: the same
    // choice, apply or hold, at every call. (A reason may differ where the
    // two calibrations put a request on either side of the shortest
    // cacheable prefix: pi's is fitted on the answers so far, the replay's
    // on the whole file.)
    const replayed = replay(sessionFileOf(agent), { policies: [release === '2.4.3' ? 'config+gate' : '2.9.1+gate'], renders: true, config: { contextPrune: CONTEXT_PRUNE }, release });
    const gated = replayed.policies.find((p) => p.gate);
    assert.equal(gated.renders.map((r) => r.gate).join(' '), on.renders.map((r) => r.gate).join(' '), `${release}: the replay's gate against pi's (${reasons})`);
  });
}

test(`pi ${PI_PKG.version}: gate settings that are wrong are named with their file, and the gate stays off; without the addon it says it does not run`, { skip, timeout: 300_000 }, () => {
  const agent = installAgent('2.9.1');
  const alone = piRun(agent, { packages: ['npm:pi-condense'], prompts: PROMPTS.slice(0, 2) });
  const wrong = piRun(agent, { packages: FILTERED, extra: { condenseNative: { gate: { enabled: true, horizon: -1 } } }, prompts: PROMPTS.slice(0, 2) });
  assertSameRequests(wrong, alone, 'the gate with a wrong horizon');
  assert.equal(wrong.warnings.length, 1, JSON.stringify(wrong.warnings));
  assert.match(wrong.warnings[0], /^condense-native: "condenseNative": \{ "gate": \{"enabled":true,"horizon":-1\} \} in .+settings\.json: condenseNative\.gate\.horizon must be 'auto' or a finite number of calls >= 0; the gate is off$/);
  assert.ok(wrong.renders.every((r) => r.gate === undefined));
  // On, with condense-native switched off: the status says it does not run.
  const off = piRun(agent, { packages: FILTERED, envExtra: { CONDENSE_NATIVE: 'off' }, extra: { condenseNative: { gate: { enabled: true } } }, prompts: [PROMPTS[0], '/condense-native'] });
  assert.ok(off.renders.every((r) => r.engine === 'pi-condense' && r.gate === undefined));
  assert.match(off.statuses[0], /; the gate \(on in .+settings\.json\) does not run: it needs condense-native's render(;|$)/);
});

test(`pi ${PI_PKG.version}: a pi-condense release condense-native does not know runs as it always does, after a warning`, { skip, timeout: 300_000 }, () => {
  const agent = installAgent('2.4.3');
  const alone = piRun(agent, { packages: ['npm:pi-condense'], prompts: PROMPTS.slice(0, 3) });
  // The same code under another version number, named by the variable.
  const copy = path.join(prepare().work, 'pi-condense-2.5.0');
  fs.rmSync(copy, { recursive: true, force: true });
  fs.cpSync(path.join(agent, 'npm', 'node_modules', 'pi-condense'), copy, { recursive: true });
  const pkg = JSON.parse(fs.readFileSync(path.join(copy, 'package.json'), 'utf8'));
  fs.writeFileSync(path.join(copy, 'package.json'), JSON.stringify({ ...pkg, version: '2.5.0' }, null, 2));
  const unknown = piRun(agent, { packages: FILTERED, envExtra: { CONDENSE_NATIVE_PI_CONDENSE: copy }, prompts: [...PROMPTS.slice(0, 3), '/condense-native'] });
  assertSameRequests(unknown, alone, 'pi-condense 2.5.0');
  assert.equal(unknown.renders.length, 0, 'an unknown release is not routed');
  assert.equal(unknown.warnings.length, 1);
  assert.match(unknown.warnings[0], /pi-condense 2\.5\.0 is not a release condense-native renders/);
  assert.match(unknown.stderr, /pi-condense 2\.5\.0 is not a release condense-native renders/);
  // Renders it does not see are not said not to have happened.
  assert.equal(unknown.statuses.length, 1);
  assert.match(unknown.statuses[0], /; its renders are not seen here \(pi-condense runs as it is\)$/);
});
