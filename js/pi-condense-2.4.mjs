// ESM entry of condense-native/pi-condense-2.4 (the CommonJS module re-exported).
import api from './pi-condense-2.4.js';

export const { pruneMessages, sizeMessages, invalidate } = api;
export default api;
