'use strict';
// The oracles for session loading (SESSIONS.md part D): pi's own
// SessionManager (the devDependency) for the entries, the context and the
// branch, and pi-condense's reference ToolCallIndexer (../shared/reference,
// absent on some machines) for the state. Also the frontier rule of B.5,
// which is short enough to state here, and the projection of B.6.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const ROOT = path.join(__dirname, '..', '..');
const PI_NAME = '@earendil-works/pi-coding-agent';
const PI_DIR = path.join(ROOT, 'node_modules', ...PI_NAME.split('/'));
const REFERENCE = path.join(ROOT, '..', 'shared', 'reference');

// pi's package entry needs Node 22 (fs.globSync); below that the session
// manager module itself is imported (the same code the entry re-exports).
async function importPi() {
  try {
    const m = await import(PI_NAME);
    if (typeof m.SessionManager === 'function') return m;
  } catch {
    // fall through
  }
  return import(pathToFileURL(path.join(PI_DIR, 'dist', 'core', 'session-manager.js')).href);
}

/** The reference indexers by dialect, or null when ../shared is absent. */
async function importReference() {
  const out = {};
  for (const dialect of ['2.4.3', '2.9.1']) {
    const file = path.join(REFERENCE, `pi-condense-${dialect}`, 'indexer.mjs');
    if (!fs.existsSync(file)) return null;
    out[dialect] = (await import(pathToFileURL(file).href)).ToolCallIndexer;
  }
  return out;
}

const RECORD_FIELDS = {
  '2.4.3': ['toolName', 'args', 'spillPath', 'spillBytes', 'resultPreview'],
  '2.9.1': ['toolCallId', 'resultTimestamp', 'toolName', 'args', 'spillPath', 'spillBytes', 'resultPreview'],
};

/** B.6: the reference indexer's maps as the addon's state object. */
function stateOf(indexer, dialect) {
  const records = {};
  for (const [key, record] of indexer.index) {
    const r = Object(record);
    const kept = {};
    for (const f of RECORD_FIELDS[dialect]) if (Object.hasOwn(r, f)) kept[f] = r[f];
    records[String(key)] = kept;
  }
  const state = {
    records,
    dedupAliases: Object.fromEntries(indexer.dedupAliasToOriginal),
    shortRefs: Object.fromEntries(indexer.toolCallIdToAlias),
    refAliases: Object.fromEntries(indexer.aliasToToolCallId),
    chains: [...indexer.chainRegistry.values()],
    summaryBodies: indexer.summaryBodies,
  };
  return JSON.parse(JSON.stringify(state));
}

/** B.5 over a branch. */
function frontierOf(branch, dialect) {
  let frontier = null;
  for (const e of branch) {
    if (e.type !== 'custom' || e.customType !== 'context-prune-frontier') continue;
    const d = e.data;
    if (!d || !d.lastAttemptedToolCallId) continue;
    frontier = {
      lastAttemptedToolCallId: d.lastAttemptedToolCallId,
      lastAttemptedToolName: d.lastAttemptedToolName ?? 'unknown',
      lastAttemptedTurnIndex: d.lastAttemptedTurnIndex ?? 0,
      lastAttemptedTimestamp: d.lastAttemptedTimestamp ?? 0,
      attemptedBatchCount: d.attemptedBatchCount ?? 0,
      attemptedToolCallCount: d.attemptedToolCallCount ?? 0,
      rawCharCount: d.rawCharCount ?? 0,
      summaryCharCount: d.summaryCharCount ?? 0,
      outcome: d.outcome ?? 'summarized',
    };
    if (dialect === '2.4.3') frontier.thinkingStripBoundaryTimestamp = d.thinkingStripBoundaryTimestamp;
  }
  return JSON.parse(JSON.stringify(frontier));
}

/**
 * What pi (and the reference) make of a session text: { openError } when pi
 * refuses the file, { cycle } when pi would hang, else the handler view
 * (JSON-normalized: NaN is null, undefined fields are gone) or the error
 * building it, and per dialect the state and frontier or the reference's
 * throw. The file is opened from a copy (pi writes to it).
 */
async function oracle(pi, reference, text, leafId) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sessfile-'));
  const file = path.join(dir, 'session.jsonl');
  fs.writeFileSync(file, text);
  try {
    let sm;
    try {
      sm = pi.SessionManager.open(file, dir);
    } catch (e) {
      return { openError: e };
    }
    if (leafId !== undefined) sm.branch(leafId);
    const out = {};
    const probe = sm.getLeafId();
    // A path cycle makes both pi readers loop: check before calling them.
    const entries = sm.getEntries();
    const contextLeaf = probe === null ? null : probe ? sm.getEntry(probe) ?? entries[entries.length - 1] : entries[entries.length - 1];
    if (contextLeaf) {
      const seen = new Set();
      for (let c = contextLeaf; c; c = c.parentId ? sm.getEntry(c.parentId) : undefined) {
        if (seen.has(c)) return { cycle: true };
        seen.add(c);
      }
    }
    try {
      const ctx = sm.buildSessionContext();
      out.messages = JSON.parse(JSON.stringify(ctx.messages.filter((m) => m.role !== 'system')));
    } catch (e) {
      out.contextError = e;
    }
    const branch = sm.getBranch();
    out.states = {};
    if (reference) {
      for (const dialect of ['2.4.3', '2.9.1']) {
        const indexer = new reference[dialect]();
        try {
          indexer.reconstructFromSession({ sessionManager: { getBranch: () => branch } });
          out.states[dialect] = { state: stateOf(indexer, dialect), frontier: frontierOf(branch, dialect) };
        } catch (e) {
          out.states[dialect] = { error: e };
        }
      }
    }
    out.entryIds = entries.map((e) => e.id).filter((id) => typeof id === 'string');
    return out;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

module.exports = { importPi, importReference, stateOf, frontierOf, oracle, REFERENCE };
