export * from './broker.js';
export * from './announcer.js';
export * from './permanent-failure.js';
