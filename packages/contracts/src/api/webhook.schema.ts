import type { FromSchema } from 'json-schema-to-ts';
import { taskErrorSchema } from './task.schema.js';

export const WEBHOOK_EVENTS = ['task.complete', 'task.failed', 'task.progress', 'task.waiting'] as const;
export type WebhookEventName = (typeof WEBHOOK_EVENTS)[number];

/** Spec 6.1 envelope; `data` per kind below. */
export const webhookEventSchema = {
  $id: 'WebhookEvent',
  type: 'object',
  properties: {
    event: { type: 'string', enum: WEBHOOK_EVENTS },
    task_id: { type: 'string' },
    timestamp: { type: 'string', format: 'date-time' },
    data: { type: 'object' },
  },
  required: ['event', 'task_id', 'timestamp', 'data'],
  additionalProperties: false,
} as const;
export type WebhookEvent = FromSchema<typeof webhookEventSchema>;

export const progressDataSchema = {
  type: 'object',
  properties: {
    step: { type: 'string' },
    tool: { type: 'string' },
    message: { type: 'string' },
    progress_pct: { type: 'number', minimum: 0, maximum: 100 },
  },
  required: ['step', 'tool', 'message', 'progress_pct'],
  additionalProperties: false,
} as const;
export type ProgressData = FromSchema<typeof progressDataSchema>;

/** task.waiting's data: the same object `GET /v1/tasks/:id` shows as `waiting` (defined with the task). */
export { waitingDataSchema, type WaitingData } from './task.schema.js';

export const failedDataSchema = {
  type: 'object',
  properties: { error: taskErrorSchema },
  required: ['error'],
  additionalProperties: false,
} as const;
