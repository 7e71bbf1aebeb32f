'use strict';

// What the native side reads of the pi-condense state, and the JSON text a
// state crosses over as. Of an indexer record the render path reads only
// toolCallId (2.9.1 groups occurrence keys by it), toolName and args.path
// (protection, src/config.rs `protects`), and spillPath, spillBytes,
// resultPreview, toolName (the stub text, src/phases/stub.rs); the rest of a
// record (the full arguments, the result text) can be megabytes per state
// that would be serialized and parsed for nothing. src/state.rs reads the
// projected records exactly as it reads whole ones.

function projectRecord(record) {
  if (record === null || typeof record !== 'object') return record ?? null;
  // A record that serializes itself is sent as it serializes.
  if (typeof record.toJSON === 'function') return record;
  const out = {};
  if (record.toolCallId !== undefined) out.toolCallId = record.toolCallId;
  if (record.toolName !== undefined) out.toolName = record.toolName;
  if (record.args !== undefined) {
    const path = record.args != null ? record.args.path : undefined;
    out.args = typeof path === 'string' ? { path } : {};
  }
  if (record.spillPath !== undefined) out.spillPath = record.spillPath;
  if (record.spillBytes !== undefined) out.spillBytes = record.spillBytes;
  if (record.resultPreview !== undefined) out.resultPreview = record.resultPreview;
  return out;
}

/**
 * JSON text of `state` for the native side, its records projected; throws
 * what JSON.stringify throws (a cycle, a BigInt).
 */
function stateJson(state) {
  const records = state !== null && typeof state === 'object' ? state.records : undefined;
  if (records === null || typeof records !== 'object' || Array.isArray(records) || typeof state.toJSON === 'function') {
    return JSON.stringify(state ?? null);
  }
  // No prototype: an id like `__proto__` stays an own key.
  const slim = Object.create(null);
  for (const key of Object.keys(records)) slim[key] = projectRecord(records[key]);
  return JSON.stringify({ ...state, records: slim });
}

module.exports = { projectRecord, stateJson };
