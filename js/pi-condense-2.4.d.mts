// Types of the ESM entry of condense-native/pi-condense-2.4.
import * as api from './pi-condense-2.4.js';

export * from './pi-condense-2.4.js';
export default api;
