import { AppError } from '@tes/errors';
import { freshSchedule, viewOf, type DeliveryView } from './deliveries.use-case.js';
import type { AttemptStore, EventStore, PendingStore } from './ports.js';
import { slotOf, type PendingDoc } from './stored-event.js';

/**
 * What "Resend now" did: `scheduled`, a fresh schedule starting now (an event in a final state);
 * `due_now`, a retry that was waiting made due now; `already_due`, nothing to change (its attempt
 * is under way, or it waits for an earlier event of its task).
 */
export type ResendEffect = 'scheduled' | 'due_now' | 'already_due';

interface Deps {
  events: EventStore;
  pending: PendingStore;
  attempts: AttemptStore;
}

/**
 * "Resend now" (the dashboard): a new attempt of any event, now, outside its schedule. It only
 * makes the event due: the attempt goes through the poller's claim and its task's ordering like
 * any retry, so it never overtakes an earlier pending event of the same task, and two replicas
 * never send it twice.
 * - delivered, undeliverable, no_endpoint: a fresh schedule starting now (as `redeliver`);
 * - pending and waiting for a retry: that retry is made due now. It does not count against the
 *   schedule (`schedule_base` + 1): if it fails, the same delay starts again from then. The new
 *   pending document is inserted before the waiting one is removed (readers take either; the
 *   attempt's claim is the same, so only one of them is ever sent);
 * - pending and due already: nothing changes.
 */
export async function resendNow(deps: Deps, eventId: string, now = new Date()): Promise<{ delivery: DeliveryView; effect: ResendEffect }> {
  const event = await deps.events.get(eventId);
  if (!event || event.status === 'skipped' || event.body === null) throw new AppError('not_found', `no webhook event ${eventId}`);
  let effect: ResendEffect;
  if (event.status !== 'pending') {
    await freshSchedule(deps, event, event.body, now);
    effect = 'scheduled';
  } else {
    const current = await deps.pending.get(eventId);
    effect = current && waitsForRetry(current, now) ? await makeDue(deps.pending, current, now) : 'already_due';
  }
  return { delivery: await viewOf(deps, eventId, event), effect };
}

/** A retry not yet due: failed at least once in this schedule, in the open lane, due later. */
function waitsForRetry(doc: PendingDoc, now: Date): boolean {
  return doc.lane === 'open' && doc.attempts_made > doc.schedule_base && (doc.next_attempt_at?.getTime() ?? 0) > now.getTime();
}

async function makeDue(pending: PendingStore, doc: PendingDoc, now: Date): Promise<ResendEffect> {
  // No `holder`: whichever replica polls first takes it.
  const { holder: _holder, ...rest } = doc;
  const due: PendingDoc = {
    ...rest,
    _id: `${doc.event_id}~${doc.attempts_made}~now`,
    schedule_base: doc.schedule_base + 1,
    next_attempt_at: now,
    slot: slotOf({ next_attempt_at: now }),
    tag: `resend:${doc.event_id}:${doc.attempts_made}`,
    updated_at: now,
  };
  // A duplicate: another request made it due a moment ago.
  if ((await pending.insertOne(due)) !== 'inserted') return 'already_due';
  await pending.remove(doc);
  return 'due_now';
}
