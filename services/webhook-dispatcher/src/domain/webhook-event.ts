import type { TaskEvent, TaskEventKind, WebhookEventName } from '@tes/contracts';

/** The four public events (spec 6.2); the other task event kinds produce no webhook. */
export const WEBHOOK_OF_KIND: Partial<Record<TaskEventKind, WebhookEventName>> = {
  completed: 'task.complete',
  failed: 'task.failed',
  progress: 'task.progress',
  waiting: 'task.waiting',
};

export class UnmappableEventError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnmappableEventError';
  }
}

export interface WebhookPayload {
  event: WebhookEventName;
  /** Exactly the bytes that are signed and sent, on every attempt. */
  body: string;
}

/**
 * Spec 6.1 body `{"event","task_id","timestamp","data"}` for a task event, or null when the
 * kind has no webhook. `timestamp` is when the change happened (the envelope's occurred_at).
 */
export function toWebhook(message: TaskEvent, occurredAt: string): WebhookPayload | null {
  const event = WEBHOOK_OF_KIND[message.kind];
  if (!event) return null;
  const body = JSON.stringify({ event, task_id: message.task.id, timestamp: occurredAt, data: dataOf(message) });
  return { event, body };
}

function dataOf(message: TaskEvent): Record<string, unknown> {
  switch (message.kind) {
    case 'completed':
      return message.task.result ?? {};
    case 'failed':
      if (!message.task.error) throw new UnmappableEventError(`failed event of ${message.task.id} has no task.error`);
      return { error: message.task.error };
    case 'progress':
      if (!message.progress) throw new UnmappableEventError(`progress event of ${message.task.id} has no progress`);
      return message.progress;
    case 'waiting':
      if (!message.waiting) throw new UnmappableEventError(`waiting event of ${message.task.id} has no waiting`);
      return message.waiting;
    default:
      throw new UnmappableEventError(`kind ${message.kind} has no webhook`);
  }
}

/** The webhook's id (`webhook-id`, the dedup key): stable for one message, whatever its redeliveries. */
export function eventIdOf(messageId: string): string {
  return messageId.startsWith('evt_') ? messageId : `evt_${messageId}`;
}
