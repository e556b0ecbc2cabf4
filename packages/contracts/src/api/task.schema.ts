import type { FromSchema } from 'json-schema-to-ts';
import { METADATA_MAX_STRING, STORABLE_MAX_DEPTH, storableString } from './storable.js';

/** Spec 8.1: counted in Unicode code points (an emoji is one character). */
export const PROMPT_MAX_CHARS = 10_000;
export const WORKFLOW_MAX_STEPS = 50;
export const LIST_LIMIT_DEFAULT = 20;
export const LIST_LIMIT_MAX = 100;

export const TASK_STATUSES = ['pending', 'running', 'complete', 'failed', 'waiting', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const TERMINAL_STATUSES: readonly TaskStatus[] = ['complete', 'failed', 'cancelled'];

export const ENVIRONMENTS = ['test', 'live'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

const isoTimestamp = { type: 'string', format: 'date-time' } as const;
const taskId = { type: 'string', pattern: '^task_[A-Za-z0-9]+$' } as const;

export const metadataSchema = {
  type: 'object',
  maxProperties: 50,
  propertyNames: { maxLength: 40 },
} as const;

/**
 * Metadata as a request gives it: what the database can store (no NUL, no key starting with `$`
 * or holding `.`, nesting at most STORABLE_MAX_DEPTH deep, strings at most METADATA_MAX_STRING).
 */
export const metadataBodySchema = {
  ...metadataSchema,
  description:
    `Your own key-value data, echoed back. At most 50 top-level keys of at most 40 characters; objects and arrays nested at most ${STORABLE_MAX_DEPTH} deep; ` +
    `strings and keys at most ${METADATA_MAX_STRING} characters; no NUL character (U+0000); no key starting with "$" or containing ".".`,
  'x-storable': { max_depth: STORABLE_MAX_DEPTH, max_string_length: METADATA_MAX_STRING },
} as const;

/** POST /v1/tasks body. The 10,000 character limit is checked apart: it answers 422, not 400. */
export const createTaskBodySchema = {
  $id: 'CreateTaskBody',
  type: 'object',
  properties: {
    prompt: { type: 'string', minLength: 1, description: 'What to do, in plain language. No NUL character (U+0000).', ...storableString },
    user_id: {
      anyOf: [{ type: 'string', minLength: 1, maxLength: 256, ...storableString }, { type: 'null' }],
      description: 'Your id of the end user the task acts for. No NUL character (U+0000).',
    },
    metadata: metadataBodySchema,
    mode: { type: 'string', enum: ['live', 'test'] },
  },
  required: ['prompt'],
  additionalProperties: false,
} as const;
export type CreateTaskBody = FromSchema<typeof createTaskBodySchema>;

export const taskErrorSchema = {
  $id: 'TaskError',
  type: 'object',
  properties: {
    code: { type: 'string' },
    message: { type: 'string' },
    tool: { type: 'string' },
    recoverable: { type: 'boolean' },
    suggestion: { type: 'string' },
  },
  required: ['code', 'message', 'tool', 'recoverable'],
  additionalProperties: false,
} as const;
export type TaskError = FromSchema<typeof taskErrorSchema>;

/**
 * Why a task waits and what unblocks it (task.waiting's data, and `waiting` on a waiting task):
 * `auth_url` is a consent link for the task's end user, short-lived and single-use; reading the
 * task again gives a fresh one.
 */
export const waitingDataSchema = {
  type: 'object',
  properties: {
    reason: { type: 'string' },
    service: { type: 'string' },
    auth_url: { type: 'string', format: 'uri' },
    message: { type: 'string' },
  },
  required: ['reason', 'service', 'auth_url', 'message'],
  additionalProperties: false,
} as const;
export type WaitingData = FromSchema<typeof waitingDataSchema>;

/** GET /v1/tasks/:id (spec 2.1). */
export const taskSchema = {
  $id: 'Task',
  type: 'object',
  properties: {
    id: taskId,
    status: { type: 'string', enum: TASK_STATUSES },
    tool: { type: 'string' },
    created_at: isoTimestamp,
    completed_at: isoTimestamp,
    failed_at: isoTimestamp,
    result: { type: 'object' },
    error: taskErrorSchema,
    metadata: { type: 'object' },
    /** Only while status is `waiting` (like Stripe's `next_action`): what the task waits for. */
    waiting: {
      ...waitingDataSchema,
      description:
        "Only while status is waiting: what the task waits for (the task.waiting webhook's data). auth_url is a consent link for the task's end user: single-use, valid a few minutes, freshly issued on every GET; show it only to that user.",
    },
  },
  required: ['id', 'status', 'tool', 'created_at', 'metadata'],
  additionalProperties: false,
} as const;
export type Task = FromSchema<typeof taskSchema>;

/** POST /v1/tasks answer. */
export const createdTaskSchema = {
  $id: 'CreatedTask',
  type: 'object',
  properties: {
    id: taskId,
    status: { type: 'string', enum: TASK_STATUSES },
    tool: { type: 'string' },
    created_at: isoTimestamp,
    metadata: { type: 'object' },
  },
  required: ['id', 'status', 'tool', 'created_at', 'metadata'],
  additionalProperties: false,
} as const;
export type CreatedTask = FromSchema<typeof createdTaskSchema>;

export const taskListItemSchema = {
  $id: 'TaskListItem',
  type: 'object',
  properties: {
    id: taskId,
    status: { type: 'string', enum: TASK_STATUSES },
    tool: { type: 'string' },
    created_at: isoTimestamp,
    completed_at: isoTimestamp,
  },
  required: ['id', 'status', 'tool', 'created_at'],
  additionalProperties: false,
} as const;
export type TaskListItem = FromSchema<typeof taskListItemSchema>;

export const taskListSchema = {
  $id: 'TaskList',
  type: 'object',
  properties: {
    data: { type: 'array', items: taskListItemSchema },
    has_more: { type: 'boolean' },
  },
  required: ['data', 'has_more'],
  additionalProperties: false,
} as const;

export const listTasksQuerySchema = {
  $id: 'ListTasksQuery',
  type: 'object',
  properties: {
    status: { type: 'string', enum: TASK_STATUSES },
    user_id: { type: 'string', minLength: 1, maxLength: 256, ...storableString },
    limit: { type: 'integer', minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_DEFAULT },
    offset: { type: 'integer', minimum: 0, maximum: 1_000_000, default: 0 },
  },
  additionalProperties: false,
} as const;
export type ListTasksQuery = FromSchema<typeof listTasksQuerySchema>;

export const cancelledTaskSchema = {
  $id: 'CancelledTask',
  type: 'object',
  properties: {
    id: taskId,
    status: { const: 'cancelled' },
    cancelled_at: isoTimestamp,
  },
  required: ['id', 'status', 'cancelled_at'],
  additionalProperties: false,
} as const;
export type CancelledTask = FromSchema<typeof cancelledTaskSchema>;

export const STEP_STATUSES = ['complete', 'failed', 'skipped', 'cancelled'] as const;

export const traceStepSchema = {
  type: 'object',
  properties: {
    tool: { type: 'string' },
    action: { type: 'string' },
    status: { type: 'string', enum: STEP_STATUSES },
    duration_ms: { type: 'integer', minimum: 0 },
    note: { type: 'string' },
  },
  required: ['tool', 'action', 'status', 'duration_ms'],
  additionalProperties: false,
} as const;
export type TraceStep = FromSchema<typeof traceStepSchema>;

/** Which planner made a task's plan: `rules`, or `llm` with its model; `fallback_reason` when a configured model's plan was not used. */
/** Which planner made a task's plan: in its trace, and on the messages that carry a plan. */
export const plannerSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', enum: ['rules', 'llm'] },
    /** The model, when the LLM planner made the plan. */
    model: { type: 'string' },
    /** Why the configured LLM planner's plan was not used. */
    fallback_reason: { type: 'string' },
    /** Harmless values derived rather than read in the request (a subject, a title, a default length, a zone from a city). */
    derived: { type: 'array', items: { type: 'string', maxLength: 1000 }, maxItems: 100 },
  },
  required: ['name'],
  additionalProperties: false,
} as const;

export const tracePlannerSchema = { $id: 'TracePlanner', ...plannerSchema } as const;

/** A step as planned (a test-mode task's preview): what it would do, with its side-effect class and the required inputs it lacks. */
export const plannedStepSchema = {
  $id: 'PlannedStep',
  type: 'object',
  properties: {
    tool: { type: 'string' },
    action: { type: 'string' },
    side_effect: { type: 'string', enum: ['read', 'write', 'destructive'] },
    input: { type: 'object' },
    missing: { type: 'array', items: { type: 'string' } },
  },
  required: ['tool', 'action', 'side_effect', 'input', 'missing'],
  additionalProperties: false,
} as const;

export const traceSchema = {
  $id: 'TaskTrace',
  type: 'object',
  properties: {
    task_id: taskId,
    steps: { type: 'array', items: traceStepSchema },
    total_duration_ms: { type: 'integer', minimum: 0 },
    /** Which planner made the plan (absent for tasks stored before it was recorded). */
    planner: tracePlannerSchema,
    /** A test-mode task's planned steps (nothing runs, so `steps` is empty). */
    planned_steps: { type: 'array', items: plannedStepSchema },
  },
  required: ['task_id', 'steps', 'total_duration_ms'],
  additionalProperties: false,
} as const;
export type TaskTrace = FromSchema<typeof traceSchema>;

export const errorEnvelopeSchema = {
  $id: 'ErrorEnvelope',
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        /** What would make the request work, in the caller's terms (refused creates: no_matching_tool, missing_input, unsupported_request). */
        suggestion: { type: 'string' },
        /** missing_input: the required inputs the request lacks, e.g. "step 1 (gmail.send_email): subject". */
        missing: { type: 'array', items: { type: 'string' } },
      },
      required: ['code', 'message'],
      additionalProperties: false,
    },
  },
  required: ['error'],
  additionalProperties: false,
} as const;
