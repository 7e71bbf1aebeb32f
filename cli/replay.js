'use strict';

// `condense-native replay`: every file replayed under each policy, with
// "yours" rendered from the settings and release main.js settled; the
// report is the totals over the files first (one file: its own table),
// the per-file tables with --per-file, then a legend of the terms shown.
// A file that fails is named on stderr with its line and left out of the
// totals, which say how many were; lines the loader skipped (as pi skips
// them) are counted in one stderr line per file.

const fs = require('node:fs');
const path = require('node:path');

const { fileTable, rendersTable, totalsTable, totalsOf, group, plural, skippedLine } = require('./table.js');
const { legend } = require('./legend.js');
const { svgOf } = require('./svg.js');
const { makeProgress } = require('./progress.js');
const { contextsDirs } = require('./outputs.js');

const RETENTION = { short: 'short retention: the cache lives 5 minutes', long: 'long retention: the cache lives 1 hour' };

/** The lines that say what was priced, with which settings. */
function header(run, ctx, results) {
  const s = ctx.settings;
  const model = results[0]?.result.cacheModel ?? run.options.cacheModel ?? 'provider';
  const retention = results[0]?.result.retention ?? run.options.retention ?? 'short';
  const lines = [
    `settings: ${s.source}; ${s.releaseSource}`,
    model === 'provider'
      ? `priced as the provider bills each request pi sends (pi-ai's catalog prices, ${RETENTION[retention]})`
      : `priced with the prefix rule (every message before the first changed one is read; no provider bills so), ${RETENTION[retention]}`,
  ];
  if (s.enabled === false && (s.installed !== null || s.config !== null)) {
    lines.push(`pi-condense's master switch is off in these settings (contextPrune.enabled is not true): pi sends these sessions unpruned today; the "(yours)" row is what switching it on would cost.`);
  }
  return lines;
}

function isSample(file, sample) {
  try {
    return fs.realpathSync(file) === fs.realpathSync(sample);
  } catch {
    return false;
  }
}

async function replayMain(run, ctx) {
  const { out, errorLine, EXIT, settings, files, errors } = ctx;
  const { replayAsync } = require('..');
  const started = process.hrtime.bigint();
  // Files are named as given; the default sample relative to the cwd.
  const display = (f) => (run.paths.length ? f : path.relative(process.cwd(), ctx.sample) || ctx.sample);
  const progress = !run.json && ctx.stderr.isTTY ? makeProgress(ctx.stderr) : null;
  const options = {
    ...run.options,
    policies: run.policies,
    config: settings.config,
    compaction: settings.compaction,
    cacheWarming: settings.cacheWarming,
    release: settings.release,
    renders: run.renders || run.svg !== null,
  };
  const results = [];
  // --contexts DIR: DIR/<policy>.jsonl, under a folder per file when
  // several are replayed (checked before the run: outputs.js).
  const contextsDirOf = run.contexts === null ? null : contextsDirs(run.contexts, files);
  for (const [i, file] of files.entries()) {
    const name = display(file);
    try {
      const onProgress = progress ? (done, total) => progress.update(i, files.length, name, done, total) : null;
      if (progress) progress.update(i, files.length, name, 0, 0);
      const contextsDir = contextsDirOf === null ? undefined : contextsDirOf.get(file);
      const result = await replayAsync(file, { ...options, onProgress, contextsDir });
      if (progress) progress.clear();
      results.push({ file: name, result, synthetic: isSample(file, ctx.sample) });
      const skipped = skippedLine(name, result.skippedLines);
      if (skipped) errorLine(skipped);
    } catch (e) {
      if (progress) progress.clear();
      if (typeof e.code !== 'string' || !e.code.startsWith('ERR_CONDENSE_')) throw e;
      // The API's message starts with the file (and line) it names.
      const prefix = e.line ? `${file}:${e.line}: ` : `${file}: `;
      const message = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
      errors.push({ file: name, error: { code: e.code, message, line: e.line ?? null } });
      errorLine(`${e.line ? `${name}:${e.line}` : name}: ${message}`);
    }
  }
  const totals = totalsOf(results);
  const broken = totals.reduce((n, t) => n + t.invariantBroken, 0);
  // The exit status answers for the release the user runs: a policy
  // replayed beside it for comparison is reported, not failed on.
  const brokenYours = totals.reduce((n, t) => n + (t.yours ? t.invariantBroken : 0), 0);
  if (run.svg !== null && results.length > 0) {
    try {
      fs.writeFileSync(run.svg, svgOf(results, ctx.svgMark));
    } catch (e) {
      errorLine(`${run.svg}: cannot write the SVG (${e.code || e.message})`);
      errors.push({ file: run.svg, error: { code: 'ERR_CONDENSE_IO', message: e.message, line: null } });
    }
  }
  if (run.json) {
    const doc = {
      settings: { config: settings.source, release: settings.release, releaseSource: settings.releaseSource, enabled: settings.enabled },
      totals,
      files: results.map(({ file, result }) => ({ file, ...result })),
      errors,
      summary: {
        files: results.length + errors.length,
        failed: errors.length,
        modelCalls: results.reduce((n, r) => n + r.result.modelCalls, 0),
        invariantBroken: broken,
        elapsedMs: Number(process.hrtime.bigint() - started) / 1e6,
      },
    };
    out(`${JSON.stringify(doc)}\n`);
  } else if (results.length > 0) {
    const used = new Set();
    const lines = header(run, ctx, results);
    lines.push('');
    if (results.length === 1) {
      lines.push(fileTable(results[0].file, results[0].result, used, results[0]));
      if (run.renders) lines.push('', rendersTable(results[0].result));
    } else {
      const calls = results.reduce((n, r) => n + r.result.modelCalls, 0);
      lines.push(`${plural(results.length, 'session file')}, ${group(calls)} model calls${errors.length ? `; ${plural(errors.length, 'file')} left out (named on stderr)` : ''}`, '');
      lines.push(totalsTable(totals, used));
      if (run.perFile) {
        for (const r of results) {
          lines.push('', fileTable(r.file, r.result, used, r));
          if (run.renders) lines.push('', rendersTable(r.result));
        }
      } else {
        lines.push('', `(--per-file: a table per file, with its causes and calibration)`);
        // The renders that broke the invariant, which the file tables
        // would list.
        for (const r of results) {
          for (const p of r.result.policies) {
            if (!p.invariant.flushGated) continue;
            for (const v of p.invariant.violations.slice(0, 5)) {
              lines.push(`  ${r.file}: ${p.label}: model call ${v.render}, output message ${v.outputIndex}: ${v.phase}: ${v.detail}`);
            }
            if (p.invariant.broken > 5) lines.push(`  ${r.file}: ${p.label}: ... ${p.invariant.broken - 5} more (--json lists them)`);
          }
        }
      }
    }
    if (broken > 0) {
      const why = "pi-condense promises to change history only at a flush; such a render is a bug of that release, or a state the session file does not explain.";
      lines.push(
        '',
        brokenYours > 0
          ? `The flush-gated invariant broke in ${plural(brokenYours, 'render')} of your release (listed above): exit status 1. ${why}`
          : `The flush-gated invariant broke in ${plural(broken, 'render')} of policies compared with yours (listed above), none of your release's: exit status 0. ${why}`,
      );
    }
    lines.push(...legend(used));
    out(`${lines.join('\n')}\n`);
  }
  if (errors.length > 0) return EXIT.ERROR;
  return brokenYours > 0 ? EXIT.FOUND : EXIT.OK;
}

module.exports = { replayMain };
