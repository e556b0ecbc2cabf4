export * from './broker.js';
export * from './announcer.js';
