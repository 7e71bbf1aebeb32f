'use strict';

// What loadSession (js/sessionfile.js) and replay (js/replay.js) share: the
// file argument (a path, a file URL or the file's bytes), the check that
// the native binding is there, and the Error a native failure becomes (a
// stable `code`, the file `line`, the file name).

/** `{ path, name }` or `{ bytes, name }` for the native call. */
function fileInputOf(pathOrBuffer, where, argumentError) {
  if (typeof pathOrBuffer === 'string') return { path: pathOrBuffer, name: pathOrBuffer };
  if (pathOrBuffer instanceof URL) {
    const { fileURLToPath } = require('node:url');
    const path = fileURLToPath(pathOrBuffer);
    return { path, name: path };
  }
  if (pathOrBuffer instanceof Uint8Array) return { bytes: pathOrBuffer, name: '<buffer>' };
  throw argumentError(`${where}: expected a file path, a file URL or a Buffer/Uint8Array`);
}

/** Throws ERR_CONDENSE_UNSUPPORTED when `native[binding]` did not load. */
function requireBinding(native, binding, where) {
  if (typeof native[binding] !== 'function') {
    const err = new Error(`${where} needs the native binding, which did not load on this platform`);
    err.code = 'ERR_CONDENSE_UNSUPPORTED';
    throw err;
  }
}

/** Throws the Error a native result with `errorCode` stands for. */
function throwIfFailed(result, name) {
  if (!result.errorCode) return;
  const line = result.errorLine ?? undefined;
  const where = line === undefined ? name : `${name}:${line}`;
  const err = new Error(`${where}: ${result.errorMessage}`);
  err.code = result.errorCode;
  // Always set: Bun gives every Error a `line` of its own (the source line
  // that made it), which must not pass for the file's.
  err.line = line;
  err.file = name;
  throw err;
}

module.exports = { fileInputOf, requireBinding, throwIfFailed };
