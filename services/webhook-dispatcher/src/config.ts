import type { FromSchema } from 'json-schema-to-ts';
import { commonEnv } from '@tes/config';
import { outboundEnv } from '@tes/outbound';
import { CRASH_POINTS } from './crash-point.js';

export const configSchema = {
  type: 'object',
  properties: {
    ...commonEnv,
    OPS_PORT: { ...commonEnv.OPS_PORT, default: 8094 },
    MONGO_DB: { type: 'string', minLength: 1, default: 'tes_webhook_dispatcher' },
    AMQP_NAMESPACE: { type: 'string', default: '' },
    /** `production` makes WEBHOOK_SECRET_KEYS (or _FILE) mandatory (no development key). */
    NODE_ENV: { type: 'string', default: 'development' },
    /**
     * The key ring sealing the signing secrets at rest, `kid1:base64key,kid2:base64key` (32-byte
     * keys), the first current (docs/operations.md "Webhook secret keys"). Outside production an
     * unset ring is a published development key (secret-keys.ts).
     */
    WEBHOOK_SECRET_KEYS: { type: 'string', default: '' },
    /** A file holding WEBHOOK_SECRET_KEYS (Docker/Kubernetes secrets); set one of the two. */
    WEBHOOK_SECRET_KEYS_FILE: { type: 'string', default: '' },
    /** task.event messages handed to this replica before it acks; also the largest batch it stores at once. */
    PREFETCH: { type: 'integer', minimum: 1, maximum: 1000, default: 256 },
    /** A delivery succeeds only with HTTP 200 within this time (spec 6.3: 30 s). */
    WEBHOOK_TIMEOUT_MS: { type: 'integer', minimum: 1, default: 30000 },
    /** Delays before attempts 2..n, comma separated; attempts = entries + 1 (spec 6.3). */
    WEBHOOK_RETRY_SCHEDULE_MS: { type: 'string', pattern: '^\\s*\\d+(\\s*,\\s*\\d+)*\\s*$', default: '60000,300000,1800000,7200000' },
    /** Hosts (exact names), IPs or CIDRs exempt from the private-address check of endpoints, comma separated. */
    WEBHOOK_ALLOWED_HOSTS: { type: 'string', default: '' },
    ...outboundEnv,
    /** How often the poller looks for due attempts (it is also woken at once by new events). */
    POLL_INTERVAL_MS: { type: 'integer', minimum: 10, default: 500 },
    /**
     * Deliveries in flight in this replica. Generous: a slow endpoint holds ENDPOINT_CONCURRENCY
     * of them for as long as it takes to answer, and the rest must still carry everybody else.
     */
    DELIVERY_CONCURRENCY: { type: 'integer', minimum: 1, maximum: 10000, default: 256 },
    /** Deliveries in flight in this replica to one account environment's endpoint. */
    ENDPOINT_CONCURRENCY: { type: 'integer', minimum: 1, maximum: 10000, default: 16 },
    /** A claim older than WEBHOOK_TIMEOUT_MS + this is taken as abandoned (its holder died). */
    CLAIM_MARGIN_MS: { type: 'integer', minimum: 0, default: 30000 },
    /**
     * How often a replica writes its heartbeat and reads the others': one that stopped beating is
     * taken over after 4 of the reader's on-time rounds (8-10 s by default), see holder-liveness.ts.
     */
    HEARTBEAT_INTERVAL_MS: { type: 'integer', minimum: 100, maximum: 60000, default: 2000 },
    /** How long an event waits for its task's previous version to arrive before it is sent anyway. */
    ORDER_GAP_WAIT_MS: { type: 'integer', minimum: 0, default: 1000 },
    /**
     * How long a replica reuses an endpoint and its secrets read from the database while it is not
     * told of changes (its webhook.config_changed queue not attached); 0: read at every delivery.
     */
    WEBHOOK_CONFIG_CACHE_MS: { type: 'integer', minimum: 0, maximum: 10000, default: 1000 },
    /** The same while it is told of every change: only a safety net for a lost webhook.config_changed. */
    WEBHOOK_CONFIG_CACHE_FOLLOWED_MS: { type: 'integer', minimum: 0, maximum: 3600000, default: 60000 },
    /**
     * TEST ONLY: the dispatcher SIGKILLs itself the first time it reaches this point (see
     * crash-point.ts), for the crash tests. Never set in a deployment; empty: inert.
     */
    DISPATCHER_CRASH_POINT: { type: 'string', enum: ['', ...CRASH_POINTS], default: '' },
  },
  required: [
    'AMQP_URL',
    'MONGO_URL',
    'MONGO_DB',
    'MONGO_MAX_POOL_SIZE',
    'AMQP_NAMESPACE',
    'NODE_ENV',
    'WEBHOOK_SECRET_KEYS',
    'WEBHOOK_SECRET_KEYS_FILE',
    'OPS_PORT',
    'LOG_LEVEL',
    'SHUTDOWN_TIMEOUT_MS',
    'AMQP_HEARTBEAT_S',
    'PREFETCH',
    'WEBHOOK_TIMEOUT_MS',
    'WEBHOOK_RETRY_SCHEDULE_MS',
    'WEBHOOK_ALLOWED_HOSTS',
    'OUTBOUND_ALLOW_PRIVATE',
    'POLL_INTERVAL_MS',
    'DELIVERY_CONCURRENCY',
    'ENDPOINT_CONCURRENCY',
    'CLAIM_MARGIN_MS',
    'HEARTBEAT_INTERVAL_MS',
    'ORDER_GAP_WAIT_MS',
    'WEBHOOK_CONFIG_CACHE_MS',
    'WEBHOOK_CONFIG_CACHE_FOLLOWED_MS',
    'DISPATCHER_CRASH_POINT',
  ],
} as const;

export type Config = FromSchema<typeof configSchema>;

/** Only what the CLI needs: the database, the key ring, and the broker to tell the replicas of a change. */
export const cliConfigSchema = {
  type: 'object',
  properties: {
    MONGO_URL: commonEnv.MONGO_URL,
    MONGO_DB: configSchema.properties.MONGO_DB,
    WEBHOOK_ALLOWED_HOSTS: configSchema.properties.WEBHOOK_ALLOWED_HOSTS,
    OUTBOUND_ALLOW_PRIVATE: configSchema.properties.OUTBOUND_ALLOW_PRIVATE,
    AMQP_URL: commonEnv.AMQP_URL,
    AMQP_NAMESPACE: configSchema.properties.AMQP_NAMESPACE,
    NODE_ENV: configSchema.properties.NODE_ENV,
    WEBHOOK_SECRET_KEYS: configSchema.properties.WEBHOOK_SECRET_KEYS,
    WEBHOOK_SECRET_KEYS_FILE: configSchema.properties.WEBHOOK_SECRET_KEYS_FILE,
  },
  required: [
    'MONGO_URL',
    'MONGO_DB',
    'WEBHOOK_ALLOWED_HOSTS',
    'OUTBOUND_ALLOW_PRIVATE',
    'AMQP_URL',
    'AMQP_NAMESPACE',
    'NODE_ENV',
    'WEBHOOK_SECRET_KEYS',
    'WEBHOOK_SECRET_KEYS_FILE',
  ],
} as const;

export type CliConfig = FromSchema<typeof cliConfigSchema>;

/** "a.example, b.example" → lower-cased set. */
export function parseHostList(value: string): Set<string> {
  return new Set(
    value
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
  );
}
