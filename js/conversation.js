'use strict';

// The JavaScript half of the kept engine (src/engine.rs): one Conversation
// per conversation a host renders again and again (a PruneSession, or a
// pi-condense drop-in's indexer). Each render it finds the first message
// that no longer matches what the engine keeps, re-sends only the messages
// from there (one JSON.stringify of that slice), asks the host's indexer
// only about the tool results present and sends only the answers that
// changed, then applies the engine's edit script to the caller's objects.
//
// What a render compares is js/fingerprint.js (the change-detection
// contract of the README). An in-place edit that changes none of it (a tool
// call's arguments rewritten to the same keys, say) is not seen;
// `invalidate()` or the `verify` option make the next render exact anyway.

const codes = require('./codes.js');
const { apply } = require('./applier.js');
const { serializationError } = require('./pure/errors.js');
const { ChainAnswers, keptAnswer, sameAnswer } = require('./chain-answers.js');
const { Fingerprints } = require('./fingerprint.js');
const { projectRecord, stateJson } = require('./state-text.js');
const { wireBytes } = require('./wire.js');

function codedError(code, message, props) {
  const err = code === codes.INVALID_ARGUMENT ? new TypeError(message) : new Error(message);
  err.code = code;
  if (props) Object.assign(err, props);
  return err;
}

// Runs of more messages than this are sent in slices of this many, each
// read natively on another thread while the next one is serialized.
const SLICE = 256;

// JSON text of messages[from..to], or the oracle's typed error naming the
// message JSON.stringify cannot serialize (a cycle, a BigInt, a throwing
// toJSON, nesting deeper than the engine's stack).
function sliceJson(messages, from, to = messages.length) {
  const slice = from === 0 && to === messages.length ? messages : messages.slice(from, to);
  try {
    return JSON.stringify(slice);
  } catch (cause) {
    for (let i = from; i < to; i++) {
      try {
        JSON.stringify(messages[i]);
      } catch (inner) {
        throw serializationError(inner, i);
      }
    }
    throw serializationError(cause, undefined, 'messages');
  }
}

// Whether two `{bN}` lookups (blockId -> { answer, found }) answer alike.
function sameLookups(a, b) {
  if (a.size !== b.size) return false;
  for (const [id, l] of b) {
    const was = a.get(id);
    if (was === undefined || !sameAnswer(was.answer, l.answer)) return false;
  }
  return true;
}

// pi-condense's own ToolCallIndexer (2.4.x and 2.9.x) answers
// getPerBatchSummaryTextForToolCallIds from its registry of summaries alone,
// the array field `summaryBodies`, which it only appends to (a flush) or
// replaces (a session rebuilt) and whose entries it never changes: the same
// array at the same length gives every chain the same answer. Whether
// `indexer` is that class: named so, its two summary methods its
// prototype's, not its own, and reading that field (their source says so, so
// a release that computes summaries another way is asked as any indexer).
// Asked once per conversation; nothing of another object but its prototype is
// read.
function keepsSummaryRegistry(indexer) {
  const proto = Object.getPrototypeOf(indexer);
  if (proto === null || !Object.hasOwn(proto, 'constructor') || proto.constructor.name !== 'ToolCallIndexer') return false;
  const reads = { getPerBatchSummaryTextForToolCallIds: 'this.getPerBatchSummariesForToolCallIds(', getPerBatchSummariesForToolCallIds: 'this.summaryBodies' };
  for (const [name, read] of Object.entries(reads)) {
    if (!Object.hasOwn(proto, name) || Object.hasOwn(indexer, name) || typeof proto[name] !== 'function') return false;
    if (!Function.prototype.toString.call(proto[name]).includes(read)) return false;
  }
  return true;
}

// The registry of an indexer `keepsSummaryRegistry` accepted, or null.
function summaryRegistryOf(indexer) {
  const own = Object.getOwnPropertyDescriptor(indexer, 'summaryBodies');
  return own !== undefined && Array.isArray(own.value) ? own.value : null;
}

// The ids the summaries registry[from..] name (their `toolCallIds`), or
// null when one of them is not of the shape SPEC.md §2.2 gives
// (`{toolCallIds: [...], text}`): then every chain is asked again.
function registeredIds(registry, from) {
  const ids = new Set();
  for (let k = from; k < registry.length; k++) {
    const body = registry[k];
    const named = body !== null && typeof body === 'object' ? body.toolCallIds : undefined;
    if (!Array.isArray(named)) return null;
    for (const id of named) ids.add(id);
  }
  return ids;
}

class Conversation {
  /**
   * @param native the loaded binding
   * @param dialect '2.4.3' | '2.9.1'
   * @param once true for a conversation rendered once (a stateless call):
   *   nothing is fingerprinted, as nothing will be compared
   */
  constructor(native, dialect, once = false) {
    this.dialect = dialect;
    this.once = once;
    this.engine = new native.NativeEngine(dialect);
    this.prints = new Fingerprints();
    this.texts = null; // JSON texts per message, in verify mode
    this.edits = new Map();
    this.configText = undefined;
    this.absentText = '{}';
    this.boundary = null;
    // The kept tool results the indexer is asked about: their positions,
    // lookup keys and ids (strings kept from the render that sent them, so
    // their hashes are computed once), and what the indexer said last.
    this.asked = { at: [], key: [], id: [] };
    this.answered = [];
    this.chainsSeen = null;
    // Whether the indexer is pi-condense's own (keepsSummaryRegistry), asked
    // at the first chains().
    this.ownIndexer = undefined;
    this.answersChanged = false;
    // Where the run of slices still being read natively starts (null: none).
    this.pendingFrom = null;
    this.resend = false;
  }

  /** Frees what is kept, natively too; the conversation can start over. */
  close() {
    this.engine.close();
    this.configText = undefined;
    this.absentText = '{}';
    this.boundary = null;
    this.resend = false;
    this.prints = new Fingerprints();
    this.texts = null;
    this.edits = new Map();
    this.asked = { at: [], key: [], id: [] };
    this.answered = [];
    this.chainsSeen = null;
    this.pendingFrom = null;
  }

  /** Forget what was kept: the next render re-reads every message. */
  invalidate() {
    // Until then the engine keeps its log (a flush still reads it), so the
    // next sync re-sends even when the fingerprints (none) and the messages
    // (none) agree.
    this.resend = true;
    this.prints = new Fingerprints();
    this.asked = { at: [], key: [], id: [] };
    this.answered = [];
    this.chainsSeen = null;
    if (this.texts) this.texts = [];
  }

  setConfig(config) {
    let text;
    try {
      text = JSON.stringify(config ?? null);
    } catch (cause) {
      throw codedError(codes.INVALID_ARGUMENT, `config cannot be serialized as JSON: ${cause.message}`, { cause });
    }
    if (text !== this.configText) {
      this.engine.setConfig(text);
      this.configText = text;
    }
  }

  /**
   * The host indexer's methods that are not functions (`absentMethods` of
   * js/pure/rules.js, null: none): the engine raises where the release
   * would call one.
   */
  setAbsent(absent) {
    const text = absent === null ? '{}' : JSON.stringify(absent);
    if (text !== this.absentText) {
      this.engine.setAbsentMethods(text);
      this.absentText = text;
    }
  }

  setBoundary(boundary) {
    const b = boundary ?? null;
    if (!Object.is(b, this.boundary)) {
      this.engine.setBoundary(b);
      this.boundary = b;
    }
  }

  setState(state) {
    let text;
    try {
      text = stateJson(state);
    } catch (cause) {
      throw codedError(codes.INVALID_ARGUMENT, `state cannot be serialized as JSON: ${cause.message}`, { cause });
    }
    this.engine.setState(text);
  }

  /** Brings the kept messages in line with `messages`. */
  sync(messages, verify) {
    const prints = this.prints;
    let from = 0;
    const common = Math.min(prints.length, messages.length);
    while (from < common && prints.matches(from, messages[from])) from++;
    if (verify) from = this.verifyFrom(messages, from);
    // For pi's gate (pi/gate.js): below this index the messages are the
    // ones the previous render read.
    this.lastFrom = from;
    if (from === prints.length && from === messages.length && !this.resend) return;
    if (messages.length - from <= SLICE) {
      const text = sliceJson(messages, from);
      this.settled(() => this.engine.sync(from, text));
    } else {
      // An earlier run still being read is taken first.
      if (this.pendingFrom !== null) this.settled(() => this.engine.length);
      // Each slice is read on another thread while the next one is
      // serialized; the engine takes them at its next render.
      this.pendingFrom = from;
      try {
        for (let a = from; a < messages.length; a += SLICE) {
          const b = Math.min(a + SLICE, messages.length);
          const wire = this.engine.syncLaterWire ? wireBytes(messages, a, b) : null;
          if (wire === null || !this.engine.syncLaterWire(a, wire)) this.engine.syncLater(a, sliceJson(messages, a, b));
        }
      } catch (err) {
        this.forgetFrom(from);
        throw err;
      }
    }
    this.resend = false;
    if (!this.once) {
      prints.truncate(from);
      for (let i = from; i < messages.length; i++) prints.push(messages[i]);
    }
    this.keepAsked(messages, from);
  }

  // Messages from `from` on are unknown: the next sync re-sends them (after
  // a sync that failed part way, natively or here).
  forgetFrom(from) {
    this.prints.truncate(from);
    const { at, key, id } = this.asked;
    let n = at.length;
    while (n > 0 && at[n - 1] >= from) n--;
    at.length = key.length = id.length = this.answered.length = n;
    if (this.texts) this.texts.length = Math.min(this.texts.length, from);
  }

  /**
   * For a render answered without syncing (nothing could change): forgets
   * the kept messages from the first one `messages` no longer matches, so
   * the next sync compares with these messages rather than older ones.
   */
  forgetChanged(messages) {
    const prints = this.prints;
    const common = Math.min(prints.length, messages.length);
    let i = 0;
    while (i < common && prints.matches(i, messages[i])) i++;
    if (i < prints.length) this.forgetFrom(i);
  }

  // Runs an engine call that takes slices still being read (render,
  // flush): if one of them failed, the engine dropped the whole run, and so
  // does this side.
  settled(call) {
    const from = this.pendingFrom;
    if (from === null) return call();
    try {
      return call();
    } catch (err) {
      this.forgetFrom(from);
      throw err;
    } finally {
      this.pendingFrom = null;
    }
  }

  // The tool results among messages[from..] the indexer is to be asked
  // about, with the key the dialect's render path looks each one up by.
  keepAsked(messages, from) {
    const { at, key, id } = this.asked;
    let n = at.length;
    while (n > 0 && at[n - 1] >= from) n--;
    at.length = key.length = id.length = this.answered.length = n;
    const v29 = this.dialect === '2.9.1';
    for (let i = from; i < messages.length; i++) {
      const m = messages[i];
      if (m === null || typeof m !== 'object' || m.role !== 'toolResult') continue;
      const toolCallId = m.toolCallId;
      const k = v29 && typeof m.timestamp === 'number' ? `${toolCallId}@${m.timestamp}` : toolCallId;
      if (typeof k !== 'string') continue;
      at.push(i);
      key.push(k);
      id.push(toolCallId);
    }
  }

  // Verify mode: the first message whose JSON text differs from the kept one.
  verifyFrom(messages, from) {
    const texts = (this.texts ??= []);
    let first = from;
    for (let i = 0; i < messages.length; i++) {
      const t = JSON.stringify(messages[i]);
      if (i < from && t !== texts[i]) first = Math.min(first, i);
      texts[i] = t;
    }
    texts.length = messages.length;
    return first;
  }

  /**
   * Asks `indexer` about every tool result kept, as the dialect's render
   * path does, and sends the engine the answers that changed. A method in
   * `absent` (setAbsent's) is not asked: the engine raises where the
   * release would call it, so what it would have said does not matter.
   */
  answer(indexer, absent = null) {
    const has = (name) => absent === null || !Object.hasOwn(absent, name);
    this.answersChanged = false;
    if (!has('isSummarized')) return;
    const askLegacy = has('hasLegacyBareRecord');
    const askRecord = has('getRecord');
    const askRef = has('getShortRefForToolCallId');
    const changes = [];
    const updates = [];
    let changedSummarized = false;
    const answered = this.answered;
    const { key: keys, id: ids } = this.asked;
    const v29 = this.dialect === '2.9.1';
    for (let n = 0; n < keys.length; n++) {
      const key = keys[n];
      const summarized = Boolean(indexer.isSummarized(key));
      let lookup = summarized ? key : undefined;
      let legacy;
      const id = ids[n];
      if (!summarized && v29 && typeof id === 'string') {
        legacy = askLegacy && Boolean(indexer.hasLegacyBareRecord(id));
        if (legacy) lookup = id;
      }
      let record;
      let ref;
      if (lookup !== undefined) {
        if (askRecord) record = indexer.getRecord(lookup);
        if (askRef) ref = indexer.getShortRefForToolCallId(lookup);
      }
      const a = answered[n];
      if (
        a !== undefined &&
        a.summarized === summarized &&
        a.legacy === legacy &&
        a.record === record &&
        Object.is(a.ref, ref)
      ) {
        continue;
      }
      if (lookup !== key) changes.push({ k: key, s: summarized });
      if (legacy !== undefined) changes.push({ l: id, v: legacy });
      if (lookup !== undefined) {
        const entry = { k: lookup, s: true, r: record === undefined ? null : projectRecord(record) };
        if (ref !== undefined) entry.f = ref;
        changes.push(entry);
      }
      // A result seen before whose answer changed, or a new one already
      // summarized: summaries may have changed with it (chains()).
      if (a !== undefined || summarized || legacy) changedSummarized = true;
      updates.push(n, { summarized, legacy, record, ref });
    }
    if (changes.length > 0) this.engine.setAnswers(JSON.stringify(changes));
    for (let u = 0; u < updates.length; u += 2) answered[updates[u]] = updates[u + 1];
    this.answersChanged = changedSummarized;
  }

  /**
   * Sends the indexer's chain entries when they or what the indexer answers
   * about them changed. Each render asks `getChainEntries()`; what else is
   * asked depends on the indexer:
   * - pi-condense's own (`keepsSummaryRegistry`): besides the entries, its
   *   registry of summaries is the only input (SPEC.md §2.2
   *   `perBatchSummaryText`, `blockLookup`), and a summary's text joins an
   *   entry's answer only when their ids meet. While the registry is the
   *   same array, an entry (or `{bN}` lookup) already answered is asked
   *   again only when a summary registered since names one of its dropped
   *   ids (`registeredIds`); the same entries and the same length: nothing
   *   is asked. The kept answers (js/chain-answers.js) are brought up to
   *   date from the first entry that is not the one kept at its place and
   *   at the kept entries a new summary reaches, so a flush costs what it
   *   added, not a walk of every chain.
   * - any other indexer, through the documented methods only: when the
   *   entries are the same objects and no tool result's answer changed this
   *   render (`answer`: a flush registers records and summaries together),
   *   `getPerBatchSummaryTextForToolCallIds` of the union of the dropped ids
   *   of all entries without a range summary (the probe) is the same text:
   *   nothing more is asked. Otherwise every entry's summary and every
   *   `{bN}` lookup (`findChainEntryByBlockId`) is asked again.
   * The chains are sent when the entries or any answer differ, from the
   * first entry that does.
   */
  chains(indexer, absent = null) {
    // Without getChainEntries the engine raises at phase 3 (the release's
    // first call of it); with any other method absent, nothing kept is
    // reused, and what it would answer is `{ absent }`.
    if (absent !== null && Object.hasOwn(absent, 'getChainEntries')) return;
    const noSummaries = absent !== null && Object.hasOwn(absent, 'getPerBatchSummaryTextForToolCallIds');
    const noLookups = absent !== null && Object.hasOwn(absent, 'findChainEntryByBlockId');
    const entries = indexer.getChainEntries();
    if (!Array.isArray(entries)) {
      throw codedError(codes.INVALID_ARGUMENT, 'indexer.getChainEntries() must return an array');
    }
    const v29 = this.dialect === '2.9.1';
    const idsOf = (entry) => (v29 ? entry.droppedOccurrenceKeys ?? entry.droppedToolCallIds : entry.droppedToolCallIds);
    const seen = this.chainsSeen;
    // The first entry that is not the one kept at its place.
    let p = 0;
    if (seen !== null) {
      const kept = seen.answers.entries;
      const common = Math.min(kept.length, entries.length);
      while (p < common && entries[p] === kept[p]) p++;
    }
    const sameEntries = seen !== null && p === entries.length && p === seen.answers.entries.length;
    this.ownIndexer ??= keepsSummaryRegistry(indexer);
    const registry = this.ownIndexer && absent === null ? summaryRegistryOf(indexer) : null;
    let probe = null;
    // The ids named by the summaries registered since the last render
    // (pi-condense's own indexer, the same registry); null: ask everything.
    let touched = null;
    if (registry !== null) {
      if (seen !== null && seen.registry === registry) {
        if (sameEntries && seen.registered === registry.length) return;
        touched = registeredIds(registry, seen.registered);
      }
    } else {
      const union = [];
      for (const entry of entries) {
        if (entry === null || typeof entry !== 'object') continue;
        if (entry.rangeSummaryText !== undefined && entry.rangeSummaryText !== null) continue;
        const ids = idsOf(entry);
        if (Array.isArray(ids)) for (const id of ids) union.push(id);
      }
      if (noSummaries) {
        probe = { absent: 'getPerBatchSummaryTextForToolCallIds' };
      } else {
        try {
          probe = { v: union.length === 0 ? '' : indexer.getPerBatchSummaryTextForToolCallIds(union) };
        } catch {
          probe = { throws: true };
        }
      }
      if (sameEntries && !this.answersChanged && absent === null && !seen.partial && seen.probe !== null && sameAnswer(seen.probe, probe)) return;
    }
    const summaryOf = (entry) => {
      try {
        const range = entry.rangeSummaryText;
        if (range !== undefined && range !== null) return { v: range };
        if (noSummaries) return { absent: 'getPerBatchSummaryTextForToolCallIds' };
        return { v: indexer.getPerBatchSummaryTextForToolCallIds(idsOf(entry)) };
      } catch {
        return { throws: true };
      }
    };
    try {
      // The answers, and the first entry the engine does not keep as it is
      // (by object, or by its answer): those before it go unsent. With the
      // same registry only what a new summary or entry reaches is asked;
      // kept answers are brought up to date in place.
      let answers;
      let from = 0;
      if (touched !== null) {
        answers = seen.answers;
        from = answers.update(entries.slice(), p, touched, summaryOf);
      } else {
        answers = new ChainAnswers(entries.slice(), entries.map(summaryOf), idsOf);
        if (seen !== null) {
          const kept = seen.answers;
          const common = Math.min(kept.entries.length, entries.length);
          while (from < common && entries[from] === kept.entries[from] && sameAnswer(answers.summaries[from], kept.summaries[from])) from++;
        }
      }
      // The `{bN}` lookups of the block ids the answers cite: blockId ->
      // { answer, found }.
      const lookups = new Map();
      const before = touched === null ? null : seen.lookups;
      for (const blockId of answers.refs.keys()) {
        const was = before === null ? undefined : before.get(blockId);
        if (noLookups) {
          lookups.set(blockId, { answer: { absent: 'findChainEntryByBlockId' } });
          continue;
        }
        let found;
        if (sameEntries && was !== undefined && was.found !== undefined) {
          found = was.found; // the same entries: the lookup finds what it found
        } else {
          try {
            found = indexer.findChainEntryByBlockId(blockId);
          } catch {
            lookups.set(blockId, { answer: { throws: true } });
            continue;
          }
          if (!found) {
            lookups.set(blockId, { answer: { none: true } });
            continue;
          }
        }
        // An entry of the list answers as it was answered above.
        const listed = registry === null ? undefined : answers.answerOf(found);
        const kept = listed === undefined && was !== undefined && was.found === found && touched !== null ? keptAnswer(found, was.answer, touched, idsOf) : undefined;
        lookups.set(blockId, { answer: listed ?? kept ?? summaryOf(found), found });
      }
      const registered = registry === null ? 0 : registry.length;
      const partial = absent !== null;
      if (sameEntries && from === entries.length && sameLookups(seen.lookups, lookups)) {
        Object.assign(seen, { answers, lookups, probe, registry, registered, partial });
        return;
      }
      const sent = { entries: answers.entries, summaries: answers.summaries, lookups: [...lookups].map(([id, l]) => [id, l.answer]) };
      let text;
      try {
        text = JSON.stringify(from === 0 ? sent : { from, ...sent, entries: sent.entries.slice(from), summaries: sent.summaries.slice(from) });
      } catch (cause) {
        throw codedError(codes.INVALID_STATE, `chain entries cannot be serialized as JSON: ${cause.message}`, { cause });
      }
      this.engine.setChains(text);
      // `partial`: answered without some methods, so the next render with
      // them asks everything again.
      this.chainsSeen = { answers, lookups, probe, registry, registered, partial };
    } catch (err) {
      // Kept answers may have been brought up to date for chains the
      // engine did not take: the next render asks everything again.
      this.chainsSeen = null;
      throw err;
    }
  }

  /** Renders the kept messages and applies the script to `messages`. */
  render(messages) {
    const r = this.settled(() => this.engine.render());
    const edits = this.edits;
    if (r.evicted) for (const id of r.evicted) edits.delete(id);
    const base = {
      frontier: r.frontier,
      stats: r.stats,
      diagnostics: r.diagnostics ? JSON.parse(r.diagnostics) : [],
    };
    // For pi's gate: the render slot by slot (null: the input as it is).
    this.lastOrder = r.pruned ? r.order : null;
    if (!r.pruned) return { messages, pruned: false, beforeChars: 0, afterChars: 0, ...base };
    if (r.fresh.length > 0) {
      const fresh = JSON.parse(r.freshEdits);
      for (let j = 0; j < r.fresh.length; j++) edits.set(r.fresh[j], fresh[j]);
    }
    return {
      messages: apply(r.order, edits, messages),
      pruned: true,
      beforeChars: r.beforeChars,
      afterChars: r.afterChars,
      ...base,
    };
  }
}

module.exports = { Conversation };
