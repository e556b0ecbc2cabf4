import { text, type ActionImpl, type ToolContext } from '../tool.js';
import { classifyGoogle } from '../../provider-api/google.js';
import { checkOutOfOffice, dayRange, rescheduled } from './dates.js';
import { call, cal, eventIdFor, eventOut, eventZone, inZone, noSuchEvent, type GEvent } from './event.js';

/**
 * Changing, deleting and all-day events on the Google Calendar API v3:
 *   update_event          GET then PATCH /calendars/{id}/events/{eventId}?sendUpdates=all
 *   delete_event          DELETE /calendars/{id}/events/{eventId}?sendUpdates=all|none
 *   create_all_day_event  POST /calendars/{id}/events with start.date/end.date (end exclusive), or an
 *                         out-of-office event: eventType outOfOffice, which Google takes only with timed
 *                         start/end (midnight to midnight in time_zone), without attendees, on a primary calendar.
 */
const eventPath = (input: Record<string, unknown>) => `${cal(input)}/events/${encodeURIComponent(text(input['event_id']))}`;

/** The event as it is now; a deleted one (Google keeps it as `cancelled`) counts as missing. */
async function current(ctx: ToolContext, input: Record<string, unknown>): Promise<GEvent> {
  // Read with list_events' call (no Idempotency-Key: a read is not a write): the same calendar.events scope.
  const r = await call<GEvent>(ctx, 'list_events', 'GET', eventPath(input), { passThrough: ['not_found'] });
  if (r.status === 404) throw noSuchEvent(input);
  if (r.data.status === 'cancelled') throw noSuchEvent(input, true);
  return r.data;
}

const instant = (t: GEvent['start']) => (t?.dateTime ? t.dateTime : `${t?.date ?? '1970-01-01'}T00:00:00Z`);

export const googleCalendarEditsLive: Record<string, ActionImpl> = {
  // A new start alone keeps the duration, so the event is read first; PATCH changes only what is sent.
  update_event: async (input, ctx) => {
    const asked = eventZone(input);
    const event = await current(ctx, input);
    const times = rescheduled({ start: instant(event.start), end: instant(event.end) }, input);
    const zone = asked ?? event.start?.timeZone;
    // An all-day event given times becomes a timed one: its `date` is cleared (null in a PATCH).
    const when = (t: string) => ({
      dateTime: inZone(t, zone),
      ...(zone ? { timeZone: zone } : {}),
      ...(event.start?.date ? { date: null } : {}),
    });
    const r = await call<GEvent>(ctx, 'update_event', 'PATCH', eventPath(input), {
      params: { sendUpdates: 'all' },
      body: {
        ...(input['summary'] !== undefined ? { summary: input['summary'] } : {}),
        ...(Array.isArray(input['attendees']) ? { attendees: (input['attendees'] as string[]).map((email) => ({ email })) } : {}),
        ...(times ? { start: when(times.start), end: when(times.end) } : {}),
      },
    });
    return eventOut(r.data);
  },
  // 410 Gone: Google has it as deleted already (a retry of this step after a lost answer, or deleted elsewhere).
  delete_event: async (input, ctx) => {
    const r = await call(ctx, 'delete_event', 'DELETE', eventPath(input), {
      params: { sendUpdates: input['notify_attendees'] === false ? 'none' : 'all' },
      classify: (res) => (res.status === 410 ? { kind: 'not_found' } : classifyGoogle(res)),
      passThrough: ['not_found'],
    });
    const id = text(input['event_id']);
    if (r.status === 410) return { id, deleted: true, already_deleted: true };
    if (r.status === 404) throw noSuchEvent(input);
    return { id, deleted: true };
  },
  create_all_day_event: async (input, ctx) => {
    const days = dayRange(input);
    const ooo = checkOutOfOffice(input);
    const id = eventIdFor(ctx.step.idempotency_key);
    const timed = (t: string) => ({ dateTime: inZone(t, days.zone), timeZone: days.zone });
    const r = await call<GEvent>(ctx, 'create_all_day_event', 'POST', `${cal(input)}/events`, {
      params: { sendUpdates: 'all' },
      body: {
        id,
        summary: input['summary'],
        ...(input['description'] ? { description: input['description'] } : {}),
        ...(ooo
          ? {
              eventType: 'outOfOffice',
              start: timed(days.start),
              end: timed(days.end),
              // As Google Calendar's own default: new invitations in the period are declined, existing ones kept.
              outOfOfficeProperties: { autoDeclineMode: 'declineOnlyNewConflictingInvitations' },
            }
          : { start: { date: days.startDate }, end: { date: days.endExclusive } }),
        ...(Array.isArray(input['attendees']) ? { attendees: (input['attendees'] as string[]).map((email) => ({ email })) } : {}),
      },
      passThrough: ['conflict'],
    });
    // 409: created by an earlier run of this very step: answer that event.
    const event = r.status === 409 ? (await call<GEvent>(ctx, 'list_events', 'GET', `${cal(input)}/events/${id}`)).data : r.data;
    return {
      ...eventOut(event),
      start: days.start,
      end: days.end,
      ...(input['time_zone'] !== undefined ? { time_zone: days.zone } : {}),
      all_day: true,
      start_date: days.startDate,
      end_date: days.endDate,
      ...(ooo ? { out_of_office: true } : {}),
    };
  },
};
