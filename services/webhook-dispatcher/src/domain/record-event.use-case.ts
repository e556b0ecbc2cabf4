import type { Envelope, TaskEvent } from '@tes/contracts';
import type { Logger } from '@tes/logger';
import type { EndpointRepository } from '../store/endpoint.repository.js';
import type { EventDoc, EventRepository, EventStatus } from '../store/event.repository.js';
import { eventIdOf, toWebhook } from './webhook-event.js';

export interface RecordEventDeps {
  events: EventRepository;
  endpoints: EndpointRepository;
  logger: Logger;
}

export interface RecordResult {
  eventId: string;
  /** False when the message had been stored before (a redelivery or a republish). */
  inserted: boolean;
  status: EventStatus;
}

/**
 * Stores a task event once. Webhook kinds become `pending` (due now) or `no_endpoint`;
 * the other kinds are kept as `skipped` markers, so the next version of the task knows its
 * predecessor has arrived. Throws UnmappableEventError for a webhook kind without its data.
 */
export async function recordTaskEvent(
  message: TaskEvent,
  envelope: Pick<Envelope, 'id' | 'occurred_at'>,
  deps: RecordEventDeps,
  now = new Date(),
): Promise<RecordResult> {
  const eventId = eventIdOf(envelope.id);
  const { task } = message;
  const webhook = toWebhook(message, envelope.occurred_at);
  let status: EventStatus = 'skipped';
  if (webhook) {
    const endpoint = await deps.endpoints.get(task.account_id, task.environment);
    status = endpoint ? 'pending' : 'no_endpoint';
  }
  const doc: EventDoc = {
    _id: eventId,
    account_id: task.account_id,
    environment: task.environment,
    task_id: task.id,
    version: message.version,
    kind: message.kind,
    event: webhook?.event ?? null,
    body: webhook?.body ?? null,
    occurred_at: envelope.occurred_at,
    received_at: now,
    status,
    attempts_made: 0,
    schedule_base: 0,
    next_attempt_at: status === 'pending' ? now : null,
    delivered_at: null,
    last_status_code: null,
    last_error: status === 'no_endpoint' ? 'no webhook endpoint configured' : null,
    updated_at: now,
  };
  const inserted = await deps.events.insert(doc);
  if (!inserted) {
    deps.logger.debug('task event already stored', { event_id: eventId, task_id: task.id });
    const existing = await deps.events.get(eventId);
    return { eventId, inserted, status: existing?.status ?? status };
  }
  if (status === 'no_endpoint') {
    deps.logger.info('no webhook endpoint: event kept as no_endpoint', {
      event_id: eventId,
      task_id: task.id,
      account_id: task.account_id,
      environment: task.environment,
    });
  }
  return { eventId, inserted, status };
}
