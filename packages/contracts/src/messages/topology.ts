/**
 * Topology. Exchange and queue names are persistent: renaming one is a migration.
 * Commands go to one owner's queue through `tes.commands` (direct); events go to
 * `tes.events` (topic); rejected messages go through `tes.dead` to `<queue>.dead`.
 */
export const EXCHANGES = {
  commands: 'tes.commands',
  events: 'tes.events',
  dead: 'tes.dead',
} as const;

/**
 * Partitions of the per-account single-writer queues when the deployment chooses none
 * (PARTITIONS, @tes/config's commonEnv). Every publisher and consumer of a deployment must use
 * the same count; changing it on a running system is the procedure of docs/operations.md.
 */
export const DEFAULT_PARTITIONS = 8;
/** The largest partition count a deployment may choose. */
export const MAX_PARTITIONS = 1024;

/** FNV-1a: stable across processes and languages. */
export function partitionOf(key: string, partitions = DEFAULT_PARTITIONS): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % partitions;
}

/** Where a message goes. */
export interface MessageRoute {
  exchange: string;
  /** Fixed routing key, or a base that gets `.p<partition>` appended. */
  routingKey: string;
  partitioned: boolean;
}

/** One message of an owner's file: its route, its data's schema and, for a request, its reply's schema. */
export interface MessageDefinition extends MessageRoute {
  schema: object;
  reply?: object;
}

/** Routing key of a route; partitioned routes need the partition key (the account id). */
export function routeKey(route: MessageRoute, partitionKey?: string, partitions = DEFAULT_PARTITIONS): string {
  if (!route.partitioned) return route.routingKey;
  if (partitionKey === undefined) throw new Error(`routing key ${route.routingKey} needs a partition key`);
  return `${route.routingKey}.p${partitionOf(partitionKey, partitions)}`;
}

/**
 * Queues each owner consumes, with what binds to them. `routingKey` is the catalog routing key
 * of the messages the queue receives: the broker types its deliveries by it and dead-letters any
 * other message.
 */
export const QUEUES = {
  /** The orchestrator's single writers: one active consumer per partition across its replicas. */
  orchestratorPartition: (p: number) =>
    ({
      name: `orchestrator.p${p}`,
      exchange: EXCHANGES.commands,
      routingKey: 'orchestrator',
      bindings: [`orchestrator.p${p}`],
      singleActiveConsumer: true,
    }) as const,
  /**
   * Creates waiting for the LLM planner: not partitioned, consumed by every orchestrator replica
   * (competing consumers), so no partition's writer waits for a model.
   */
  orchestratorPlanner: {
    name: 'orchestrator.planner',
    exchange: EXCHANGES.commands,
    routingKey: 'orchestrator.planner',
    bindings: ['orchestrator.planner'],
  },
  /** The gateway read model's writers: one active consumer per partition across its replicas. */
  gatewayTaskEvents: (p: number) =>
    ({
      name: `gateway.task-events.p${p}`,
      exchange: EXCHANGES.events,
      routingKey: 'task.event',
      bindings: [`task.event.p${p}`],
      singleActiveConsumer: true,
    }) as const,
  executorSteps: { name: 'executor.steps', exchange: EXCHANGES.commands, routingKey: 'executor.steps', bindings: ['executor.steps'] },
  executorQueries: {
    name: 'executor.queries',
    exchange: EXCHANGES.commands,
    routingKey: 'executor.queries',
    bindings: ['executor.queries'],
  },
  vaultRequests: { name: 'vault.requests', exchange: EXCHANGES.commands, routingKey: 'vault.requests', bindings: ['vault.requests'] },
  dispatcherTaskEvents: {
    name: 'dispatcher.task-events',
    exchange: EXCHANGES.events,
    routingKey: 'task.event',
    bindings: ['task.event.#'],
  },
  dispatcherAdmin: {
    name: 'dispatcher.admin',
    exchange: EXCHANGES.commands,
    routingKey: 'dispatcher.admin',
    bindings: ['dispatcher.admin'],
  },
  /** Each dispatcher replica's own queue (exclusive: gone with its connection) of webhook.config_changed. */
  dispatcherConfigChanges: (replica: string) =>
    ({
      name: `dispatcher.config-changes.${replica}`,
      exchange: EXCHANGES.events,
      routingKey: 'webhook.config_changed',
      bindings: ['webhook.config_changed'],
      exclusive: true,
    }) as const,
  /** Each replica's own queue (exclusive: gone with its connection) of its partition group's beats (@tes/messaging PartitionGroup). */
  partitionBeats: (replica: string) =>
    ({
      name: `partition-beats.${replica}`,
      exchange: EXCHANGES.events,
      routingKey: 'partition.beat',
      bindings: ['partition.beat'],
      exclusive: true,
    }) as const,
  /** Each gateway replica's own queue (exclusive: gone with its connection) of gateway.credentials_changed. */
  gatewayCredentialChanges: (replica: string) =>
    ({
      name: `gateway.credential-changes.${replica}`,
      exchange: EXCHANGES.events,
      routingKey: 'gateway.credentials_changed',
      bindings: ['gateway.credentials_changed'],
      exclusive: true,
    }) as const,
} as const;
