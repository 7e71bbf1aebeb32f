// Types of condense-native's public API (index.js; index.mjs re-exports it).

/** A pi message; unknown roles and fields pass through untouched. */
export type Message = UserMessage | AssistantMessage | ToolResultMessage | CustomMessage | { role: string; [key: string]: unknown };

export interface TextBlock {
  type: 'text';
  text: string;
  [key: string]: unknown;
}

export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  thinkingSignature?: string;
  redacted?: boolean;
  [key: string]: unknown;
}

export interface ToolCallBlock {
  type: 'toolCall';
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  [key: string]: unknown;
}

export interface ImageBlock {
  type: 'image';
  [key: string]: unknown;
}

export interface UserMessage {
  role: 'user';
  content: string | Array<TextBlock | ImageBlock | { type: string; [key: string]: unknown }>;
  timestamp: number;
  [key: string]: unknown;
}

export interface AssistantMessage {
  role: 'assistant';
  content: Array<TextBlock | ThinkingBlock | ToolCallBlock>;
  timestamp: number;
  api?: string;
  provider?: string;
  model?: string;
  usage?: Record<string, unknown>;
  stopReason?: string;
  [key: string]: unknown;
}

export interface ToolResultMessage {
  role: 'toolResult';
  toolCallId: string;
  toolName: string;
  content: Array<TextBlock | ImageBlock>;
  details?: unknown;
  isError: boolean;
  timestamp: number;
  [key: string]: unknown;
}

/** The per-batch summary pi-condense injects. */
export interface CustomMessage {
  role: 'custom';
  customType: string;
  content: unknown;
  display?: boolean;
  details?: { toolCallRefs?: Array<{ toolCallId: string; shortId: string }>; [key: string]: unknown };
  timestamp: number;
  [key: string]: unknown;
}

/** Which pi-condense release a call reproduces (default '2.4.3'). */
export type Dialect = '2.4.3' | '2.9.1';

/** What pi-condense's indexer knows about one summarized tool call. */
export interface ToolCallRecord {
  /** 2.9.1 records carry their id and their result's timestamp. */
  toolCallId?: string;
  resultTimestamp?: number;
  toolName: string;
  args: Record<string, unknown>;
  spillPath?: string;
  spillBytes?: number;
  resultPreview?: string;
  [key: string]: unknown;
}

/** One compressed chain of the registry. */
export interface ChainEntry {
  blockId: string;
  startUserTimestamp: number;
  droppedToolCallIds: string[];
  /** 2.9.1: the occurrence keys whose per-batch summaries make the body. */
  droppedOccurrenceKeys?: string[];
  protectedToolCallIds?: string[];
  finalAssistantTimestamp: number | null;
  toolRefs: string[];
  compressedAt: number;
  rangeSummaryText?: string;
  [key: string]: unknown;
}

export interface SummaryBody {
  toolCallIds: string[];
  text: string;
}

/**
 * The pruning state (SPEC 2.2; SPEC-2.9 2.3, where keys are occurrence keys
 * `id@resultTimestamp` or, for legacy records, bare ids). It changes only at
 * flushes. Every table is optional.
 */
export interface PruneState {
  records?: Record<string, ToolCallRecord>;
  dedupAliases?: Record<string, string>;
  shortRefs?: Record<string, string>;
  refAliases?: Record<string, string>;
  chains?: ChainEntry[];
  summaryBodies?: SummaryBody[];
}

export interface ChainCompressionConfig {
  enabled: boolean;
  stripFinalAssistantThinking?: boolean;
  [key: string]: unknown;
}

export interface ErrorPurgeConfig {
  enabled: boolean;
  /** Default 2. */
  cooldownTurns?: number;
  /** Default 500. */
  minArgChars?: number;
}

/** 2.4.3 only. */
export interface ThinkingStripConfig {
  enabled: boolean;
  /** Default 16. */
  keepLastTurns?: number;
}

export interface ProtectionConfig {
  protectedTools?: string[];
  /** Globs: `**` `*` `?`, anchored at both ends, `\` read as `/`. */
  protectedPaths?: string[];
}

/**
 * The pruner's config (SPEC 2.3); an absent phase is disabled. A key the
 * dialect does not know (`thinkingStrip` under 2.9.1) is an
 * ERR_CONDENSE_INVALID_CONFIG error.
 */
export interface PruneConfig {
  chainCompression?: ChainCompressionConfig | null;
  errorPurge?: ErrorPurgeConfig | null;
  thinkingStrip?: ThinkingStripConfig | null;
  protection?: ProtectionConfig | null;
  /** 0 disables; pi-condense's default is 3. */
  recoveryGraceTurns?: number;
}

/** Where 2.9.1 reports what it could not do (SPEC-2.9 4.1). */
export interface DiagnosticsSink {
  report(kind: string, key: string | unknown, detail: string): void;
}

/** One 2.9.1 report. */
export interface Diagnostic {
  kind: 'unresolved-range' | 'range-id-mismatch' | 'orphan-sweep' | (string & {});
  /** A string, except that a blockId is passed on as it is. */
  key?: unknown;
  detail: string;
}

export interface PruneOptions {
  state?: PruneState | null;
  config?: PruneConfig | null;
  /** The persisted frontier (SPEC 6; 2.4.3). */
  thinkingStripBoundaryTimestamp?: number | null;
  dialect?: Dialect;
  /** Receives each 2.9.1 report, in order, after the render. */
  diagnostics?: DiagnosticsSink | null;
}

export interface PrunerPruneOptions {
  thinkingStripBoundaryTimestamp?: number | null;
  diagnostics?: DiagnosticsSink | null;
}

export interface Frontier {
  /** The boundary this prune used. */
  thinkingStripBoundaryTimestamp: number | null;
  /** What a flush after these messages would persist; null while thinking strip is off. */
  nextThinkingStripBoundaryTimestamp: number | null;
}

export interface PruneStats {
  stubbed: number;
  purgedArgs: number;
  chainDropped: number;
  chainInserted: number;
  finalThinkingStripped: number;
  /** 2.4.3. */
  thinkingStripped?: number;
  /** 2.9.1. */
  orphansSwept?: number;
}

export interface PruneResult {
  /** Some phase changed something. */
  pruned: boolean;
  /** `JSON.stringify(input).length` when pruned, 0 otherwise. */
  beforeChars: number;
  /** `JSON.stringify(output).length` when pruned, 0 otherwise. */
  afterChars: number;
  /** The pruned array's JSON text in a new Buffer; null when nothing changed. */
  messages: Buffer | null;
  frontier: Frontier;
  stats: PruneStats;
  /** 2.9.1's reports, in order (also delivered to `diagnostics`). */
  diagnostics: Diagnostic[];
}

/** What `pruneMessages` and `PruneSession.render` return: a JS array. */
export interface ArrayPruneResult {
  /**
   * The pruned array. On a no-op it is the caller's own array; otherwise a
   * new array in which untouched messages are the caller's own objects.
   */
  messages: Message[];
  pruned: boolean;
  beforeChars: number;
  afterChars: number;
  frontier: Frontier;
  stats: PruneStats;
  diagnostics: Diagnostic[];
}

export interface PruneSessionOptions {
  config?: PruneConfig | null;
  state?: PruneState | null;
  thinkingStripBoundaryTimestamp?: number | null;
  dialect?: Dialect;
  /**
   * Compare every message's JSON text at each render as well as its
   * fingerprint (README, "What a kept render sees"): exact under any
   * in-place edit, at the cost of one JSON.stringify per message per render.
   */
  verify?: boolean;
  diagnostics?: DiagnosticsSink | null;
}

/** The frontier snapshot a flush persists. */
export interface FrontierSnapshot {
  thinkingStripBoundaryTimestamp: number | null;
}

/** The look-ups of pi-condense 2.4.3's tool-call indexer its render path makes. */
export interface CondenseIndexer {
  isSummarized(toolCallId: string): boolean;
  getRecord(toolCallId: string): ToolCallRecord | undefined | null;
  getShortRefForToolCallId(toolCallId: string): string | undefined;
  getChainEntries(): ChainEntry[];
  getPerBatchSummaryTextForToolCallIds(toolCallIds: string[]): string;
  /** Asked only for `{bN}` references in chain summaries. */
  findChainEntryByBlockId?(blockId: string): ChainEntry | undefined;
}

/** What pi-condense's `pruneMessages` returns. */
export interface CompatPruneResult {
  messages: Message[];
  pruned: boolean;
  beforeChars: number;
  afterChars: number;
}

/** Error codes carried by `error.code` (js/codes.js). */
export type CondenseErrorCode =
  | 'ERR_CONDENSE_INVALID_ARGUMENT'
  | 'ERR_CONDENSE_INVALID_JSON'
  | 'ERR_CONDENSE_NOT_ARRAY'
  | 'ERR_CONDENSE_INVALID_MESSAGE'
  | 'ERR_CONDENSE_INVALID_STATE'
  | 'ERR_CONDENSE_INVALID_CONFIG'
  | 'ERR_CONDENSE_INVALID_SESSION'
  | 'ERR_CONDENSE_TOO_DEEP'
  | 'ERR_CONDENSE_SESSION_CLOSED'
  | 'ERR_CONDENSE_IO'
  | 'ERR_CONDENSE_UNSUPPORTED';

/** The errors the API throws: a code, and where the problem is. */
export interface CondenseError extends Error {
  code: CondenseErrorCode;
  /** The message the problem is in (index into the input array). */
  messageIndex?: number;
  /** The field inside it (`content[2].arguments`). */
  field?: string;
  /** The 1-based line of a session file. */
  line?: number;
}

/**
 * Prunes a JSON array of pi messages held in a Buffer (never modified).
 * Cost per call, all on the calling thread: one pass over the bytes
 * (JSON.stringify's spelling is read in place), one write of the output,
 * and JSON.stringify plus native conversion of `state` and `config` (no
 * cache). Keeps nothing. Render after render, hold a `Pruner`.
 */
export declare function prune(messages: Uint8Array, options?: PruneOptions | null): PruneResult;

/**
 * Prunes a JS array of pi messages. Cost per call: the messages are sent
 * once; over 256 they go in slices of 256 (`v8.serialize` bytes in Node,
 * JSON.stringify text in Bun or for values that are not plain objects and
 * arrays), read on one background thread while JS serializes the next; up
 * to 256 go as JSON.stringify text, read on the calling thread. The state
 * is not serialized: it is asked about each tool result present. Only
 * edited messages are new objects; a no-op is a walk with no serialization.
 * Keeps one emptied engine per dialect, nothing of the call: for renders of
 * a growing conversation, a `PruneSession` or a drop-in sends what changed.
 */
export declare function pruneMessages(messages: Message[], options?: PruneOptions | null): ArrayPruneResult;

/**
 * pi-condense 2.4.3's `pruneMessages` (also `condense-native/pi-condense-2.4`):
 * same arguments, same result. Keeps a native conversation per indexer
 * object (a WeakMap). A call walks every message's fingerprint, sends the
 * messages from the first changed one (as `pruneMessages` sends them), asks
 * the indexer about each kept tool result and sends only changed answers.
 */
export declare function pruneMessagesCompat(
  messages: Message[],
  indexer: CondenseIndexer,
  chainCompression?: ChainCompressionConfig | null,
  errorPurge?: ErrorPurgeConfig | null,
  thinkingStrip?: ThinkingStripConfig | null,
  protection?: ProtectionConfig | null,
  recoveryGraceTurns?: number,
  thinkingBoundaryTimestamp?: number | null,
): CompatPruneResult;

/**
 * The 2.4.3 state `prune`, `Pruner` and `PruneSession` take, read from a
 * pi-condense indexer for these messages (it is asked only about tool-call
 * ids that occur in them). Cost: one indexer call per tool result, three
 * per summarized one, one per chain without `rangeSummaryText`; copies no
 * message, keeps nothing. Call it at flushes, not per render.
 */
export declare function stateFromIndexer(messages: Message[], indexer: CondenseIndexer): PruneState;

/**
 * One conversation rendered again and again. Keeps its messages natively
 * (about the size of their JSON) and their fingerprints (js/fingerprint.js);
 * the state is serialized at `setState` only (and by the constructor).
 * The hot path for a host that holds the state object.
 */
export declare class PruneSession {
  constructor(options?: PruneSessionOptions);
  /** New state (at flushes): one JSON.stringify and native conversion. */
  setState(state: PruneState | null | undefined): this;
  /**
   * Cost: a fingerprint walk over every message, then the messages from the
   * first changed one sent as `pruneMessages` sends them (with `verify`, one
   * JSON.stringify per message too). A render that cannot change anything
   * is answered by a walk, sending nothing.
   */
  render(messages: Message[]): ArrayPruneResult;
  /** Forgets what was kept: the next render sends every message again. */
  invalidate(): this;
  /**
   * Advances the 2.4.3 thinking boundary over the last render's messages
   * plus the optional closing message (one JSON.stringify); returns the
   * snapshot to persist. Sends first what a no-op render left unsent.
   */
  flush(closingMessage?: Message): FrontierSnapshot;
  /**
   * Frees the kept conversation now instead of when the object is collected
   * (the engine finalizes native objects only after the event loop turns).
   * Later calls throw `ERR_CONDENSE_SESSION_CLOSED`; closing twice is a no-op.
   * Also available as `[Symbol.dispose]` where the runtime defines it.
   */
  close(): void;
}

/**
 * Keeps the converted config and state natively between `prune` calls on
 * Buffers: the hot path for a host that holds its messages as JSON bytes.
 */
export declare class Pruner {
  constructor(config?: PruneConfig | null, options?: { dialect?: Dialect } | null);
  /** One JSON.stringify and native conversion, kept until the next call. */
  setConfig(config: PruneConfig | null | undefined): this;
  /** One JSON.stringify and native conversion (at flushes), kept. */
  setState(state: PruneState | null | undefined): this;
  /**
   * One pass over the bytes and one write of the output, on the calling
   * thread; nothing is converted again.
   */
  prune(messages: Uint8Array, options?: PrunerPruneOptions | null): PruneResult;
}

/**
 * SPEC 6: the boundary a flush computes; undefined where the reference
 * returns undefined (too few turns and no previous boundary). Copies the
 * timestamps once; calling thread, keeps nothing.
 */
export declare function computeThinkingBoundary(
  assistantTimestamps: number[],
  keepLastTurns: number,
  prev?: number | null,
): number | undefined;

/**
 * `JSON.stringify(JSON.parse(bytes)).length`: one pass over the bytes on
 * the calling thread, nothing copied or kept.
 */
export declare function sizeOf(messages: Uint8Array): number;

/**
 * Which implementation answers: 'native' (the Rust addon) or 'js' (the
 * pure-JavaScript fallback, used where no binary for this platform loads).
 */
export declare const backend: 'native' | 'js';

/** Options of `loadSession` and `loadSessionAsync`. */
export interface LoadSessionOptions {
  /**
   * The entry to read the session at, as `SessionManager.branch(id)` takes
   * it (an unknown id is an `ERR_CONDENSE_INVALID_ARGUMENT` error). Default:
   * the active leaf pi sets on load (the last entry).
   */
  leafId?: string | null;
  /** Whose rules and state shape: pi-condense '2.4.3' (default) or '2.9.1'. */
  dialect?: '2.4.3' | '2.9.1' | null;
}

/** The frontier pi-condense keeps (SESSIONS.md B.5). */
export interface SessionFrontier {
  lastAttemptedToolCallId: unknown;
  lastAttemptedToolName: unknown;
  lastAttemptedTurnIndex: unknown;
  lastAttemptedTimestamp: unknown;
  attemptedBatchCount: unknown;
  attemptedToolCallCount: unknown;
  rawCharCount: unknown;
  summaryCharCount: unknown;
  outcome: unknown;
  /** 2.4.3 only, as stored (absent when the entry lacks it). */
  thinkingStripBoundaryTimestamp?: unknown;
}

/** What `loadSession` returns. */
export interface LoadedSession {
  /**
   * The messages pi hands a `context` handler at the leaf: its
   * `buildSessionContext` messages without the system ones, as JSON values
   * (NaN timestamps are null, undefined fields are absent).
   */
  messages: Message[];
  /** pi-condense's state rebuilt from the leaf's branch, in the dialect's shape. */
  state: PruneState;
  /** The frontier in force, or null. */
  frontier: SessionFrontier | null;
}

/**
 * Reads a pi session file (a path, file URL, or its bytes, read in place)
 * the way pi 1.6.0 opens it, without writing to it. Blocks the calling
 * thread: native parsing (lines parsed on rayon's pool for files of 1 MiB
 * or more), then `JSON.parse` of the three result texts, which dominates
 * for large files (benches/load.js). Keeps nothing. Errors carry `code` (`ERR_CONDENSE_INVALID_SESSION`,
 * `ERR_CONDENSE_TOO_DEEP`, `ERR_CONDENSE_INVALID_ARGUMENT`,
 * `ERR_CONDENSE_IO`), `file` and, when a line is at fault, `line`.
 */
export declare function loadSession(
  pathOrBuffer: string | URL | Uint8Array,
  options?: LoadSessionOptions | null,
): LoadedSession;

/**
 * `loadSession` with the file read and the native load on the libuv pool
 * (bytes are copied first, so the caller may reuse its buffer). The JSON
 * parse of the result still runs on the JS thread when the promise settles:
 * use it to keep a server responsive, not to save CPU.
 */
export declare function loadSessionAsync(
  pathOrBuffer: string | URL | Uint8Array,
  options?: LoadSessionOptions | null,
): Promise<LoadedSession>;

/** A pruning policy a replay compares (`none` is always replayed). */
export type ReplayPolicyName =
  | 'none' | 'config' | 'no-thinking-strip' | 'live-thinking-strip' | '2.9.1'
  /** A release behind the cache-aware gate (docs/GATE.md); opt-in, not among the defaults. */
  | 'config+gate' | '2.9.1+gate';

/**
 * The cache-aware gate's settings (docs/GATE.md), as pi's
 * `condenseNative.gate` and the replay's `gate` option take them.
 */
export interface GateSettings {
  /** pi's switch (default false). Offline, `false` leaves the gated twins out of the tune, and a replay refuses the `+gate` policies with it; otherwise the replay gates the `+gate` policies whatever it says. */
  enabled?: boolean | null;
  /** Calls over which a saving is counted: `'auto'` (default) learned from the release's rewrites so far. */
  horizon?: number | 'auto' | null;
  /** Share of the model's context window (pi-ai's catalog) a hold may fill, in (0, 1] (default 0.8). */
  budget?: number | null;
  /** Hold rather than send a render whose rewrite makes the provider drop reasoning the hold keeps (preserved thinking), unless the cache is cold (default true). */
  keepReasoning?: boolean | null;
}

/** Gate settings checked (ERR_CONDENSE_INVALID_ARGUMENT naming the key) and written whole. */
export declare function gateSettings(settings: GateSettings | null | undefined): { enabled?: false; horizon: number | 'auto'; budget: number; keepReasoning?: false };

/** Options of `replay` and `replayAsync`. */
export interface ReplayOptions {
  /** Policies to compare, in order (default: all five). */
  policies?: ReplayPolicyName[] | null;
  /**
   * pi-condense's config, which the session file does not hold: pi's
   * settings file (`{contextPrune: {...}}`), its `contextPrune` block, or a
   * render config (recognised by `errorPurge` or `protection`). Default: the
   * release's documented defaults. A value of the wrong type in a section
   * the render reads is ERR_CONDENSE_INVALID_CONFIG naming its key path.
   */
  config?: object | null;
  /**
   * The pi-condense release the caller runs: its policy (`config` for
   * 2.4.3, `2.9.1` for 2.9.1) gets `yours: true` and " (yours)" in its label.
   */
  release?: '2.4.3' | '2.9.1' | null;
  /**
   * How calls are priced (docs/REPLAY.md, "Cost model"): `provider` (the
   * default) by the provider's own cache rules and pi-ai's catalog prices,
   * in USD; `prefix`, every message before the first changed one read (no
   * provider works so), priced at the catalog, with the rule's own chars
   * and `inputPrice` units under each `prefix` object.
   */
  cacheModel?: 'provider' | 'prefix' | null;
  /** pi's cache retention: `short` (5 min, default) or `long` (1 h). */
  retention?: 'short' | 'long' | null;
  /** Price every call as this model (`provider/id`) instead of the one the session recorded. */
  model?: string | null;
  /** The policy in force when the session was recorded (default `none`): its calls are checked against the usage pi recorded. */
  recordedPolicy?: ReplayPolicyName | null;
  /** Characters per token, fixed (default: calibrated per model from the recorded usage, else 4). */
  charsPerToken?: number | null;
  /** The prefix rule's price of one input token; its `cost` is in this unit (default 1). */
  inputPrice?: number | null;
  /** The prefix rule's cache-write price over the input price (default 1.25). */
  cacheWriteMultiplier?: number | null;
  /** The prefix rule's cache-read price over the input price (default 0.1). */
  cacheReadMultiplier?: number | null;
  /** The prefix rule's cache lifetime, in seconds (default 300). */
  cacheTtlSeconds?: number | null;
  /** Include every render's row (default false: totals only). */
  renders?: boolean | null;
  /**
   * The 2.4.3 thinking boundary the `config` policy renders with (docs/REPLAY.md,
   * "The thinking boundary"): `auto` (default) the config's own, computed at
   * each flush from its `keepLastTurns` as pi-condense 2.4.3 does, reported as
   * the `recorded` rule when the file's frontier entries hold that same
   * boundary at every render; `recorded` the frontier in force, as written;
   * `config` the config's own.
   */
  thinkingBoundary?: 'auto' | 'recorded' | 'config' | null;
  /** The gate's settings for the `+gate` policies (default: `{horizon: 'auto', budget: 0.8}`). */
  gate?: GateSettings | null;
  /**
   * What was sent, exported: each render's `messages` is the array the
   * context handler hands back to pi at that call (implies `renders`).
   */
  contexts?: boolean | null;
  /**
   * What was sent, streamed instead: `<contextsDir>/<policy>.jsonl`, a line
   * per request `{k, kind, timestamp, model, ...}` (for sessions whose
   * contexts add up to gigabytes): `kind` `call` (`gate?`, `messages`), pi's
   * `compaction` summarization requests before call `k` (`inputChars`,
   * `outputChars`, `messages`), pi's cache `warm`s before call `k` (the
   * previous call's `messages` sent again, at `timestamp`).
   */
  contextsDir?: string | null;
  /** pi's `compaction` settings (`enabled`, `reserveTokens`, `keepRecentTokens`; default pi's). */
  compaction?: object | null;
  /** pi's `cacheWarming` setting: when pi's cache warmer re-sends a request (default `idle`, pi's). */
  cacheWarming?: 'idle' | 'off' | 'streaming' | null;
}

/** The thinking boundary rule a policy's renders followed, and why; null for a policy that reads none. */
export type ThinkingBoundaryUsed = { rule: 'recorded' | 'config'; reason: string } | null;

/** Lines the loader skipped as pi does (garbage, truncated, an entry type pi does not write; blank lines aside). */
export interface SkippedLines {
  count: number;
  /** The first five, 1-based line numbers. */
  lines: number[];
}

/** `replayAsync`'s options: also a progress callback, polled every 100 ms. */
export interface ReplayAsyncOptions extends ReplayOptions {
  onProgress?: ((done: number, total: number) => void) | null;
}

/** One model call rendered under one policy. */
export interface ReplayRender {
  /** `JSON.stringify(context).length` of what pi handed the handler. */
  charsBefore: number;
  /** `JSON.stringify(output).length` of the rendered array. */
  charsAfter: number;
  messagesBefore: number;
  messagesAfter: number;
  /** First output message differing from the previous render's (0 for the first). */
  breakIndex: number;
  /**
   * XXH3-64 over the 8-byte little-endian XXH3-64 digests of the output
   * messages' `JSON.stringify` UTF-8 bytes, before the break; 16 hex digits.
   */
  prefixHash: string;
  /** The same hash over the whole output. */
  outputHash: string;
  /** The assistant entry the call produced, and the leaf its request saw. */
  entryId: string;
  leafId: string | null;
  /** When the request started (ms), or null. */
  timestamp: number | null;
  /** pi's compactions made just before this call. */
  compactions: number;
  /** When pi's cache warmer re-sent the previous request before this call (ms). */
  warms: number[];
  /** What each phase changed (2.4.3 `thinkingStripped`, 2.9.1 `orphansSwept`). */
  stats: PruneStats;
  /** As the provider bills the call (the cache model of the result). */
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  costUsd: number;
  /** Leading output messages the read covers (0: it stops at tools + system, or nothing is read). */
  cacheReadMessages: number;
  callClass: 'first' | 'append' | 'partial' | 'rewrite' | 'expired';
  /** Above the model's context window: not sent, not priced. */
  overWindow: boolean;
  /** Thinking blocks the provider dropped from this request under preserved thinking's prefix check, and their tokens (not billed). */
  thinkingDropped: { blocks: number; tokens: number };
  /** What broke the cached prefix, for a call that wrote more than its appended tail. */
  rewriteCause: {
    cause:
      | 'stub' | 'errorPurge' | 'chainCompression' | 'thinkingStrip' | 'orphanSweep'
      | 'compaction' | 'contextEdit' | 'branch' | 'expired' | 'modelSwitch' | 'systemPrompt'
      | 'thinkingDropped' | 'lookback' | 'unknown';
    /** The policy's change came with a flush. */
    flush: boolean;
    /** For `expired`: seconds since the entries were last used. */
    gapSeconds: number | null;
  } | null;
  /** The prefix rule's measures of the call; present only under `cacheModel: 'prefix'`. */
  prefix?: {
    /** UTF-16 chars of the rendered array's JSON text before the break (0 if the cache expired). */
    cacheReadChars: number;
    /** `charsAfter - cacheReadChars` (UTF-16 chars). */
    cacheWriteChars: number;
    /** More than `cacheTtlSeconds` passed since the previous call. */
    cacheExpired: boolean;
  };
  /** On a `+gate` policy: whether the release's render was sent (`apply`) or the previous request's messages followed by the appended ones (`hold`). */
  gate?: 'apply' | 'hold';
  /** Why: `cold` (nothing warm to lose), `budget`, `pays`, `same` (the render was the hold), `waits` (a hold). */
  gateReason?: 'cold' | 'budget' | 'pays' | 'same' | 'waits';
  /** With `contexts: true`: the messages sent at this call, as the context handler hands them back to pi. */
  messages?: object[];
}

/** A render that changed history between two flushes. */
export interface ReplayViolation {
  render: number;
  outputIndex: number;
  inputIndex: number | null;
  phase: 'stub' | 'errorPurge' | 'chainCompression' | 'thinkingStrip' | 'orphanSweep' | 'unknown';
  detail: string;
}

/** One policy over the whole session. */
export interface ReplayPolicyResult {
  policy: ReplayPolicyName;
  /** What it is, in words ("pi-condense 2.9.1"), with " (yours)" on the caller's release. */
  label: string;
  /** The policy of the `release` option (false on all when none is given). */
  yours: boolean;
  /** The render config it ran with (null for `none`). */
  config: object | null;
  /** The 2.4.3 thinking boundary rule (`config` only; null for the others). */
  thinkingBoundary: ThinkingBoundaryUsed;
  /** UTF-16 chars of every rendered array's JSON text, summed over the calls. */
  charsSent: number;
  /** USD as the provider bills the calls (pi's cache warms included), and its ratio to `none`'s (null when that is 0). */
  costUsd: number;
  costUsdVsNone: number | null;
  /** Tokens as billed: uncached input, cache reads, cache writes (pi's cache warms included). */
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /**
   * Its saving against `none` in parts, in USD (negative: that part costs
   * more): `pruning` (stubs, purged arguments, chains), `thinkingStrip`,
   * `gate` (its holds), `compactions`, `warms`. They sum to `none`'s
   * `costUsd` less this one's. Empty for `none`.
   */
  parts: { part: 'pruning' | 'thinkingStrip' | 'gate' | 'compactions' | 'warms'; costUsd: number }[];
  /** pi's cache warms under this policy (each its own request sent again), and what they cost. */
  warms: { count: number; costUsd: number };
  /** Thinking the provider dropped under preserved thinking's prefix check, over the calls: blocks, tokens (not billed) and the calls that dropped any: reasoning the model no longer saw. */
  thinkingDropped: { blocks: number; tokens: number; calls: number };
  /** pi's compactions under this policy, and what their summarization requests cost. */
  compactions: number;
  compactionCostUsd: number;
  /** Requests above the model's context window (not sent, not priced). */
  overWindow: number;
  callClasses: { first: number; append: number; partial: number; rewrite: number; expired: number };
  /** Per cause (`<cause>` or `<cause> at a flush`): calls, tokens written beyond the appended tail, their USD. */
  causes: { cause: string; calls: number; tokensWritten: number; costUsd: number }[];
  /** The flush-gated invariant: renders checked, renders that broke it, the first 1000 of them. */
  invariant: { flushGated: boolean; checked: number; broken: number; violations: ReplayViolation[] };
  /** The prefix rule's totals; present only under `cacheModel: 'prefix'`. */
  prefix?: {
    /** Tokens are UTF-16 chars / `charsPerToken`, not rounded. */
    inputTokens: number;
    cacheReadTokens: number;
    cacheWriteTokens: number;
    /** UTF-16 chars read from and written to the cache. */
    cacheReadChars: number;
    cacheWriteChars: number;
    /** `inputPrice * (cacheWriteTokens * cacheWriteMultiplier + cacheReadTokens * cacheReadMultiplier)`, in units of `inputPrice`. */
    cost: number;
    /** `cost` over policy `none`'s (null when that is 0). */
    costVsNone: number | null;
  };
  /** On a `+gate` policy: its settings, the calls that sent the release's render and those that held, and the calls per reason. */
  gate?: {
    horizon: number | 'auto';
    budget: number;
    applies: number;
    holds: number;
    reasons: { cold: number; budget: number; pays: number; same: number; waits: number };
  };
  /** Present when `renders: true`. */
  renders?: ReplayRender[];
}

/** What `replay` returns. */
export interface ReplayResult {
  modelCalls: number;
  skippedLines: SkippedLines;
  /** The prefix rule's prices; present only under `cacheModel: 'prefix'`. */
  prefix?: {
    /** UTF-16 chars per token. */
    charsPerToken: number;
    /** Price of one input token (the unit of `cost`). */
    inputPrice: number;
    cacheWriteMultiplier: number;
    cacheReadMultiplier: number;
    /** Seconds. */
    cacheTtlSeconds: number;
  };
  cacheModel: 'provider' | 'prefix';
  retention: 'short' | 'long';
  /** The pi cache-warming mode the warms were simulated in. */
  cacheWarming: 'idle' | 'off' | 'streaming';
  /** Per model: whether pi-ai's catalog knows it, and its chars-per-token calibration. */
  models: {
    model: string;
    inCatalog: boolean;
    /** The provider keeps earlier turns' thinking in the prompt it bills (what the thinking strip's saving rests on). */
    keepsThinking: boolean;
    /** Its API runs preserved thinking's prefix check: a rewrite drops the thinking after it. */
    prefixCheck: boolean;
    charsPerToken: number;
    /** Tools + system tokens when inferred by the fit (no system message in the file). */
    preambleTokens: number | null;
    calibration: 'systemMessage' | 'inferred' | 'fixed' | 'default';
    calls: number;
    fitError: number | null;
  }[];
  /** The recorded policy's calls against the usage pi recorded. */
  recorded: {
    policy: ReplayPolicyName;
    status: 'matched' | 'unreconciled' | 'noUsage';
    reason: string | null;
    calls: number;
    classMatch: number;
    recordedCostUsd: number;
    predictedCostUsd: number;
    costError: number | null;
    /** pi's warms the file recorded, those simulated for the recorded policy, and the recorded ones simulated within the warmer's slack. */
    warms: { recorded: number; simulated: number; matched: number };
  };
  policies: ReplayPolicyResult[];
}

/**
 * Replays every model call of a pi session file's active branch: for each,
 * the context pi sent (the handler view at the call's leaf) rendered with
 * the pi-condense state in force then (SESSIONS.md C.3), once per policy,
 * on a kept native engine. Blocks the calling thread (file lines parsed on
 * rayon's pool from 1 MiB), then one `JSON.parse` of the result; keeps
 * nothing. `replayAsync` runs the same off the JS thread. Errors carry `code`, `file` and, when a line is at
 * fault, `line`.
 */
export declare function replay(
  pathOrBuffer: string | URL | Uint8Array,
  options?: ReplayOptions | null,
): ReplayResult;

/**
 * `replay` on the libuv pool (bytes are copied first). The JS thread only
 * checks options, polls progress for `onProgress` and parses the result.
 */
export declare function replayAsync(
  pathOrBuffer: string | URL | Uint8Array,
  options?: ReplayAsyncOptions | null,
): Promise<ReplayResult>;

/** Options of `tune` and `tuneAsync`: a replay's, plus the release you run. */
export interface TuneOptions extends Omit<ReplayOptions, 'policies' | 'renders'> {
  /**
   * Your current settings: `config` (pi's settings file, its `contextPrune`
   * block, or a render config; default pi-condense's defaults) with this
   * release (default `'2.4.3'`).
   */
  release?: '2.4.3' | '2.9.1' | null;
}

/** `tuneAsync`'s options: also a progress callback, polled every 100 ms. */
export interface TuneAsyncOptions extends TuneOptions {
  onProgress?: ((done: number, total: number) => void) | null;
}

/** One configuration of a tune, over every session given. */
export interface TuneConfiguration {
  release: '2.4.3' | '2.9.1' | 'none';
  /** The `contextPrune` block as pi's settings.json spells it (null for `none`). */
  contextPrune: object | null;
  /** `condenseNative.gate`'s settings when it runs behind the cache-aware gate, else null. */
  gate: { horizon: 'auto' | number; budget: number } | null;
  /** USD over every session (an order-free sum). */
  costUsd: number;
  charsSent: number;
  /** Thinking the provider dropped under preserved thinking's prefix check, over every session: reasoning the model no longer saw. */
  thinkingDropped: { blocks: number; tokens: number; calls: number };
}

export interface TuneRanked extends TuneConfiguration {
  /** Calls that rewrote the cache (rewrite, partial or expired). */
  rewrites: number;
  /** No other configuration is both cheaper and smaller. */
  front: boolean;
  /** Within `recommended.ties.withinUsd` of the first: one group with it. */
  tied: boolean;
  /** Your current settings. */
  current: boolean;
  perFileCostUsd: number[];
  causes: { cause: string; calls: number; costUsd: number }[];
}

/** A part of a configuration the tune varies (`enabled`: pi-condense's master switch). */
export type TunePart = 'enabled' | 'release' | 'thinkingStrip' | 'purgeErrors' | 'chainCompression' | 'recoveryGraceTurns' | 'gate';

/** What `tune` returns. Any order of the same files gives the same answer. */
export interface TuneResult {
  /** The files tuned, in order (those left out are in `errors`). */
  files: string[];
  modelCalls: number;
  /** Settings that act only at a flush, held at what the sessions recorded. */
  held: string[];
  /**
   * What you pay today: your settings when pi-condense's master switch
   * (`contextPrune.enabled`) is true in `config`, else no pruning. Savings
   * are fractions of it.
   */
  today: { pruningOn: boolean; costUsd: number };
  current: TuneConfiguration & {
    /** The 2.4.3 thinking boundary rule it rendered with (null for release 2.9.1). */
    thinkingBoundary: ThinkingBoundaryUsed;
  };
  /**
   * Of the configurations tied with the cheapest (within a cent, or 0.1%
   * when more), the one that changes least from yours (then fewer chars).
   */
  recommended: TuneConfiguration & {
    /** Fraction of today's USD saved, over all sessions and per session. */
    saving: number;
    savingSpread: { min: number; median: number; max: number };
    ties: { count: number; withinUsd: number; free: TunePart[] };
    /** From today to the recommendation a part at a time, each step a priced configuration. */
    changes: { parts: TunePart[]; costUsd: number; savingUsd: number }[];
    /** What to set in pi's settings.json (only what changes); null: nothing changes. */
    paste: {
      settings: { contextPrune?: object; condenseNative?: { gate: { enabled: true; horizon: 'auto' | number; budget: number } } };
      release: '2.4.3' | '2.9.1' | null;
      turnsPruning: 'on' | 'off' | null;
    } | null;
  };
  /** Cheapest first; equally cheap ones by fewer chars, then fewer changes from yours. */
  ranked: TuneRanked[];
  /** Per file tuned: model calls, USD under no pruning, your settings, today's and the recommendation's, skipped lines. */
  perFile: {
    file: string;
    modelCalls: number;
    noneUsd: number;
    currentUsd: number;
    todayUsd: number;
    recommendedUsd: number;
    skippedLines: SkippedLines;
  }[];
  /** Files left out: could not be read, parsed or replayed (`message` names no file; `line` null when none). */
  errors: { file: string; error: { code: string; message: string; line: number | null } }[];
  /**
   * With two or more sessions, leave one file out: each file priced with
   * the configuration chosen on the others. `keepYours` says why the check
   * keeps your settings (null: it does not): the saving summed over the
   * files is not above zero, or it is too small to tell (within
   * `withinUsd`, or some file's others tie today's configuration).
   */
  heldOut: {
    perFile: {
      file: string;
      /** Chosen the same way on the other files. */
      chosen: Pick<TuneConfiguration, 'release' | 'contextPrune' | 'gate'>;
      /** Its saving over today's on this file (fraction), and both USD. */
      saving: number;
      costUsd: number;
      todayUsd: number;
      /** The other files tie today's configuration with their cheapest: they cannot tell it apart. */
      todayTied: boolean;
    }[];
    saving: number;
    savingUsd: number;
    todayUsd: number;
    withinUsd: number;
    savingSpread: { min: number; median: number; max: number };
    filesSaving: number;
    keepYours: 'not above zero' | 'too small to tell' | null;
  } | null;
}

/**
 * Which pi-condense settings to run: replays the session files (paths, or
 * directories of *.jsonl) under a grid of 121 render-time configurations and
 * prices each as the provider bills it (README, "Which settings should I
 * run"). Each file is read and prepared once; the configurations run on
 * rayon's pool (every core); blocks the calling thread until done, then one
 * `JSON.parse` of the result. A file that cannot be read, parsed or
 * replayed is left out and listed in `errors`; only when none is left does
 * it throw (a single file's own error, or one naming every file). `tuneAsync` runs the same off the JS thread.
 */
export declare function tune(paths: string | URL | (string | URL)[], options?: TuneOptions | null): TuneResult;

/** `tune` on the libuv pool; the JS thread only polls progress and parses the result. */
export declare function tuneAsync(paths: string | URL | (string | URL)[], options?: TuneAsyncOptions | null): Promise<TuneResult>;
