import type { Envelope, TaskEvent } from '@tes/contracts';
import type { Logger } from '@tes/logger';
import type { DeliveryConfig, EventKeyStore, EventStore, InsertOutcome, PendingStore } from './ports.js';
import { isUnstoredFirst, type EventDoc, type EventStatus, type PendingDoc, type Stored } from './stored-event.js';
import { eventIdOf, toWebhook } from './webhook-event.js';

/**
 * Pending documents stored together share a tag, by groups of this size: they are removed with
 * `{tag, _id: {$in}}`, which FerretDB v1 answers by reading every document of the tag (it pushes
 * the equality down to PostgreSQL, not the `$in`), so small groups keep each removal cheap.
 */
const TAG_SIZE = 16;

export interface RecordEventDeps {
  events: EventStore;
  pending: PendingStore;
  eventKeys: EventKeyStore;
  config: Pick<DeliveryConfig, 'endpoint'>;
  logger: Logger;
  /** A lease: until then, only the replica that stored a pending event delivers it (unless it is found gone). */
  handOffMs: number;
  /** Names this replica in the fast-lane events it stores: they are taken over once its heartbeat stops. */
  holder: string;
}

export interface RecordResult {
  eventId: string;
  /** False when the message had been stored before (a redelivery or a republish). */
  inserted: boolean;
  status: EventStatus;
}

/** One message to store: mapped already (an unmappable one never gets here). */
export interface IncomingEvent {
  message: TaskEvent;
  envelope: Pick<Envelope, 'id' | 'occurred_at'>;
}

interface Prepared {
  eventId: string;
  pending: PendingDoc | null;
  final: EventDoc | null;
}

/**
 * Stores a batch of task events, each once, in queue order:
 * - a webhook kind of an environment with an endpoint becomes a pending document (fast lane:
 *   this replica delivers it), then its dedup key is inserted; a key that exists already means
 *   the message was stored before, and the pending document just inserted is taken back;
 * - a webhook kind without an endpoint is stored in `events` as `no_endpoint` (and keyed);
 * - the other kinds are stored in `events` as `skipped` markers, so the next version of the
 *   task knows its predecessor has arrived; except a task's first event, `created`
 *   (isUnstoredFirst), which nothing waits for: it is only noted in this replica's memory.
 * At most three inserts per batch, whatever its size. Throws if the database fails (the caller retries).
 * Returns the results and what the scheduler should take.
 */
export async function recordTaskEvents(
  items: readonly IncomingEvent[],
  deps: RecordEventDeps,
  tag: string,
  now = new Date(),
): Promise<{ results: RecordResult[]; stored: Stored[] }> {
  const all = await Promise.all(items.map((item, i) => prepare(item, deps, `${tag}.${Math.floor(i / TAG_SIZE)}`, now)));
  // The same message twice in one batch (a quick redelivery): only the first one is written.
  const firstIndex = new Map<string, number>();
  all.forEach((p, i) => {
    if (!firstIndex.has(p.eventId)) firstIndex.set(p.eventId, i);
  });
  const prepared = all.filter((p, i) => firstIndex.get(p.eventId) === i);
  const pendingDocs = prepared.flatMap((p) => (p.pending ? [p.pending] : []));
  const finalDocs = prepared.flatMap((p) => (p.final && !isUnstoredFirst(p.final) ? [p.final] : []));
  const [pendingOut, finalOut] = await Promise.all([deps.pending.insertMany(pendingDocs), deps.events.insertMany(finalDocs)]);
  const outcome = new Map<string, InsertOutcome>();
  pendingDocs.forEach((d, i) => outcome.set(d._id, settledOrThrow(pendingOut[i])));
  finalDocs.forEach((d, i) => outcome.set(d._id, settledOrThrow(finalOut[i])));

  // Keys of the webhook events (pending or no_endpoint); a duplicate key is a duplicate message.
  const keyed = prepared.filter((p) => p.pending || p.final?.status === 'no_endpoint').map((p) => p.eventId);
  const keyOut = await deps.eventKeys.insertMany(keyed, now);
  const keyOutcome = new Map(keyed.map((id, i) => [id, settledOrThrow(keyOut[i])]));

  const resultOf = new Map<string, RecordResult>();
  const stored: Stored[] = [];
  for (const p of prepared) {
    const inserted = outcome.get(p.eventId) === 'inserted' && keyOutcome.get(p.eventId) !== 'duplicate';
    if (p.pending) {
      if (outcome.get(p.eventId) === 'inserted' && !inserted) await deps.pending.removeOwn(p.eventId, p.pending.tag);
      if (inserted) stored.push({ kind: 'pending', doc: p.pending });
      resultOf.set(p.eventId, { eventId: p.eventId, inserted, status: 'pending' });
    } else if (p.final && isUnstoredFirst(p.final)) {
      // Nothing stored, so nothing tells a redelivery apart: noting it again in memory is harmless.
      stored.push({ kind: 'final', doc: p.final });
      resultOf.set(p.eventId, { eventId: p.eventId, inserted: true, status: 'skipped' });
      continue;
    } else if (p.final) {
      if (inserted) stored.push({ kind: 'final', doc: p.final });
      resultOf.set(p.eventId, { eventId: p.eventId, inserted, status: p.final.status });
    }
    if (!inserted) deps.logger.debug('task event already stored', { event_id: p.eventId });
    else if (p.final?.status === 'no_endpoint') {
      deps.logger.info('no webhook endpoint: event kept as no_endpoint', {
        event_id: p.eventId,
        task_id: p.final.task_id,
        account_id: p.final.account_id,
        environment: p.final.environment,
      });
    }
  }
  const results = all.map((p, i) => {
    const r = resultOf.get(p.eventId) as RecordResult;
    return firstIndex.get(p.eventId) === i ? r : { ...r, inserted: false };
  });
  return { results, stored };
}

function settledOrThrow(r: InsertOutcome | Error | undefined): InsertOutcome {
  if (r instanceof Error) throw r;
  return r ?? 'inserted';
}

async function prepare(item: IncomingEvent, deps: RecordEventDeps, tag: string, now: Date): Promise<Prepared> {
  const eventId = eventIdOf(item.envelope.id);
  const { message } = item;
  const { task } = message;
  const webhook = toWebhook(message, item.envelope.occurred_at);
  const endpoint = webhook ? await deps.config.endpoint(task.account_id, task.environment) : null;
  const base = {
    _id: eventId,
    account_id: task.account_id,
    environment: task.environment,
    task_id: task.id,
    version: message.version,
    kind: message.kind,
    event: webhook?.event ?? null,
    occurred_at: item.envelope.occurred_at,
    received_at: now,
    attempts_made: 0,
    schedule_base: 0,
    delivered_at: null,
    last_status_code: null,
    updated_at: now,
  };
  if (webhook && endpoint) {
    return {
      eventId,
      pending: {
        ...base,
        event_id: eventId,
        body: webhook.body,
        status: 'pending',
        next_attempt_at: new Date(now.getTime() + deps.handOffMs),
        last_error: null,
        lane: 'fast',
        holder: deps.holder,
        tag,
      },
      final: null,
    };
  }
  const status: EventStatus = webhook ? 'no_endpoint' : 'skipped';
  return {
    eventId,
    pending: null,
    final: {
      ...base,
      body: webhook?.body ?? null,
      status,
      next_attempt_at: null,
      last_error: status === 'no_endpoint' ? 'no webhook endpoint configured' : null,
    },
  };
}
