export { createMetrics, observeCreateBacklog, observePartitionGroup, secondsSince, type Metrics } from './metrics.js';
export { httpMetrics, mountMetrics } from './express.js';
