import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { DISPATCHER_MESSAGES } from './dispatcher.js';
import { EVENT_MESSAGES } from './events.js';
import { EXECUTOR_MESSAGES } from './executor.js';
import { ORCHESTRATOR_MESSAGES } from './orchestrator.js';
import { PARTITION_MESSAGES } from './partitions.js';
import { routeKey, type MessageDefinition } from './topology.js';
import { VAULT_MESSAGES } from './vault.js';

/**
 * Every message, from its owner's file: route, data schema and, for a request, reply schema.
 * The types below are derived from these schemas: adding a message is adding it to its owner's file.
 */
export const CATALOG = {
  ...ORCHESTRATOR_MESSAGES,
  ...EXECUTOR_MESSAGES,
  ...VAULT_MESSAGES,
  ...DISPATCHER_MESSAGES,
  ...EVENT_MESSAGES,
  ...PARTITION_MESSAGES,
} as const satisfies Record<string, MessageDefinition>;

type Catalog = typeof CATALOG;

export type MessageType = keyof Catalog;

type DataSchemas = { [K in MessageType]: FromSchema<Catalog[K]['schema']> };

/**
 * The data of each message type. An interface, not the mapped type itself: `MessageDataMap[T]`
 * for a generic T then stays as it is instead of expanding FromSchema over every schema.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface MessageDataMap extends DataSchemas {}

/** The message types that are requests: answered with a reply. */
export type RequestType = { [K in MessageType]: Catalog[K] extends { reply: object } ? K : never }[MessageType];

type ReplySchemas = { [K in MessageType]: Catalog[K] extends { reply: infer S extends JSONSchema } ? FromSchema<S> : never };

/**
 * The reply of each message type, `never` for a message that is not a request (an interface for
 * the same reason as MessageDataMap).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface ReplyMap extends ReplySchemas {}

/** The reply of a message type; `never` for a message that is not a request. */
export type ReplyOf<T extends MessageType> = ReplyMap[T];

/** The message types a queue bound on `exchange` for `routingKey` receives. */
export type MessagesRoutedTo<E extends string, K extends string> = {
  [T in MessageType]: Catalog[T]['exchange'] extends E ? (Catalog[T]['routingKey'] extends K ? T : never) : never;
}[MessageType];

/**
 * Routing key of one message; partitioned routes need the partition key (the account id) and the
 * deployment's partition count (PARTITIONS, DEFAULT_PARTITIONS when not given).
 */
export function routingKeyFor(type: MessageType, partitionKey?: string, partitions?: number): string {
  return routeKey(CATALOG[type], partitionKey, partitions);
}
