// Types of condense-native/pi-condense-2.4: pi-condense 2.4.3's render path.
import type {
  ChainCompressionConfig,
  CompatPruneResult,
  CondenseIndexer,
  ErrorPurgeConfig,
  Message,
  ProtectionConfig,
  ThinkingStripConfig,
} from '../index.js';

/**
 * pi-condense 2.4.3's `pruneMessages`: same arguments, same result. Keeps a
 * native conversation per indexer object (a WeakMap). A call walks every
 * message's fingerprint, sends the messages from the first changed one (as
 * the root `pruneMessages` sends them), asks the indexer about each kept
 * tool result and sends only changed answers (README: what a render compares).
 */
export declare function pruneMessages(
  messages: Message[],
  indexer: CondenseIndexer,
  chainCompression?: ChainCompressionConfig | null,
  errorPurge?: ErrorPurgeConfig | null,
  thinkingStrip?: ThinkingStripConfig | null,
  protection?: ProtectionConfig | null,
  recoveryGraceTurns?: number,
  thinkingBoundaryTimestamp?: number | null,
): CompatPruneResult;

/** `JSON.stringify(messages).length`, as the reference's `sizeMessages`: one serialization per call. */
export declare function sizeMessages(messages: Message[]): number;

/**
 * Frees the native conversation kept for `indexer` now; its next render
 * sends every message again and asks the indexer everything again.
 */
export declare function invalidate(indexer: object): void;
