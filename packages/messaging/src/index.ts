export * from './broker.js';
export * from './queue-type.js';
export * from './announcer.js';
export * from './permanent-failure.js';
export * from './partition-group.js';
