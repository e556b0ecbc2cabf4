import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The instruments every service shares. A service registers all of them (an unused one is
 * exported with no series, which costs nothing) so dashboards and alerts can be written once.
 * Label values are closed sets (see docs/operations.md): never put ids, URLs or raw paths in one.
 */
export interface Metrics {
  /** Scraped by GET /metrics; carries the default label `service`. */
  registry: Registry;
  /** method, route (the matched pattern, e.g. `/v1/tasks/:task_id`, or `(unmatched)`), status. */
  httpRequestDuration: Histogram<'method' | 'route' | 'status'>;
  /** Tasks that reached a status: pending, running, waiting, complete, failed, cancelled. */
  tasksTotal: Counter<'status'>;
  /** From a message's `occurred_at` to the moment a consumer starts handling it, per queue. */
  queueConsumeLag: Histogram<'queue'>;
  /** One step run: tool, action, outcome (complete, a skipped step too; failed; needs_authorization). */
  stepDuration: Histogram<'tool' | 'action' | 'outcome'>;
  /** One webhook POST: outcome (delivered, redirect, http_error, timeout, blocked, network_error). */
  webhookAttempts: Counter<'outcome'>;
  /** One webhook POST's duration, up to its answer's status or its failure, by the same outcome. */
  webhookDeliveryLatency: Histogram<'outcome'>;
  /** OAuth token refreshes: outcome (refreshed, failed: transient, revoked: the provider refused the grant). */
  tokenRefreshes: Counter<'outcome'>;
  /** Task creates the gateway refused at once because the account's creates were queueing (load shedding). */
  createsShed: Counter;
}

export interface MetricsOptions {
  /** Node.js process metrics (CPU, memory, event loop lag, GC, handles); on unless false. */
  defaultMetrics?: boolean;
  /** Extra labels put on every series of this registry (for example `{ replica: hostname }`). */
  labels?: Record<string, string>;
}

/** HTTP latency, in seconds: sub-millisecond health checks up to the 30 s request timeout. */
export const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Broker lag, in seconds: healthy is well under a second; minutes means consumers are short. */
export const LAG_BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900];
/** Third-party calls, in seconds, up to the default 30 s step timeout and beyond. */
export const STEP_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** One webhook POST, in seconds: a fast receiver answers in milliseconds; the default timeout is 30 s. */
export const DELIVERY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** A fresh registry (never prom-client's global one) with the shared instruments of `service`. */
export function createMetrics(service: string, options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ ...options.labels, service });
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];

  return {
    registry,
    httpRequestDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by method, matched route pattern and status code',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: HTTP_BUCKETS,
      registers,
    }),
    tasksTotal: new Counter({
      name: 'tasks_total',
      help: 'Tasks that reached each status',
      labelNames: ['status'] as const,
      registers,
    }),
    queueConsumeLag: new Histogram({
      name: 'queue_consume_lag_seconds',
      help: 'Time from a message being published (occurred_at) to a consumer taking it, by queue',
      labelNames: ['queue'] as const,
      buckets: LAG_BUCKETS,
      registers,
    }),
    stepDuration: new Histogram({
      name: 'step_duration_seconds',
      help: 'Workflow step run duration by tool, action and outcome',
      labelNames: ['tool', 'action', 'outcome'] as const,
      buckets: STEP_BUCKETS,
      registers,
    }),
    webhookAttempts: new Counter({
      name: 'webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome',
      labelNames: ['outcome'] as const,
      registers,
    }),
    webhookDeliveryLatency: new Histogram({
      name: 'webhook_delivery_latency_seconds',
      help: 'Webhook POST duration by attempt outcome',
      labelNames: ['outcome'] as const,
      buckets: DELIVERY_BUCKETS,
      registers,
    }),
    tokenRefreshes: new Counter({
      name: 'token_refreshes_total',
      help: 'OAuth access token refreshes by outcome',
      labelNames: ['outcome'] as const,
      registers,
    }),
    createsShed: new Counter({
      name: 'creates_shed_total',
      help: "Task creates answered 503 at once because the account's earlier creates were queueing",
      registers,
    }),
  };
}

/** What the gateway's creates waiting for the orchestrator look like now, on this replica. */
export interface CreateBacklogReading {
  waiting: number;
  oldestWaitSeconds: number;
}

/**
 * The gateway's two gauges of creates still waiting for the orchestrator's answer, read from
 * `read` at each scrape (nothing on the request path): `creates_awaiting_answer` and
 * `creates_oldest_wait_seconds`. The second above CREATE_SHED_AFTER_MS means some account's
 * creates are being shed; both rising together means the orchestrator is behind.
 */
export function observeCreateBacklog(metrics: Metrics, read: () => CreateBacklogReading): void {
  const registers = [metrics.registry];
  new Gauge({
    name: 'creates_awaiting_answer',
    help: 'Task creates this gateway replica sent to the orchestrator and still waits on',
    registers,
    collect() {
      this.set(read().waiting);
    },
  });
  new Gauge({
    name: 'creates_oldest_wait_seconds',
    help: 'How long the oldest create still waiting for the orchestrator has waited (0 with none)',
    registers,
    collect() {
      this.set(read().oldestWaitSeconds);
    },
  });
}

/** Seconds since an ISO-8601 `occurred_at` (0 when it is in the future or unparsable): for queueConsumeLag. */
export function secondsSince(occurredAt: string, now: number = Date.now()): number {
  const t = Date.parse(occurredAt);
  return Number.isFinite(t) ? Math.max(0, (now - t) / 1000) : 0;
}

/** What a replica of a partition group knows at a scrape (@tes/messaging's PartitionGroup). */
interface PartitionGroupReading {
  owned: readonly number[];
  members: number;
}

/**
 * Two gauges of a partition group, read at each scrape: `partitions_owned` (the partitions this
 * replica is the active consumer of) and `partition_group_members` (the replicas it hears). Summed
 * over replicas, `partitions_owned` is the partition count once every partition has been claimed.
 */
export function observePartitionGroup(metrics: Metrics, group: string, read: () => PartitionGroupReading): void {
  const registers = [metrics.registry];
  new Gauge({
    name: 'partitions_owned',
    help: 'Partitions of the group this replica is the single active consumer (writer) of',
    labelNames: ['group'] as const,
    registers,
    collect() {
      this.set({ group }, read().owned.length);
    },
  });
  new Gauge({
    name: 'partition_group_members',
    help: 'Replicas of the partition group this replica has heard from within the member timeout, itself included',
    labelNames: ['group'] as const,
    registers,
    collect() {
      this.set({ group }, read().members);
    },
  });
}
