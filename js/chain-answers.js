'use strict';

// What the indexer answered about each chain entry (its summary), kept
// between renders by js/conversation.js's `chains()`, and which of those
// answers a render after a flush must ask again. pi-condense's own indexer
// answers a summary from the summaries registered so far, and a new one
// changes only the entries whose dropped ids it names; so besides the
// answers, in `chainEntries()` order, this keeps the positions of the
// entries each dropped id reaches, and of those whose answer any new summary
// may change. A render after a flush that adds a chain then asks the new
// entry, and the kept ones a new summary reaches, and walks nothing else.
// The `{bN}` block ids the answers cite are counted, so the lookups are
// known without reading every answer.

const { BLOCK_REF_RE } = require('./pure/rules.js');

// One answer of the indexer about a chain's summary ({ v }, { throws },
// { none }, { absent: method }: it has no such method), compared by value:
// the same text is the same answer.
function sameAnswer(a, b) {
  return a.v === b.v && a.throws === b.throws && a.none === b.none && a.absent === b.absent;
}

// The `{bN}` block ids a chain summary's text cites, in order, by answer
// (later renders reuse an answer while it stands).
const blockRefs = new WeakMap();
function blockRefsOf(answer) {
  let refs = blockRefs.get(answer);
  if (refs === undefined) {
    refs = [];
    if (typeof answer.v === 'string') for (const match of answer.v.matchAll(BLOCK_REF_RE)) refs.push(`b${match[1]}`);
    blockRefs.set(answer, refs);
  }
  return refs;
}

// How an entry's kept answer can change while the registry of summaries
// grows: never (a range summary), when a new summary names one of its
// dropped ids, whenever a summary is registered (ids that are not a list:
// the indexer is asked with them as they are), or at every render that
// asks anything (not an object: the answer is what reading it throws).
const RANGE = 0;
const IDS = 1;
const LOOSE = 2;
const STRAY = 3;

function kindOf(entry, idsOf) {
  if (entry === null || typeof entry !== 'object') return STRAY;
  try {
    const range = entry.rangeSummaryText;
    if (range !== undefined && range !== null) return RANGE;
    return Array.isArray(idsOf(entry)) ? IDS : LOOSE;
  } catch {
    return STRAY;
  }
}

/**
 * `answer`, kept for `entry`, if it still stands after the summaries naming
 * the ids `touched` were registered (the same registry), or undefined. The
 * rule once: `ChainAnswers.update` finds the kept entries it fails for by
 * their kind and dropped ids, and applies it to an entry moved elsewhere
 * or found by a `{bN}` lookup.
 */
function keptAnswer(entry, answer, touched, idsOf) {
  const kind = kindOf(entry, idsOf);
  if (answer === undefined || kind === STRAY) return undefined;
  if (kind === RANGE || touched.size === 0) return answer;
  return kind === IDS && !idsOf(entry).some((id) => touched.has(id)) ? answer : undefined;
}

// Drops the positions from `from` on of an ascending list.
function dropFrom(list, from) {
  let n = list.length;
  while (n > 0 && list[n - 1] >= from) n--;
  list.length = n;
}

class ChainAnswers {
  /**
   * The answers `summaries` of `entries` (in `chainEntries()` order, as
   * sent to the engine); `idsOf` reads an entry's dropped ids.
   */
  constructor(entries, summaries, idsOf) {
    this.entries = entries;
    this.summaries = summaries;
    this.idsOf = idsOf;
    // Dropped id -> positions of the entries (IDS) listing it, ascending.
    this.byId = new Map();
    // Positions of the LOOSE and of the STRAY entries, ascending.
    this.loose = [];
    this.strays = [];
    // Block id -> how many answers cite it.
    this.refs = new Map();
    // Entry (an object) -> its last position, for a `{bN}` lookup's answer
    // (an entry listed twice may be missing: the lookup then asks).
    this.position = new Map();
    for (let n = 0; n < entries.length; n++) this.index(n);
  }

  // Files entry `n` and counts its answer's block ids.
  index(n) {
    const entry = this.entries[n];
    const kind = kindOf(entry, this.idsOf);
    if (kind !== STRAY) this.position.set(entry, n);
    if (kind === IDS) {
      for (const id of this.idsOf(entry)) {
        const at = this.byId.get(id);
        if (at === undefined) this.byId.set(id, [n]);
        else if (at[at.length - 1] !== n) at.push(n);
      }
    } else if (kind === LOOSE) this.loose.push(n);
    else if (kind === STRAY) this.strays.push(n);
    this.count(this.summaries[n], 1);
  }

  // Takes back what entry `n` filed, as one of the entries from `p` on.
  unindex(n, p) {
    const entry = this.entries[n];
    if (this.position.get(entry) === n) this.position.delete(entry);
    if (kindOf(entry, this.idsOf) === IDS) {
      for (const id of this.idsOf(entry)) {
        const at = this.byId.get(id);
        if (at === undefined) continue;
        dropFrom(at, p);
        if (at.length === 0) this.byId.delete(id);
      }
    }
    this.count(this.summaries[n], -1);
  }

  count(answer, by) {
    for (const blockId of blockRefsOf(answer)) {
      const c = (this.refs.get(blockId) ?? 0) + by;
      if (c === 0) this.refs.delete(blockId);
      else this.refs.set(blockId, c);
    }
  }

  /**
   * Brings the kept answers up to `entries`, whose entries before `p` are
   * the kept ones at their places, after the summaries whose ids are
   * `touched` were registered (the same registry): asks `summaryOf` for
   * the entries from `p` on (reusing the answer of an entry kept elsewhere
   * while no new summary reaches it) and for the kept ones a new summary
   * may change. Returns the first position whose entry or answer differs
   * from what was kept (the entries before it need not be sent again).
   */
  update(entries, p, touched, summaryOf) {
    const summaries = this.summaries;
    let from = p;
    // The kept entries a new summary may change, each asked once.
    const asked = new Set(this.strays.filter((n) => n < p));
    if (touched.size > 0) {
      for (const n of this.loose) if (n < p) asked.add(n);
      for (const id of touched) for (const n of this.byId.get(id) ?? []) if (n < p) asked.add(n);
    }
    for (const n of [...asked].sort((a, b) => a - b)) {
      const answer = summaryOf(entries[n]);
      if (sameAnswer(answer, summaries[n])) continue;
      this.count(summaries[n], -1);
      this.count(answer, 1);
      summaries[n] = answer;
      from = Math.min(from, n);
    }
    // The entries from `p` on: an entry kept at another place keeps its
    // answer while it stands.
    const moved = new Map();
    for (let n = p; n < this.entries.length; n++) {
      const entry = this.entries[n];
      if (entry !== null && typeof entry === 'object') moved.set(entry, summaries[n]);
    }
    for (let n = p; n < this.entries.length; n++) this.unindex(n, p);
    dropFrom(this.loose, p);
    dropFrom(this.strays, p);
    summaries.length = p;
    this.entries = entries;
    for (let n = p; n < entries.length; n++) {
      const entry = entries[n];
      summaries.push(keptAnswer(entry, moved.get(entry), touched, this.idsOf) ?? summaryOf(entry));
      this.index(n);
    }
    return from;
  }

  /**
   * The answer of an entry in the list (a `{bN}` lookup's), or undefined
   * when it is not there (or not known by its object).
   */
  answerOf(entry) {
    const n = this.position.get(entry);
    return n === undefined ? undefined : this.summaries[n];
  }
}

module.exports = { ChainAnswers, keptAnswer, sameAnswer };
