import type { FromSchema } from 'json-schema-to-ts';
import { commonEnv } from '@tes/config';

export const configSchema = {
  type: 'object',
  properties: {
    ...commonEnv,
    OPS_PORT: { ...commonEnv.OPS_PORT, default: 8080 },
    PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 8443 },
    HTTP_PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 8081 },
    HOST: { type: 'string', default: '127.0.0.1' },
    TLS_CERT_FILE: { type: 'string' },
    TLS_KEY_FILE: { type: 'string' },
    /** Addresses whose X-Forwarded-Proto: https is believed on the plain listener. */
    TRUSTED_PROXIES: { type: 'string', default: '' },
    MONGO_DB: { type: 'string', minLength: 1, default: 'tes_gateway' },
    AMQP_NAMESPACE: { type: 'string', default: '' },
    REQUEST_TIMEOUT_MS: { type: 'integer', minimum: 100, default: 5000 },
    /**
     * How long a create waits for the orchestrator's answer, then 503. The default answers as fast
     * as any other request; with an LLM planner configured, raise it to cover the model's call
     * (the orchestrator's LLM_TIMEOUT_MS, e.g. 25000 for its default 20 s): the orchestrator gives
     * the model only what is left of this wait, falling back to the rules planner in time. Keep it
     * below IDEMPOTENCY_LEASE_MS.
     */
    CREATE_TIMEOUT_MS: { type: 'integer', minimum: 100, default: 5000 },
    /**
     * Load shedding: while an account's oldest create still unanswered by the orchestrator was sent
     * longer ago than this, its new creates are answered 503 at once; 0 never sheds.
     */
    CREATE_SHED_AFTER_MS: { type: 'integer', minimum: 0, default: 1000 },
    /** Signs dashboard sessions; required in production, generated per process otherwise. */
    DASHBOARD_SESSION_SECRET: { type: 'string', minLength: 32 },
    /** `production` refuses to start without DASHBOARD_SESSION_SECRET. */
    NODE_ENV: { type: 'string', default: 'development' },
    BODY_LIMIT_BYTES: { type: 'integer', minimum: 1024, default: 262144 },
    /** An Idempotency-Key record still in progress after this long counts as abandoned (its gateway died). */
    IDEMPOTENCY_LEASE_MS: { type: 'integer', minimum: 1000, default: 30000 },
    /** How often expired idempotency records and old rate-limit windows are deleted (no TTL index on FerretDB). */
    SWEEP_INTERVAL_MS: { type: 'integer', minimum: 1000, default: 60000 },
    /**
     * How long an API key and its account read from the database are reused, while this replica
     * follows gateway.credentials_changed (a revocation reaches it at once); 0 reads them on every
     * request. The bound for a change whose announcement was lost (a half-open broker connection).
     */
    AUTH_CACHE_MS: { type: 'integer', minimum: 0, maximum: 3600000, default: 10000 },
  },
  required: [
    'AMQP_URL',
    'MONGO_URL',
    'OPS_PORT',
    'PORT',
    'HTTP_PORT',
    'HOST',
    'TRUSTED_PROXIES',
    'MONGO_DB',
    'MONGO_MAX_POOL_SIZE',
    'AMQP_NAMESPACE',
    'REQUEST_TIMEOUT_MS',
    'CREATE_TIMEOUT_MS',
    'CREATE_SHED_AFTER_MS',
    'BODY_LIMIT_BYTES',
    'IDEMPOTENCY_LEASE_MS',
    'SWEEP_INTERVAL_MS',
    'AUTH_CACHE_MS',
    'NODE_ENV',
    'LOG_LEVEL',
    'SHUTDOWN_TIMEOUT_MS',
    'AMQP_HEARTBEAT_S',
  ],
} as const;

export type Config = FromSchema<typeof configSchema>;
