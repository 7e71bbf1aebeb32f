'use strict';
// `condense-native pi-setup`: writes the settings pi needs to run
// pi-condense on condense-native, so that installing never stops pi (two
// copies of pi-condense register the same tool and pi refuses to start).
// In the settings file pi goes by for pi-condense (the project's
// `.pi/settings.json` when it declares pi-condense, else the agent
// directory's `settings.json`; `--user` or `--project` chooses), it
//
//   - turns the pi-condense entry of `packages` into pi's package filter
//     with no extensions (`{ "source": ..., "extensions": [] }`), keeping its
//     source and any other keys;
//   - adds `{ "source": "npm:pi-condense", "extensions": [] }` when neither
//     settings file declares pi-condense (pi installs it at its next start);
//   - adds `npm:condense-native` (or `--source <spec>`: a clone, a tarball)
//     when neither settings file declares condense-native, so setup before
//     `pi install` works as well as after.
//
// It prints the change, copies the file to a backup first, writes the new
// file whole (with the old file's indentation) and touches nothing it cannot
// parse. Run twice, the second run has nothing to do. Exit 0 done (or
// nothing to do), 2 on an error.

const fs = require('node:fs');
const path = require('node:path');
const { agentDirOf, namesPiCondense, loadsEntry, filteredEntry, stripBom } = require('../../pi/locate.js');

const NAME = 'condense-native';
const EXIT = { OK: 0, ERROR: 2 };

const HELP = `usage: ${NAME} pi-setup [--user | --project] [--source <spec>] [--dry-run]

Writes the settings pi needs to run pi-condense on condense-native: the
pi-condense entry of "packages" becomes pi's package filter with no
extensions ({ "source": "npm:pi-condense", "extensions": [] }), so pi
loads pi-condense once, through condense-native. Adds that entry when no
settings file declares pi-condense, and "npm:condense-native" when none
declares condense-native. Shows the change and keeps a backup of the file
(<file>.bak, or .bak.1, .bak.2, ...). Running it again does nothing.

The file: the project's .pi/settings.json when it declares pi-condense
(pi's project entry wins over the user's), else the agent directory's
settings.json ($PI_CODING_AGENT_DIR, default ~/.pi/agent).

  --user           the agent directory's settings.json
  --project        the project's .pi/settings.json (the current directory)
  --source <spec>  the condense-native source to add when none is declared
                   (default npm:condense-native; a path to a clone or a
                   packed tarball works too)
  --dry-run        show the change, write nothing
  -h, --help       this text

exit status: 0 done or nothing to do, 2 an error (nothing written)`;

function parse(argv) {
  const opts = { scope: null, source: 'npm:condense-native', dryRun: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-h' || a === '--help') opts.help = true;
    else if (a === '--user' || a === '--project') {
      const scope = a.slice(2);
      if (opts.scope !== null && opts.scope !== scope) throw usage('--user and --project exclude each other');
      opts.scope = scope;
    } else if (a === '--dry-run') opts.dryRun = true;
    else if (a === '--source' || a.startsWith('--source=')) {
      const value = a === '--source' ? argv[++i] : a.slice('--source='.length);
      if (value === undefined || value === '' || value.startsWith('--')) throw usage('--source needs a package source (npm:condense-native, a path)');
      opts.source = value;
    } else throw usage(`unknown argument '${a}'`);
  }
  return opts;
}

function usage(message) {
  const e = new Error(message);
  e.usage = true;
  return e;
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

function namesCondenseNative(source, file) {
  if (typeof source !== 'string') return false;
  if (/^npm:condense-native(@|$)/.test(source)) return true;
  if (/^(git:|https?:|ssh:|git@)/.test(source)) return /(^|[/:])condense-native(\.git)?(@[^/]*)?\/?$/.test(source);
  if (/condense-native-[\d.]+.*\.tgz$/.test(source)) return true;
  try {
    const dir = path.resolve(path.dirname(file), source);
    return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).name === NAME;
  } catch {
    return false;
  }
}

function declares(settings, file, names) {
  return Array.isArray(settings.packages) && settings.packages.some((entry) => names(sourceOf(entry), file));
}

/**
 * The change for `file` given both settings files: `{ packages, lines }`
 * (the new list and the lines describing it), or null when there is none.
 */
function plan(target, other, source) {
  const before = Array.isArray(target.settings.packages) ? target.settings.packages : [];
  const packages = [...before];
  const lines = [];
  const show = (entry) => JSON.stringify(entry);
  let piCondense = false;
  packages.forEach((entry, i) => {
    if (!namesPiCondense(sourceOf(entry), target.file)) return;
    piCondense = true;
    if (!loadsEntry(entry)) return;
    packages[i] = filteredEntry(entry);
    lines.push(`-   ${show(entry)}`, `+   ${show(packages[i])}`);
  });
  if (!piCondense && !declares(other.settings, other.file, namesPiCondense)) {
    const entry = { source: 'npm:pi-condense', extensions: [] };
    packages.unshift(entry);
    lines.push(`+   ${show(entry)}   (pi installs pi-condense at its next start)`);
  }
  if (!declares(target.settings, target.file, namesCondenseNative) && !declares(other.settings, other.file, namesCondenseNative)) {
    packages.push(source);
    lines.push(`+   ${show(source)}${source.startsWith('npm:') ? '   (pi installs it at its next start)' : ''}`);
  }
  return lines.length === 0 ? null : { packages, lines };
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
  let opts;
  try {
    opts = parse(argv);
  } catch (e) {
    err(`error: ${e.message}`);
    err(`try '${NAME} pi-setup --help'`);
    return EXIT.ERROR;
  }
  if (opts.help) {
    io.stdout.write(`${HELP}\n`);
    return EXIT.OK;
  }
  const agentDir = agentDirOf(null);
  const files = { user: path.join(agentDir, 'settings.json'), project: path.join(cwd, '.pi', 'settings.json') };
  try {
    const read = {};
    for (const scope of ['user', 'project']) {
      // The file not written is read only to see what it declares: one pi
      // cannot parse is reported, not a reason to stop.
      try {
        read[scope] = { file: files[scope], ...readSettings(files[scope]) };
      } catch (e) {
        if (opts.scope === scope) throw e;
        read[scope] = { file: files[scope], exists: true, settings: {}, unreadable: e.message };
      }
    }
    const scope = opts.scope || (declares(read.project.settings, files.project, namesPiCondense) ? 'project' : 'user');
    const target = read[scope];
    if (target.unreadable) throw new Error(target.unreadable);
    const other = read[scope === 'user' ? 'project' : 'user'];
    if (other.unreadable) err(`warning: ${other.unreadable}`);
    const change = plan(target, other, opts.source);
    if (change === null) {
      io.stdout.write(`${target.file}: nothing to do (pi-condense's entry is filtered and condense-native is declared)\n`);
      return EXIT.OK;
    }
    io.stdout.write(`${target.file}${target.exists ? '' : ' (a new file)'}, "packages":\n${change.lines.join('\n')}\n`);
    if (opts.dryRun) {
      io.stdout.write('dry run: nothing written\n');
      return EXIT.OK;
    }
    if (target.exists) {
      const backup = backupName(target.file);
      fs.copyFileSync(target.file, backup);
      io.stdout.write(`backup: ${backup}\n`);
    }
    write(target.file, target.text, { ...target.settings, packages: change.packages });
    io.stdout.write(`written: ${target.file}\n`);
    return EXIT.OK;
  } catch (e) {
    err(`error: ${e.message}`);
    return EXIT.ERROR;
  }
}

module.exports = { piSetupMain, HELP };
