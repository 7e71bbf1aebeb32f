'use strict';

// The JS applier of the edit script: builds the pruned array from the
// caller's own objects. An untouched message is the caller's object itself;
// an edited or inserted one is built afresh at every render (so a later
// handler that edits the result in place never reaches another render's).
// The opcodes and the shapes below are the JavaScript copy of src/script.rs
// (`Op`, the stub envelope, the purge marker, the synthetic block); the
// edit descriptions are written by `write_description` in src/engine.rs.

// src/script.rs `Op`.
const OP = Object.freeze({ KEEP: 0, STUB: 1, EDIT: 2, INSERT: 3 });

/** The purge marker (src/script.rs `purge_marker`). */
function purgedArguments(size) {
  return { _purged: `<purged-errored-args size="${size}"/>` };
}

/**
 * The stub that replaces tool result `src` (src/script.rs `write_stub`):
 * exactly these keys in this order, the copied ones only when present.
 */
function stubMessage(src, text) {
  const id = src.toolCallId;
  const name = src.toolName;
  const ts = src.timestamp;
  if (id !== undefined && name !== undefined && ts !== undefined) {
    // The usual tool result: one literal, one shape for every stub.
    return { role: 'toolResult', toolCallId: id, toolName: name, content: [{ type: 'text', text }], isError: false, timestamp: ts };
  }
  const stub = { role: 'toolResult' };
  if (id !== undefined) stub.toolCallId = id;
  if (name !== undefined) stub.toolName = name;
  stub.content = [{ type: 'text', text }];
  stub.isError = false;
  if (ts !== undefined) stub.timestamp = ts;
  return stub;
}

/** A synthetic chain block (src/script.rs `write_inserted`). */
function syntheticBlock(text, timestamp, hasTimestamp) {
  const block = { role: 'user', content: [{ type: 'text', text }] };
  if (hasTimestamp) block.timestamp = timestamp;
  return block;
}

/** `src` with some tool-call arguments purged and/or its thinking removed. */
function editedMessage(src, strip, purged) {
  let content = src.content;
  if (purged.length > 0) {
    // `purged` is [[block, size], ...] in block order.
    content = content.slice();
    for (const [j, size] of purged) content[j] = { ...content[j], arguments: purgedArguments(size) };
  }
  if (strip) content = content.filter((b) => b.type !== 'thinking');
  return { ...src, content };
}

/** One fresh message for an edit description. */
function build(desc, messages) {
  switch (desc[0]) {
    case OP.STUB:
      return stubMessage(messages[desc[1]], desc[2]);
    case OP.EDIT:
      return editedMessage(messages[desc[1]], desc[2] === 1, desc[3]);
    case OP.INSERT:
      return syntheticBlock(desc[1], desc[2], desc.length > 2);
    default:
      throw new Error(`condense-native: unknown edit opcode ${desc[0]} (binary and JS layer disagree)`);
  }
}

/**
 * The output array: for each slot of `order`, the caller's message (v >= 0)
 * or a fresh one built from edit `-v - 1` of `edits`.
 */
function apply(order, edits, messages) {
  const out = new Array(order.length);
  for (let k = 0; k < order.length; k++) {
    const v = order[k];
    out[k] = v >= 0 ? messages[v] : build(edits.get(-v - 1), messages);
  }
  return out;
}

module.exports = { OP, apply, build, stubMessage, syntheticBlock, editedMessage, purgedArguments };
