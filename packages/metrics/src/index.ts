export {
  createMetrics,
  observeCreateBacklog,
  observePartitionGroup,
  secondsSince,
  type Metrics,
  type PartitionGroupReading,
} from './metrics.js';
export { httpMetrics, mountMetrics } from './express.js';
