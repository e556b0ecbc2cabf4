import type { FromSchema } from 'json-schema-to-ts';
import { EXCHANGES, type MessageDefinition } from './topology.js';

/**
 * Messages of a partition group (@tes/messaging's PartitionGroup): the replicas that consume one
 * family of single-active-consumer partition queues (the orchestrator's, the gateway's read model)
 * and share them out between themselves.
 */

const group = { type: 'string', minLength: 1, maxLength: 64 } as const;
const replica = { type: 'string', minLength: 1, maxLength: 128 } as const;

/** Every second, from each replica of a group to all of them: who is alive, what it is the active consumer of. */
export const partitionBeatSchema = {
  type: 'object',
  properties: {
    group,
    replica,
    /** The partition count this replica was started with: every replica and publisher must agree. */
    partitions: { type: 'integer', minimum: 1, maximum: 1024 },
    /** The partitions it is the active consumer of (it has received a message on its current attachment). */
    active: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 1023 }, maxItems: 1024 },
  },
  required: ['group', 'replica', 'partitions', 'active'],
  additionalProperties: false,
} as const;
export type PartitionBeat = FromSchema<typeof partitionBeatSchema>;

/**
 * Sent straight to one partition queue (default exchange) when no replica says it is that
 * partition's active consumer: whoever receives it learns it is. Acknowledged by the transport,
 * never handed to a handler.
 */
export const partitionProbeSchema = {
  type: 'object',
  properties: { group, replica },
  required: ['group', 'replica'],
  additionalProperties: false,
} as const;
export type PartitionProbe = FromSchema<typeof partitionProbeSchema>;

export const PARTITION_MESSAGES = {
  'partition.beat': { exchange: EXCHANGES.events, routingKey: 'partition.beat', partitioned: false, schema: partitionBeatSchema },
  'partition.probe': { exchange: EXCHANGES.commands, routingKey: 'partition.probe', partitioned: false, schema: partitionProbeSchema },
} as const satisfies Record<string, MessageDefinition>;
