import type { FromSchema } from 'json-schema-to-ts';
import { TASK_STATUSES, metadataSchema, plannerSchema, taskErrorSchema } from '../api/task.schema.js';
import { toolViewSchema, TOOL_NAME_PATTERN } from '../api/tool.schema.js';
import { waitingDataSchema } from '../api/webhook.schema.js';
import { acceptedOrRefused, doneReplySchema, env, id, nullableString, ts } from './fields.js';
import { EXCHANGES, type MessageDefinition } from './topology.js';

/** Commands to the orchestrator, partitioned by account: each account's messages are handled in order by one writer. */

/** Which planner made a plan (recorded with the task, shown in its trace). */
export const plannerInfoSchema = plannerSchema;
export type PlannerInfoData = FromSchema<typeof plannerInfoSchema>;

/** A checked plan, made outside the partition (the LLM planner) and attached to the task.create it hands back. */
export const taskPlanSchema = {
  type: 'object',
  properties: {
    tool: id,
    steps: {
      type: 'array',
      items: {
        type: 'object',
        properties: { tool: id, action: id, input: { type: 'object' } },
        required: ['tool', 'action', 'input'],
        additionalProperties: false,
      },
    },
    planner: plannerInfoSchema,
  },
  required: ['tool', 'steps', 'planner'],
  additionalProperties: false,
} as const;

export const taskCreateSchema = {
  type: 'object',
  properties: {
    task_id: id,
    account_id: id,
    environment: env,
    prompt: { type: 'string', minLength: 1 },
    user_id: nullableString,
    metadata: metadataSchema,
    mode: { type: 'string', enum: ['live', 'test'] },
    created_at: ts,
    concurrency_limit: { type: 'integer', minimum: 1 },
    /**
     * Set only by the orchestrator's planner consumer (task.plan): the plan the model made, which
     * the partition's writer records as it is. The gateway never sends one.
     */
    plan: taskPlanSchema,
  },
  required: ['task_id', 'account_id', 'environment', 'prompt', 'user_id', 'metadata', 'mode', 'created_at', 'concurrency_limit'],
  additionalProperties: false,
} as const;
export type TaskCreate = FromSchema<typeof taskCreateSchema>;

export const taskCancelSchema = {
  type: 'object',
  properties: { task_id: id, account_id: id, environment: env },
  required: ['task_id', 'account_id', 'environment'],
  additionalProperties: false,
} as const;
export type TaskCancel = FromSchema<typeof taskCancelSchema>;

/**
 * Asks the partition's single writer to look at a task again (relay its outbox,
 * re-dispatch a stalled step). Sweepers send this instead of writing themselves.
 */
export const taskReconcileSchema = {
  type: 'object',
  properties: {
    task_id: id,
    account_id: id,
    reason: { type: 'string' },
    /** The task version the sender saw: a task changed since is not re-dispatched. */
    version: { type: 'integer', minimum: 0 },
  },
  required: ['task_id', 'account_id', 'reason'],
  additionalProperties: false,
} as const;
export type TaskReconcile = FromSchema<typeof taskReconcileSchema>;

/** The task as created (version 1); `planner` is for the gateway's read model. */
export const taskCreatedViewSchema = {
  type: 'object',
  properties: {
    id,
    status: { type: 'string', enum: TASK_STATUSES },
    tool: { type: 'string' },
    created_at: ts,
    metadata: { type: 'object' },
    planner: plannerInfoSchema,
  },
  required: ['id', 'status', 'tool', 'created_at', 'metadata'],
  additionalProperties: false,
} as const;
export type TaskCreatedView = FromSchema<typeof taskCreatedViewSchema>;

export const taskCancelledViewSchema = {
  type: 'object',
  properties: { id, status: { const: 'cancelled' }, cancelled_at: ts },
  required: ['id', 'status', 'cancelled_at'],
  additionalProperties: false,
} as const;
export type TaskCancelledView = FromSchema<typeof taskCancelledViewSchema>;

/**
 * Answer to task.create and task.cancel (one schema: the partition's writer answers both through
 * one callback): the task's new version and view, or an API error code. A refused create
 * (no_matching_tool, missing_input, unsupported_request) says what would make the request clear
 * (`suggestion`) and, for missing_input, what is missing.
 */
export const taskReplySchema = {
  anyOf: [
    {
      type: 'object',
      properties: {
        ok: { const: true },
        version: { type: 'integer', minimum: 0 },
        task: { anyOf: [taskCreatedViewSchema, taskCancelledViewSchema] },
      },
      required: ['ok', 'version', 'task'],
      additionalProperties: false,
    },
    {
      type: 'object',
      properties: {
        ok: { const: false },
        error: {
          type: 'object',
          properties: {
            code: { type: 'string' },
            message: { type: 'string' },
            suggestion: { type: 'string' },
            missing: { type: 'array', items: { type: 'string' } },
          },
          required: ['code', 'message'],
          additionalProperties: false,
        },
      },
      required: ['ok', 'error'],
      additionalProperties: false,
    },
  ],
} as const;
export type TaskReply = FromSchema<typeof taskReplySchema>;

export const stepResultSchema = {
  type: 'object',
  properties: {
    task_id: id,
    account_id: id,
    environment: env,
    step_index: { type: 'integer', minimum: 0 },
    outcome: { type: 'string', enum: ['complete', 'failed', 'needs_authorization'] },
    output: { type: 'object' },
    error: taskErrorSchema,
    authorization: waitingDataSchema,
    duration_ms: { type: 'integer', minimum: 0 },
    note: { type: 'string' },
  },
  required: ['task_id', 'account_id', 'environment', 'step_index', 'outcome', 'duration_ms'],
  additionalProperties: false,
} as const;
export type StepResult = FromSchema<typeof stepResultSchema>;

/** Vault → orchestrator partition: a user's consent flow for a service ended. */
export const connectionChangedSchema = {
  type: 'object',
  properties: {
    account_id: id,
    environment: env,
    user_id: id,
    service: id,
    outcome: { type: 'string', enum: ['authorized', 'denied', 'revoked'] },
    scopes: { type: 'array', items: { type: 'string' } },
  },
  required: ['account_id', 'environment', 'user_id', 'service', 'outcome'],
  additionalProperties: false,
} as const;
export type ConnectionChanged = FromSchema<typeof connectionChangedSchema>;

// ---- custom tools (gateway → orchestrator partition for the tool; its OAuth client goes to the vault) ----

/** Creates or replaces a tool of the account's environment. */
export const toolRegisterSchema = {
  type: 'object',
  properties: { account_id: id, environment: env, tool: toolViewSchema },
  required: ['account_id', 'environment', 'tool'],
  additionalProperties: false,
} as const;
export type ToolRegister = FromSchema<typeof toolRegisterSchema>;

export const toolRegisterReplySchema = acceptedOrRefused({ created: { type: 'boolean' }, tool: toolViewSchema }, ['created', 'tool']);
export type ToolRegisterReply = FromSchema<typeof toolRegisterReplySchema>;

export const toolListRequestSchema = {
  type: 'object',
  properties: { account_id: id, environment: env },
  required: ['account_id', 'environment'],
  additionalProperties: false,
} as const;
export type ToolListRequest = FromSchema<typeof toolListRequestSchema>;

export const toolListReplySchema = acceptedOrRefused({ tools: { type: 'array', items: toolViewSchema } }, ['tools']);
export type ToolListReply = FromSchema<typeof toolListReplySchema>;

/** Answered {ok: true}, or a refusal `not_found` when there is no such tool. */
export const toolDeleteSchema = {
  type: 'object',
  properties: { account_id: id, environment: env, name: { type: 'string', pattern: TOOL_NAME_PATTERN } },
  required: ['account_id', 'environment', 'name'],
  additionalProperties: false,
} as const;
export type ToolDelete = FromSchema<typeof toolDeleteSchema>;

// ---- the dashboard's task page (gateway → orchestrator partition, read only) ----

/** What a task was asked and planned, and where it stands: the prompt, each step's input as sent, the current step. */
export const taskInspectSchema = {
  type: 'object',
  properties: { task_id: id, account_id: id, environment: env },
  required: ['task_id', 'account_id', 'environment'],
  additionalProperties: false,
} as const;
export type TaskInspect = FromSchema<typeof taskInspectSchema>;

export const taskInspectionSchema = {
  type: 'object',
  properties: {
    prompt: { type: 'string' },
    mode: { type: 'string', enum: ['live', 'test'] },
    status: { type: 'string', enum: TASK_STATUSES },
    /** The plan: each step's input as it is sent to the executor (`{{steps.N.output…}}` references unresolved). */
    steps: {
      type: 'array',
      items: {
        type: 'object',
        properties: { tool: { type: 'string' }, action: { type: 'string' }, input: { type: 'object' } },
        required: ['tool', 'action', 'input'],
        additionalProperties: false,
      },
    },
    /** Index of the step running now (or next to run). */
    current_step: { type: 'integer', minimum: 0 },
    /** When the current step was first sent (re-sends of a stalled step keep it). */
    step_dispatched_at: ts,
    started_at: ts,
    /** While waiting: the service whose consent the current step needs. */
    waiting_on: nullableString,
    concurrency_limit: { type: 'integer', minimum: 0 },
    /** The timeout given to the executor with each step. */
    step_timeout_ms: { type: 'integer', minimum: 1 },
  },
  required: ['prompt', 'mode', 'status', 'steps', 'current_step', 'waiting_on', 'concurrency_limit', 'step_timeout_ms'],
  additionalProperties: false,
} as const;
export type TaskInspection = FromSchema<typeof taskInspectionSchema>;

/** The inspection, or a refusal `task_not_found` (no such task in this account environment). */
export const taskInspectReplySchema = acceptedOrRefused({ task: taskInspectionSchema }, ['task']);
export type TaskInspectReply = FromSchema<typeof taskInspectReplySchema>;

const partition = { exchange: EXCHANGES.commands, routingKey: 'orchestrator', partitioned: true } as const;

export const ORCHESTRATOR_MESSAGES = {
  'task.create': { ...partition, schema: taskCreateSchema, reply: taskReplySchema },
  'task.cancel': { ...partition, schema: taskCancelSchema, reply: taskReplySchema },
  'step.result': { ...partition, schema: stepResultSchema },
  'task.reconcile': { ...partition, schema: taskReconcileSchema },
  /** A create handed on by its partition to be planned by the model, by any orchestrator replica (request/reply kept). */
  'task.plan': {
    exchange: EXCHANGES.commands,
    routingKey: 'orchestrator.planner',
    partitioned: false,
    schema: taskCreateSchema,
    reply: taskReplySchema,
  },
  'connection.changed': { ...partition, schema: connectionChangedSchema },
  'tool.register': { ...partition, schema: toolRegisterSchema, reply: toolRegisterReplySchema },
  'tool.list': { ...partition, schema: toolListRequestSchema, reply: toolListReplySchema },
  'tool.delete': { ...partition, schema: toolDeleteSchema, reply: doneReplySchema },
  'task.inspect': { ...partition, schema: taskInspectSchema, reply: taskInspectReplySchema },
} as const satisfies Record<string, MessageDefinition>;
