// Types of the ESM entry of condense-native/pi-condense-2.9.
import * as api from './pi-condense-2.9.js';

export * from './pi-condense-2.9.js';
export default api;
