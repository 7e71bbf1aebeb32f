'use strict';

// The JS applier of the edit script: builds the pruned array from the
// caller's own objects. An untouched message is the caller's object itself;
// an edited or inserted one is built afresh at every render (so a later
// handler that edits the result in place never reaches another render's).
// The opcodes are the JavaScript copy of src/script.rs `Op`; the shapes
// (the stub envelope, the purge marker, the synthetic block) are the JS
// oracle's own (js/pure/rules.js, js/pure/purge.js), whose Rust copies are
// in src/script.rs. The edit descriptions are written by
// `write_description` in src/engine.rs.

const { stubMessage, syntheticBlock } = require('./pure/rules.js');
const { purgedArguments } = require('./pure/purge.js');

// src/script.rs `Op`.
const OP = Object.freeze({ KEEP: 0, STUB: 1, EDIT: 2, INSERT: 3 });

/** `src` with some tool-call arguments purged and/or its thinking removed. */
function editedMessage(src, strip, purged) {
  let content = src.content;
  if (purged.length > 0) {
    // `purged` is [[block, size], ...] in block order.
    content = content.slice();
    for (const [j, size] of purged) content[j] = { ...content[j], arguments: purgedArguments(size) };
  }
  // The engine decided the strip (js/pure/rules.js withoutThinking is the
  // oracle's rule); this only carries it out.
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

module.exports = { apply };
