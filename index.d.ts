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
 * Prunes a JSON array of pi messages held in a Buffer; the caller's bytes
 * are never modified. Cost: one pass over the bytes on the calling thread
 * (messages already in JSON.stringify's spelling are read in place), one
 * write of the output, and a JSON.stringify plus conversion of `state` and
 * `config` on every call; keeps nothing. Render after render, use `Pruner`.
 */
export declare function prune(messages: Uint8Array, options?: PruneOptions | null): PruneResult;

/**
 * Prunes a JS array of pi messages. Cost: one JSON.stringify of the array
 * (handed over as UTF-16), a look-up in `state` of each tool result present
 * (the state is not serialized), and fresh objects only for edited
 * messages; a no-op is answered by a walk over the array without
 * serializing anything. Keeps nothing: for a conversation rendered again
 * and again, a `PruneSession` or a drop-in costs what changed.
 */
export declare function pruneMessages(messages: Message[], options?: PruneOptions | null): ArrayPruneResult;

/**
 * pi-condense 2.4.3's `pruneMessages` (also `condense-native/pi-condense-2.4`):
 * same arguments, same result. Keeps the conversation per indexer object
 * between calls (a WeakMap): a call compares each message's fingerprint,
 * asks the indexer about the tool results present, and re-reads only what
 * changed.
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
 * ids that occur in them). Cost: three indexer calls per tool result.
 */
export declare function stateFromIndexer(messages: Message[], indexer: CondenseIndexer): PruneState;

/**
 * One conversation rendered again and again. Keeps its messages natively
 * (about the size of their JSON) and re-reads only from the first message
 * whose fingerprint changed; the state is converted at `setState` only.
 * A render that cannot change anything answers without crossing over.
 */
export declare class PruneSession {
  constructor(options?: PruneSessionOptions);
  /** New state (at flushes): one JSON.stringify and conversion. */
  setState(state: PruneState | null | undefined): this;
  render(messages: Message[]): ArrayPruneResult;
  /** Forgets what was kept: the next render re-reads every message. */
  invalidate(): this;
  /**
   * Advances the 2.4.3 thinking boundary over the last render's messages
   * plus the optional closing message; returns the snapshot to persist.
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
 * Keeps the converted config and state between `prune` calls on Buffers;
 * a prune then costs one read of the bytes and one write of the output.
 */
export declare class Pruner {
  constructor(config?: PruneConfig | null, options?: { dialect?: Dialect } | null);
  setConfig(config: PruneConfig | null | undefined): this;
  setState(state: PruneState | null | undefined): this;
  prune(messages: Uint8Array, options?: PrunerPruneOptions | null): PruneResult;
}

/**
 * SPEC 6: the boundary a flush computes; undefined where the reference
 * returns undefined (too few turns and no previous boundary).
 */
export declare function computeThinkingBoundary(
  assistantTimestamps: number[],
  keepLastTurns: number,
  prev?: number | null,
): number | undefined;

/** `JSON.stringify(JSON.parse(bytes)).length`: one pass over the bytes. */
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
 * the way pi 1.6.0 opens it, without writing to it. Runs on the calling
 * thread: native parsing (in parallel for files over 1 MiB), then
 * `JSON.parse` of the messages, which dominates for large files (numbers in
 * benches/load.js). Errors carry `code` (`ERR_CONDENSE_INVALID_SESSION`,
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
 * parse of the result still runs on the JS thread when the promise settles.
 */
export declare function loadSessionAsync(
  pathOrBuffer: string | URL | Uint8Array,
  options?: LoadSessionOptions | null,
): Promise<LoadedSession>;
