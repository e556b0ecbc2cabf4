export {
  createMetrics,
  observeCreateBacklog,
  secondsSince,
  DELIVERY_BUCKETS,
  HTTP_BUCKETS,
  LAG_BUCKETS,
  STEP_BUCKETS,
  type CreateBacklogReading,
  type Metrics,
  type MetricsOptions,
} from './metrics.js';
export { httpMetrics, mountMetrics, CLIENT_CLOSED, UNMATCHED_ROUTE } from './express.js';
