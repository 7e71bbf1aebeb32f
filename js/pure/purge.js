'use strict';

// Phase 2, error purge (SPEC §3 phase 2), which pi-condense 2.4.3 and 2.9.1
// run identically: the arguments of a call whose result failed at least
// `cooldownTurns` assistant turns ago, and whose JSON is at least
// `minArgChars` UTF-16 units long, become a marker that keeps their size.
// It matches bare ids, so in 2.9 one failed occurrence also purges a later
// call that reuses the id. Rust counterpart: src/phases/purge.rs.

const { messageError, stringifyPart } = require('./errors.js');

// The marker that replaces purged arguments; `length` is that of their JSON.
// Rust counterpart: src/script.rs (purge_marker); js/applier.js builds the
// engine's purges with this function too.
function purgedArguments(length) {
  return { _purged: `<purged-errored-args size="${length}"/>` };
}

// quirk 13 / 10: no defaults; `x < undefined` and `x < null` never hold, so a
// missing limit never keeps anything, and string limits are converted.
function errorPurge(messages, config, stats) {
  const erroredAt = new Map();
  let turn = 0;
  for (const msg of messages) {
    if (msg.role === 'assistant') turn++;
    // Strictly the boolean: a truthy isError is no error here.
    else if (msg.role === 'toolResult' && msg.isError === true) erroredAt.set(msg.toolCallId, turn);
  }
  if (erroredAt.size === 0) return messages;
  const current = turn;

  let out = null;
  messages.forEach((msg, index) => {
    if (msg.role !== 'assistant') return;
    const content = msg.content;
    // quirk 14 / 10: once any error exists, every assistant's content is
    // mapped, so it must be an array without null blocks.
    if (!Array.isArray(content)) messageError(index, 'content', 'an array (assistant content)', content);
    let edited = null;
    content.forEach((block, j) => {
      if (block === null || block === undefined) messageError(index, `content[${j}]`, 'a content block', block);
      if (block.type !== 'toolCall') return;
      const at = erroredAt.get(block.id);
      if (at === undefined || current - at < config.cooldownTurns) return;
      const body = stringifyPart(block.arguments, index, `content[${j}].arguments`);
      if (body === undefined) messageError(index, `content[${j}].arguments`, 'a JSON value', block.arguments);
      if (body.length < config.minArgChars) return;
      edited ??= content.slice();
      // Spread keeps `arguments` in its place among the block's keys.
      edited[j] = { ...block, arguments: purgedArguments(body.length) };
      stats.purgedArgs++;
    });
    if (edited) {
      out ??= messages.slice();
      out[index] = { ...msg, content: edited };
    }
  });
  return out ?? messages;
}

module.exports = { errorPurge, purgedArguments };
