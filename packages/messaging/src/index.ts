export * from './broker.js';
