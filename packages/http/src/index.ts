export * from './request-id.js';
export * from './request-log.js';
export * from './errors.js';
export * from './validate.js';
export * from './ops.js';
export * from './listen.js';
export * from './client-address.js';
export * from './cookies.js';
