// Types of the ESM entry (index.mjs): the same API as index.js, plus the
// module object as the default export.
import * as api from './index.js';

export * from './index.js';
export default api;
