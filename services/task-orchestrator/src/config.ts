import type { FromSchema } from 'json-schema-to-ts';
import { commonEnv } from '@tes/config';

export const configSchema = {
  type: 'object',
  properties: {
    ...commonEnv,
    OPS_PORT: { ...commonEnv.OPS_PORT, default: 8090 },
    MONGO_DB: { type: 'string', minLength: 1, default: 'tes_task_orchestrator' },
    AMQP_NAMESPACE: { type: 'string', default: '' },
    PREFETCH: { type: 'integer', minimum: 1, maximum: 1000, default: 32 },
    STEP_TIMEOUT_MS: { type: 'integer', minimum: 100, default: 30000 },
    /** A running task untouched for this long is looked at again by the reaper. */
    STALL_AFTER_MS: { type: 'integer', minimum: 1000, default: 60000 },
    REAPER_INTERVAL_MS: { type: 'integer', minimum: 100, default: 10000 },
    /**
     * A step without a result this long after it was first sent (the reaper's re-dispatches
     * included) is given up: the task fails with `service_unavailable` (recoverable).
     */
    STALL_GIVE_UP_AFTER_MS: { type: 'integer', minimum: 1000, default: 600000 },
    /** With the LLM planner: model calls in flight at once on this replica (the planner queue's prefetch). */
    PLANNER_CONCURRENCY: { type: 'integer', minimum: 1, maximum: 1000, default: 16 },
    /** The LLM planner (packages/planner llmOptionsFromEnv): on when LLM_BASE_URL, LLM_API_KEY and LLM_MODEL are all set. */
    LLM_BASE_URL: { type: 'string' },
    LLM_API_KEY: { type: 'string' },
    LLM_MODEL: { type: 'string' },
    /** The whole chat-completions request; 20000 when unset. */
    LLM_TIMEOUT_MS: { type: 'number', exclusiveMinimum: 0 },
  },
  required: [
    'AMQP_URL',
    'MONGO_URL',
    'OPS_PORT',
    'MONGO_DB',
    'MONGO_MAX_POOL_SIZE',
    'AMQP_NAMESPACE',
    'PREFETCH',
    'LOG_LEVEL',
    'SHUTDOWN_TIMEOUT_MS',
    'AMQP_HEARTBEAT_S',
    'STEP_TIMEOUT_MS',
    'STALL_AFTER_MS',
    'REAPER_INTERVAL_MS',
    'STALL_GIVE_UP_AFTER_MS',
    'PLANNER_CONCURRENCY',
  ],
} as const;

export type Config = FromSchema<typeof configSchema>;
