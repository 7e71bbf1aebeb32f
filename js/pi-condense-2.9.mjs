// ESM entry of condense-native/pi-condense-2.9 (the CommonJS module re-exported).
import api from './pi-condense-2.9.js';

export const { pruneMessages, sizeMessages, invalidate } = api;
export default api;
