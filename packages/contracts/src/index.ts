export * from './api/task.schema.js';
export * from './api/webhook.schema.js';
export * from './messages/envelope.js';
export * from './messages/catalog.js';
export * from './api/connection.schema.js';
export * from './api/tool.schema.js';
export * from './validation.js';
export * from './ids.js';
