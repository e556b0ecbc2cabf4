import type { FromSchema } from 'json-schema-to-ts';
import { TASK_STATUSES, taskErrorSchema } from '../api/task.schema.js';
import { progressDataSchema, waitingDataSchema } from '../api/webhook.schema.js';
import { env, id, nullableString, ts } from './fields.js';
import { plannerInfoSchema } from './orchestrator.js';
import { EXCHANGES, type MessageDefinition } from './topology.js';

/** Events on `tes.events`: published once, received by every queue bound to them. */

export const TASK_EVENT_KINDS = ['created', 'started', 'progress', 'waiting', 'resumed', 'completed', 'failed', 'cancelled'] as const;
export type TaskEventKind = (typeof TASK_EVENT_KINDS)[number];

/** Orchestrator → everyone: a snapshot of the task after the change plus what changed; `version` orders them per task. */
export const taskEventSchema = {
  type: 'object',
  properties: {
    kind: { type: 'string', enum: TASK_EVENT_KINDS },
    version: { type: 'integer', minimum: 1 },
    task: {
      type: 'object',
      properties: {
        id,
        account_id: id,
        environment: env,
        user_id: nullableString,
        status: { type: 'string', enum: TASK_STATUSES },
        tool: { type: 'string' },
        metadata: { type: 'object' },
        created_at: ts,
        completed_at: ts,
        failed_at: ts,
        cancelled_at: ts,
        result: { type: 'object' },
        error: taskErrorSchema,
        /** Which planner made the task's plan (absent for a task stored before it was recorded). */
        planner: plannerInfoSchema,
      },
      required: ['id', 'account_id', 'environment', 'user_id', 'status', 'tool', 'metadata', 'created_at'],
      additionalProperties: false,
    },
    progress: progressDataSchema,
    waiting: waitingDataSchema,
  },
  required: ['kind', 'version', 'task'],
  additionalProperties: false,
  // What each public webhook needs is present: the dispatcher can always render it.
  allOf: [
    { if: { properties: { kind: { const: 'completed' } } }, then: { properties: { task: { required: ['result', 'completed_at'] } } } },
    { if: { properties: { kind: { const: 'failed' } } }, then: { properties: { task: { required: ['error', 'failed_at'] } } } },
    { if: { properties: { kind: { const: 'progress' } } }, then: { required: ['progress'] } },
    { if: { properties: { kind: { const: 'waiting' } } }, then: { required: ['waiting'] } },
  ],
} as const;
/** Versions of one task's events are 1, 2, 3, … without gaps: consumers may wait for a missing one. */
export type TaskEvent = FromSchema<typeof taskEventSchema>;

/**
 * A dispatcher replica or the operator CLI → every dispatcher replica: an account environment's
 * webhook endpoint or signing secret changed, drop the cached copy at once (published after the
 * change is stored).
 */
export const webhookConfigChangedSchema = {
  type: 'object',
  properties: { account_id: id, environment: env },
  required: ['account_id', 'environment'],
  additionalProperties: false,
} as const;
export type WebhookConfigChanged = FromSchema<typeof webhookConfigChangedSchema>;

/** An account or one of its API keys changed (key revoked, account disabled or enabled, limits set): gateways drop what they cached of it. */
export const gatewayCredentialsChangedSchema = {
  type: 'object',
  properties: { account_id: id },
  required: ['account_id'],
  additionalProperties: false,
} as const;
export type GatewayCredentialsChanged = FromSchema<typeof gatewayCredentialsChangedSchema>;

export const EVENT_MESSAGES = {
  'task.event': { exchange: EXCHANGES.events, routingKey: 'task.event', partitioned: true, schema: taskEventSchema },
  'webhook.config_changed': {
    exchange: EXCHANGES.events,
    routingKey: 'webhook.config_changed',
    partitioned: false,
    schema: webhookConfigChangedSchema,
  },
  'gateway.credentials_changed': {
    exchange: EXCHANGES.events,
    routingKey: 'gateway.credentials_changed',
    partitioned: false,
    schema: gatewayCredentialsChangedSchema,
  },
} as const satisfies Record<string, MessageDefinition>;
