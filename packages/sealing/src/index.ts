export { KeyRing, KeyRingError } from './key-ring.js';
