export * from './html.js';
export * from './document.js';
