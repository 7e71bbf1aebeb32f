'use strict';
// `condense-native pi-setup`: writes the settings pi needs to run
// pi-condense on condense-native, so that installing never stops pi (two
// copies of pi-condense register the same tool and pi refuses to start)
// and never leaves pi without pruning (condense-native's extension loads
// pi-condense; when pi cannot load condense-native while pi-condense's own
// entry is filtered out, neither runs, and nothing can say so). In the
// settings file pi goes by for pi-condense (the project's
// `.pi/settings.json` when it declares pi-condense, else the agent
// directory's `settings.json`; `--user` or `--project` chooses), it
//
//   - turns the pi-condense entry of `packages` into pi's package filter
//     with no extensions (`{ "source": ..., "extensions": [] }`), keeping its
//     source and any other keys;
//   - adds `{ "source": "npm:pi-condense", "extensions": [] }` when neither
//     settings file declares pi-condense (pi installs it at its next start);
//   - declares condense-native where pi can load it when neither settings
//     file has an entry pi can load: this copy's folder when it is a clone,
//     `--source <dir>` (a folder holding condense-native's package.json),
//     `npm:condense-native` when pi's npm folder holds it or with `--npm`;
//     an entry pi cannot load (not installed, a folder that is gone, a
//     tarball) is replaced in place, and said.
//
// It prints the change, copies the file to a backup first, writes the new
// file whole (with the old file's indentation) and touches nothing it cannot
// parse. Then it resolves both packages from the settings as pi does
// (pi/locate.js `sourceDir`) and prints what pi would load, with a warning
// for what it would not. Run twice, the second run has nothing to change.
// Exit 0 done (or nothing to do), 2 on an error (nothing written).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
// The pi package's own finders (pi/), so pi-setup resolves what pi would
// load exactly as the extension does when pi starts.
const { agentDirOf, namesPiCondense, loadsEntry, filteredEntry, stripBom, sourceDir, nameOfDir, dropInFor } = require('../pi/locate.js');
const { binaryOf } = require('../pi/binary.js');

const NAME = 'condense-native';
const NPM_SOURCE = 'npm:condense-native';
const EXIT = { OK: 0, ERROR: 2 };
// This copy of condense-native: a clone unless it sits in a node_modules
// folder (npx's cache, a project's dependencies, a global install).
const SELF = path.join(__dirname, '..');
// The names under which a package filter keeps condense-native's extension.
const OWN_ENTRY = new Set(['pi/extension.js', './pi/extension.js', '*', '**', '**/*', '*.js', '**/*.js', 'pi/*.js', 'pi/**']);

const HELP = `usage: ${NAME} pi-setup [--user | --project] [--source <dir> | --npm] [--dry-run]

Writes the settings pi needs to run pi-condense on condense-native, then
checks, resolving the packages as pi does, that pi would load both:

  - the pi-condense entry of "packages" becomes pi's package filter with no
    extensions ({ "source": "npm:pi-condense", "extensions": [] }), so pi
    loads pi-condense once, through condense-native; the entry is added
    when no settings file declares pi-condense;
  - condense-native is declared when no settings file has an entry pi can
    load: this copy's folder when it runs from a clone (or --source <dir>),
    "npm:condense-native" when pi's npm folder holds it (after pi install
    npm:condense-native) or with --npm. An entry pi cannot load (not
    installed, a folder that is gone, a tarball) is replaced, and said.

Shows the change and keeps a backup of the file (<file>.bak, or .bak.1,
.bak.2, ...). Running it again changes nothing.

The file: the project's .pi/settings.json when it declares pi-condense
(pi's project entry wins over the user's), else the agent directory's
settings.json ($PI_CODING_AGENT_DIR, default ~/.pi/agent).

  --user           the agent directory's settings.json
  --project        the project's .pi/settings.json (the current directory)
  --source <dir>   the condense-native folder to declare: a clone, built
                   with npm ci && npm run build (it must hold
                   condense-native's package.json)
  --npm            declare "npm:condense-native" even before pi's npm folder
                   holds it (pi installs it at its next start, once the
                   package is on the registry)
  --dry-run        show the change and the check, write nothing
  -h, --help       this text

exit status: 0 done or nothing to do, 2 an error (nothing written)`;

function usage(message) {
  const e = new Error(message);
  e.usage = true;
  return e;
}

function parse(argv) {
  const opts = { scope: null, source: null, npm: false, dryRun: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-h' || a === '--help') opts.help = true;
    else if (a === '--user' || a === '--project') {
      const scope = a.slice(2);
      if (opts.scope !== null && opts.scope !== scope) throw usage('--user and --project exclude each other');
      opts.scope = scope;
    } else if (a === '--dry-run') opts.dryRun = true;
    else if (a === '--npm') opts.npm = true;
    else if (a === '--source' || a.startsWith('--source=')) {
      const value = a === '--source' ? argv[++i] : a.slice('--source='.length);
      if (value === undefined || value === '' || value.startsWith('--')) throw usage('--source needs the folder of a condense-native clone');
      opts.source = value;
    } else throw usage(`unknown argument '${a}'`);
  }
  if (opts.npm && opts.source !== null) throw usage('--source and --npm exclude each other');
  return opts;
}

const expandHome = (p) => (p === '~' ? os.homedir() : p.startsWith('~/') ? path.join(os.homedir(), p.slice(2)) : p);

function readPackage(dir) {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  } catch {
    return null;
  }
}

/** --source, checked: the absolute folder of a condense-native package. */
function checkedSource(value, cwd) {
  if (/^(npm|git|github|https?|ssh):/.test(value)) throw usage(`--source takes the folder of a condense-native clone, not '${value}' (for the registry package: --npm)`);
  const dir = path.resolve(cwd, expandHome(value));
  let stat;
  try {
    stat = fs.statSync(dir);
  } catch (e) {
    throw usage(`--source ${value}: ${e.code === 'ENOENT' ? 'no such folder' : `cannot read it (${e.code || e.message})`}`);
  }
  if (!stat.isDirectory()) throw usage(`--source ${value} is a file: pi loads a local package from its folder (a clone; unpack a tarball first)`);
  const pkg = readPackage(dir);
  if (!pkg || pkg.name !== NAME) {
    throw usage(`--source ${value} holds no condense-native package.json (${pkg ? `its package is ${JSON.stringify(pkg.name)}` : 'none there'}): name the folder of a condense-native clone`);
  }
  return dir;
}

// A settings file as pi reads it: missing is empty; otherwise a JSON object
// whose `packages`, when present, is a list.
function readSettings(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    if (e.code === 'ENOENT') return { exists: false, text: null, settings: {} };
    throw new Error(`${file}: cannot read it (${e.code || e.message})`);
  }
  let settings;
  try {
    settings = JSON.parse(stripBom(text));
  } catch (e) {
    throw new Error(`${file} is not valid JSON (${e.message}); left as it is: fix it, or pass --user/--project for the other file`);
  }
  if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) {
    throw new Error(`${file} holds ${Array.isArray(settings) ? 'an array' : JSON.stringify(settings)}, not a settings object; left as it is`);
  }
  if (settings.packages !== undefined && !Array.isArray(settings.packages)) {
    throw new Error(`${file}: "packages" is ${typeof settings.packages}, not a list; left as it is`);
  }
  return { exists: true, text, settings };
}

const sourceOf = (entry) => (typeof entry === 'string' ? entry : entry && typeof entry.source === 'string' ? entry.source : null);
const packagesOf = (s) => (Array.isArray(s.settings.packages) ? s.settings.packages : []);

// pi's global npm root, where it also finds a user-scope npm package
// (`npm root -g`); asked once, only when needed.
let globalRoot;
function globalNpmRoot() {
  if (globalRoot === undefined) {
    const r = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['root', '-g'], { encoding: 'utf8', timeout: 10_000 });
    globalRoot = r.status === 0 ? r.stdout.trim() : null;
  }
  return globalRoot;
}

/** Where pi would load an npm package `name` of scope `s` from, or null: its npm folder (and, for the user, the global one). */
function npmDir(name, s) {
  const managed = path.join(s.npmRoot, 'node_modules', ...name.split('/'));
  if (nameOfDir(managed) === name) return managed;
  if (s.scope !== 'user') return null;
  const root = globalNpmRoot();
  const legacy = root ? path.join(root, ...name.split('/')) : null;
  return legacy && nameOfDir(legacy) === name ? legacy : null;
}

/**
 * Whether pi loads condense-native from `entry` of scope `s`: `{ ok, dir,
 * why }`, `why` saying in a few words what is wrong.
 */
function condenseNativeLoads(entry, s) {
  const source = sourceOf(entry);
  const where = sourceDir(source, s);
  if (!loadsEntry(entry, OWN_ENTRY)) return { ok: false, dir: null, why: 'its filter loads no extension of it' };
  if (where.kind === 'git') return { ok: true, dir: null, why: 'a git source (not looked into)' };
  if (where.kind === 'npm') {
    const dir = npmDir(where.name, s);
    return dir ? { ok: true, dir } : { ok: false, dir: null, why: `not installed in ${s.npmRoot}; pi tries to install it at each start, which fails while condense-native is not on the npm registry` };
  }
  let stat;
  try {
    stat = fs.statSync(where.dir);
  } catch {
    return { ok: false, dir: null, why: `no such folder (${where.dir})` };
  }
  if (!stat.isDirectory()) return { ok: false, dir: null, why: `${where.dir} is a file, which pi would load as an extension file, not a package` };
  const pkg = readPackage(where.dir);
  if (!pkg || pkg.name !== NAME) return { ok: false, dir: null, why: `${where.dir} holds no condense-native package.json` };
  const entries = pkg.pi && Array.isArray(pkg.pi.extensions) ? pkg.pi.extensions : [];
  if (!entries.some((e) => fs.existsSync(path.resolve(where.dir, e)))) return { ok: false, dir: where.dir, why: `${where.dir} holds no extension file pi could load` };
  return { ok: true, dir: where.dir };
}

// Whether a settings entry is condense-native's (pi may not be able to
// load it): npm:condense-native, a git source or tarball of that name, a
// folder holding its package.json, or a folder of that name that is gone.
function isCondenseNative(entry, s) {
  const source = sourceOf(entry);
  if (typeof source !== 'string') return false;
  const where = sourceDir(source, s);
  if (where.kind === 'npm') return where.name === NAME;
  if (where.kind === 'git') return /(^|[/:])condense-native(\.git)?(@[^/]*)?\/?$/.test(source);
  if (/condense-native-[\d.]+.*\.tgz$/.test(source)) return true;
  if (nameOfDir(where.dir) === NAME) return true;
  return !fs.existsSync(where.dir) && path.basename(where.dir).includes(NAME);
}

/**
 * The condense-native source to declare: `{ source }`, or `{ source: null,
 * why }` when there is none pi could load.
 */
function wantedSource(opts, target, cwd) {
  if (opts.source !== null) return { source: checkedSource(opts.source, cwd) };
  if (opts.npm) return { source: NPM_SOURCE };
  if (!path.resolve(SELF).split(path.sep).includes('node_modules')) return { source: path.resolve(SELF) };
  if (npmDir(NAME, target)) return { source: NPM_SOURCE };
  return {
    source: null,
    why: `this condense-native (${path.resolve(SELF)}) is an installed copy pi does not load, and ${path.join(target.npmRoot, 'node_modules')} holds no condense-native: run \`pi install npm:condense-native\` first, or pass --source <the folder of a clone> (or --npm once the package is on the registry)`,
  };
}

/**
 * The change for the target file given both settings files: `{ packages,
 * lines, warnings }` (the new list, the lines describing it, what it
 * cannot fix there), or null when there is none.
 */
function plan(target, other, want) {
  const packages = [...packagesOf(target)];
  const lines = [];
  const warnings = [];
  const show = (entry) => JSON.stringify(entry);
  let piCondense = false;
  packages.forEach((entry, i) => {
    if (!namesPiCondense(sourceOf(entry), target.file)) return;
    piCondense = true;
    if (!loadsEntry(entry)) return;
    packages[i] = filteredEntry(entry);
    lines.push(`-   ${show(entry)}`, `+   ${show(packages[i])}`);
  });
  if (!piCondense && !packagesOf(other).some((entry) => namesPiCondense(sourceOf(entry), other.file))) {
    const entry = { source: 'npm:pi-condense', extensions: [] };
    packages.unshift(entry);
    lines.push(`+   ${show(entry)}   (pi installs pi-condense at its next start)`);
  }
  const mine = (s, list) => list.map((entry, index) => ({ entry, index })).filter(({ entry }) => isCondenseNative(entry, s));
  const loads = (s, found) => found.some(({ entry }) => sourceOf(entry) === want.source || condenseNativeLoads(entry, s).ok);
  const here = mine(target, packages);
  const there = mine(other, packagesOf(other));
  if (loads(target, here) || loads(other, there)) return lines.length === 0 ? null : { packages, lines, warnings };
  for (const { entry } of there) warnings.push(`${show(entry)} in ${other.file} cannot load: ${condenseNativeLoads(entry, other).why}`);
  if (want.source === null) throw new Error(here.length > 0 ? `${show(here[0].entry)} in ${target.file} cannot load (${condenseNativeLoads(here[0].entry, target).why}), and ${want.why}` : want.why);
  const note = want.source === NPM_SOURCE && !npmDir(NAME, target) ? '   (pi installs it at its next start)' : '';
  if (here.length > 0) {
    const [{ entry, index }, ...rest] = here;
    packages[index] = want.source;
    lines.push(`-   ${show(entry)}   (pi cannot load it: ${condenseNativeLoads(entry, target).why})`, `+   ${show(want.source)}${note}`);
    for (const r of rest.reverse()) {
      packages.splice(r.index, 1);
      lines.push(`-   ${show(r.entry)}   (pi cannot load it: ${condenseNativeLoads(r.entry, target).why})`);
    }
  } else {
    packages.push(want.source);
    lines.push(`+   ${show(want.source)}${note}`);
  }
  return { packages, lines, warnings };
}

/**
 * What pi would load from the two settings files (project first, as pi
 * dedupes packages): `{ lines, warnings }` for pi-condense and
 * condense-native.
 */
function check(read) {
  const lines = [];
  const warnings = [];
  const first = (test) => {
    for (const s of [read.project, read.user]) {
      const entry = packagesOf(s).find((e) => test(e, s));
      if (entry !== undefined) return { entry, s };
    }
    return null;
  };
  const pc = first((e, s) => namesPiCondense(sourceOf(e), s.file));
  if (pc === null) {
    warnings.push('pi-condense: no settings file declares it, so there is nothing to render');
  } else {
    const where = sourceDir(sourceOf(pc.entry), pc.s);
    const dir = where.kind === 'npm' ? npmDir(where.name, pc.s) : where.dir;
    const pkg = dir ? readPackage(dir) : null;
    const at = `${JSON.stringify(pc.entry)} in ${pc.s.file}`;
    if (loadsEntry(pc.entry)) warnings.push(`pi-condense: ${at} loads its own extension too: condense-native stands down and pi-condense renders with its own code`);
    if (pkg && pkg.name === 'pi-condense') {
      const known = dropInFor(String(pkg.version)) !== null;
      lines.push(`  pi-condense: ${at}: ${pkg.version} in ${dir}${known ? ', loaded through condense-native' : ''}`);
      if (!known) warnings.push(`pi-condense ${pkg.version} is not a release condense-native renders (2.4.x, 2.9.x): it runs as it always does`);
    } else if (where.kind === 'npm') {
      lines.push(`  pi-condense: ${at}: not installed yet; pi installs it at its next start (it needs the network)`);
    } else {
      warnings.push(`pi-condense: ${at}: pi finds no pi-condense package there`);
    }
  }
  const cn = first((e, s) => isCondenseNative(e, s));
  if (cn === null) {
    warnings.push('condense-native: no settings file declares it: pi loads no pruning while pi-condense is filtered');
    return { lines, warnings };
  }
  const at = `${JSON.stringify(cn.entry)} in ${cn.s.file}`;
  const loads = condenseNativeLoads(cn.entry, cn.s);
  if (!loads.ok) {
    warnings.push(`condense-native: ${at} cannot load (${loads.why}): until it does, pi runs with neither extension`);
  } else if (loads.dir === null) {
    lines.push(`  condense-native: ${at}: ${loads.why}`);
  } else {
    const pkg = readPackage(loads.dir);
    const binary = binaryOf(loads.dir);
    lines.push(`  condense-native: ${at}: ${pkg.version} in ${loads.dir}, ${binary.file ? `native binary ${path.basename(binary.file)}` : 'no native binary'}`);
    if (!binary.file) warnings.push(`condense-native: no native binary for ${process.platform}-${process.arch} in ${loads.dir}: ${binary.fix}; until then pi-condense renders with its own code`);
  }
  return { lines, warnings };
}

function backupName(file) {
  for (let n = 0; ; n++) {
    const name = n === 0 ? `${file}.bak` : `${file}.bak.${n}`;
    if (!fs.existsSync(name)) return name;
  }
}

function write(file, text, settings) {
  const indent = (text && /^([ \t]+)\S/m.exec(text)?.[1]) || '  ';
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.condense-native-${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(settings, null, indent)}\n`);
  fs.renameSync(tmp, file);
}

/** Runs `pi-setup` with `argv` (after the command name); returns the exit status. */
async function piSetupMain(argv, io = { stdout: process.stdout, stderr: process.stderr }, cwd = process.cwd()) {
  const err = (text) => io.stderr.write(`${NAME}: ${text}\n`);
  const usageError = (e) => {
    err(`error: ${e.message}`);
    err(`try '${NAME} pi-setup --help'`);
    return EXIT.ERROR;
  };
  let opts;
  try {
    opts = parse(argv);
  } catch (e) {
    return usageError(e);
  }
  if (opts.help) {
    io.stdout.write(`${HELP}\n`);
    return EXIT.OK;
  }
  const agentDir = agentDirOf(null);
  const scopes = {
    user: { scope: 'user', file: path.join(agentDir, 'settings.json'), npmRoot: path.join(agentDir, 'npm') },
    project: { scope: 'project', file: path.join(cwd, '.pi', 'settings.json'), npmRoot: path.join(cwd, '.pi', 'npm') },
  };
  try {
    const read = {};
    for (const scope of ['user', 'project']) {
      // The file not written is read only to see what it declares: one pi
      // cannot parse is reported, not a reason to stop.
      try {
        read[scope] = { ...scopes[scope], ...readSettings(scopes[scope].file) };
      } catch (e) {
        if (opts.scope === scope) throw e;
        read[scope] = { ...scopes[scope], exists: true, settings: {}, unreadable: e.message };
      }
    }
    const scope = opts.scope || (packagesOf(read.project).some((e) => namesPiCondense(sourceOf(e), read.project.file)) ? 'project' : 'user');
    const target = read[scope];
    if (target.unreadable) throw new Error(target.unreadable);
    const other = read[scope === 'user' ? 'project' : 'user'];
    if (other.unreadable) err(`warning: ${other.unreadable}`);
    let want;
    try {
      want = wantedSource(opts, target, cwd);
    } catch (e) {
      if (e.usage) return usageError(e);
      throw e;
    }
    const change = plan(target, other, want);
    for (const w of change ? change.warnings : []) err(`warning: ${w}`);
    if (change === null) {
      io.stdout.write(`${target.file}: nothing to do (pi-condense's entry is filtered and condense-native is declared)\n`);
    } else {
      io.stdout.write(`${target.file}${target.exists ? '' : ' (a new file)'}, "packages":\n${change.lines.join('\n')}\n`);
      if (opts.dryRun) {
        io.stdout.write('dry run: nothing written\n');
      } else {
        if (target.exists) {
          const backup = backupName(target.file);
          fs.copyFileSync(target.file, backup);
          io.stdout.write(`backup: ${backup}\n`);
        }
        write(target.file, target.text, { ...target.settings, packages: change.packages });
        io.stdout.write(`written: ${target.file}\n`);
      }
    }
    const planned = change === null ? read : { ...read, [scope]: { ...target, settings: { ...target.settings, packages: change.packages } } };
    const seen = check(planned);
    io.stdout.write(`what pi loads${opts.dryRun && change !== null ? ' (once written)' : ''}:\n${seen.lines.join('\n')}${seen.lines.length ? '\n' : ''}`);
    for (const w of seen.warnings) err(`warning: ${w}`);
    return EXIT.OK;
  } catch (e) {
    err(`error: ${e.message}`);
    return EXIT.ERROR;
  }
}

module.exports = { piSetupMain };
