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
 * pi-condense 2.4.3's `pruneMessages`: same arguments, same result. Keeps the
 * conversation per indexer object between calls (a WeakMap) and re-reads
 * only what changed; see the README for what a kept render compares.
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

/** `JSON.stringify(messages).length`, as the reference's `sizeMessages`. */
export declare function sizeMessages(messages: Message[]): number;

/** Forgets what was kept for `indexer`; its next render re-reads everything. */
export declare function invalidate(indexer: object): void;
