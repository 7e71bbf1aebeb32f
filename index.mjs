// ESM entry: the CommonJS API (index.js) re-exported, so `import` and
// `require` share one loaded binding.
import api from './index.js';

export const {
  prune,
  pruneMessages,
  pruneMessagesCompat,
  stateFromIndexer,
  PruneSession,
  Pruner,
  computeThinkingBoundary,
  sizeOf,
  loadSession,
  loadSessionAsync,
  replay,
  replayAsync,
  gateSettings,
  tune,
  tuneAsync,
  backend,
} = api;
export default api;
