// Types of condense-native/pi-condense-2.9: pi-condense 2.9.1's render path.
import type {
  ChainCompressionConfig,
  ChainEntry,
  CompatPruneResult,
  DiagnosticsSink,
  ErrorPurgeConfig,
  Message,
  ProtectionConfig,
  ToolCallRecord,
} from '../index.js';

/** The look-ups of pi-condense 2.9.1's tool-call indexer its render path makes. */
export interface CondenseIndexer29 {
  /** By occurrence key (`id@resultTimestamp`). */
  isSummarized(key: string): boolean;
  hasLegacyBareRecord(toolCallId: string): boolean;
  getRecord(key: string): ToolCallRecord | undefined | null;
  getShortRefForToolCallId(key: string): string | undefined;
  getChainEntries(): ChainEntry[];
  getPerBatchSummaryTextForToolCallIds(keys: string[]): string;
  findChainEntryByBlockId(blockId: string): ChainEntry | undefined;
}

/**
 * pi-condense 2.9.1's `pruneMessages`: same arguments, same result; reports
 * go to `diagnostics.report(kind, key, detail)` in the reference's order.
 * Keeps a native conversation per indexer object (a WeakMap). A call walks
 * every message's fingerprint, sends the messages from the first changed one
 * (as the root `pruneMessages` sends them), asks the indexer about each kept
 * tool result and sends only changed answers.
 */
export declare function pruneMessages(
  messages: Message[],
  indexer: CondenseIndexer29,
  chainCompression?: ChainCompressionConfig | null,
  errorPurge?: ErrorPurgeConfig | null,
  protection?: ProtectionConfig | null,
  recoveryGraceTurns?: number,
  diagnostics?: DiagnosticsSink | null,
): CompatPruneResult;

/** `JSON.stringify(messages).length`, as the reference's `sizeMessages`: one serialization per call. */
export declare function sizeMessages(messages: Message[]): number;

/**
 * Frees the native conversation kept for `indexer` now; its next render
 * sends every message again and asks the indexer everything again.
 */
export declare function invalidate(indexer: object): void;
