export { DecryptionError, KeyRing, KeyRingError } from './key-ring.js';
