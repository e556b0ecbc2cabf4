import type { FromSchema } from 'json-schema-to-ts';
import { traceStepSchema } from '../api/task.schema.js';
import { HTTP_METHODS } from '../api/tool.schema.js';
import { env, id, nullableString } from './fields.js';
import { EXCHANGES, type MessageDefinition } from './topology.js';

/** Orchestrator → executor: run one step of a task's workflow. */
export const stepRunSchema = {
  type: 'object',
  properties: {
    task_id: id,
    account_id: id,
    environment: env,
    user_id: nullableString,
    step_index: { type: 'integer', minimum: 0 },
    step_count: { type: 'integer', minimum: 1 },
    tool: id,
    action: id,
    input: { type: 'object' },
    /** Stable across redeliveries: task id + step index. */
    idempotency_key: id,
    timeout_ms: { type: 'integer', minimum: 1 },
    /** A custom tool's action, as registered when the task was planned (the executor has no tool store). */
    custom: {
      type: 'object',
      properties: {
        base_url: { type: 'string' },
        method: { type: 'string', enum: HTTP_METHODS },
        path: { type: 'string' },
        input_schema: { type: 'object' },
        /** The tool's OAuth service (its name), or null: no user authorization. */
        service: nullableString,
        scopes: { type: 'array', items: { type: 'string' } },
      },
      required: ['base_url', 'method', 'path', 'input_schema', 'service', 'scopes'],
      additionalProperties: false,
    },
  },
  required: [
    'task_id',
    'account_id',
    'environment',
    'user_id',
    'step_index',
    'step_count',
    'tool',
    'action',
    'input',
    'idempotency_key',
    'timeout_ms',
  ],
  additionalProperties: false,
} as const;
export type StepRun = FromSchema<typeof stepRunSchema>;

/** Gateway → executor, request/reply: the trace of one task (spec 2.3). */
export const traceGetSchema = {
  type: 'object',
  properties: { task_id: id, account_id: id, environment: env },
  required: ['task_id', 'account_id', 'environment'],
  additionalProperties: false,
} as const;
export type TraceGet = FromSchema<typeof traceGetSchema>;

/** The steps the executor ran, in execution order; the gateway adds what the task's read model knows. */
export const traceGetReplySchema = {
  type: 'object',
  properties: {
    ok: { const: true },
    trace: {
      type: 'object',
      properties: {
        task_id: id,
        steps: { type: 'array', items: traceStepSchema },
        total_duration_ms: { type: 'integer', minimum: 0 },
      },
      required: ['task_id', 'steps', 'total_duration_ms'],
      additionalProperties: false,
    },
  },
  required: ['ok', 'trace'],
  additionalProperties: false,
} as const;
export type TraceGetReply = FromSchema<typeof traceGetReplySchema>;

export const EXECUTOR_MESSAGES = {
  'step.run': { exchange: EXCHANGES.commands, routingKey: 'executor.steps', partitioned: false, schema: stepRunSchema },
  'trace.get': {
    exchange: EXCHANGES.commands,
    routingKey: 'executor.queries',
    partitioned: false,
    schema: traceGetSchema,
    reply: traceGetReplySchema,
  },
} as const satisfies Record<string, MessageDefinition>;
