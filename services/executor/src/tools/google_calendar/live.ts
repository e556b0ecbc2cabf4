import { text, ToolError, type ActionImpl } from '../tool.js';
import { call, cal, eventIdFor, eventOut, eventZone, inZone, type GEvent } from './event.js';
import { googleCalendarEditsLive } from './live-edits.js';

/**
 * Google Calendar API v3 (GOOGLE_CALENDAR_API_URL). Creating an event is made
 * idempotent with a client-chosen event id derived from the step's idempotency key:
 * a second insert answers 409 and the existing event is read back. Changing, deleting and
 * all-day events: live-edits.ts.
 */
export const googleCalendarLive: Record<string, ActionImpl> = {
  list_events: async (input, ctx) => {
    const min = (input['time_min'] as string | undefined) ?? new Date().toISOString();
    const max = (input['time_max'] as string | undefined) ?? new Date(Date.parse(min) + 7 * 86_400_000).toISOString();
    const r = await call<{ items?: GEvent[] }>(ctx, 'list_events', 'GET', `${cal(input)}/events`, {
      params: {
        timeMin: min,
        timeMax: max,
        maxResults: input['limit'] ?? 25,
        singleEvents: true,
        orderBy: 'startTime',
        ...(input['query'] ? { q: input['query'] } : {}),
      },
    });
    const items = (r.data.items ?? []).map(eventOut);
    return { items, count: items.length };
  },
  create_event: async (input, ctx) => {
    const zone = eventZone(input);
    const start = text(input['start']);
    const end = (input['end'] as string | undefined) ?? new Date(Date.parse(start) + 3_600_000).toISOString();
    const id = eventIdFor(ctx.step.idempotency_key);
    // A recurring event needs start/end timeZone: Google expands the recurrence in that zone.
    const when = (t: string) => ({ dateTime: inZone(t, zone), ...(zone ? { timeZone: zone } : {}) });
    const r = await call<GEvent>(ctx, 'create_event', 'POST', `${cal(input)}/events`, {
      params: { sendUpdates: 'all' },
      body: {
        id,
        summary: input['summary'],
        ...(input['description'] ? { description: input['description'] } : {}),
        start: when(start),
        end: when(end),
        ...(Array.isArray(input['attendees']) ? { attendees: (input['attendees'] as string[]).map((email) => ({ email })) } : {}),
        ...(Array.isArray(input['recurrence']) ? { recurrence: input['recurrence'] } : {}),
      },
      passThrough: ['conflict'],
    });
    if (r.status !== 409) return eventOut(r.data);
    // Created by an earlier run of this very step: answer that event.
    const again = await call<GEvent>(ctx, 'list_events', 'GET', `${cal(input)}/events/${id}`);
    return eventOut(again.data);
  },
  // freebusy.query: busy periods only (no event details) of each calendar, merged.
  check_availability: async (input, ctx) => {
    const ids = (input['calendar_ids'] as string[] | undefined) ?? ['primary'];
    const r = await call<{ calendars?: Record<string, { busy?: Period[]; errors?: { reason?: string }[] }> }>(
      ctx,
      'check_availability',
      'POST',
      '/freeBusy',
      { body: { timeMin: input['time_min'], timeMax: input['time_max'], items: ids.map((id) => ({ id })) } },
    );
    const calendars = r.data.calendars ?? {};
    const periods: Period[] = [];
    for (const id of ids) {
      const c = calendars[id];
      const reasons = (c?.errors ?? []).map((e) => e.reason ?? 'unknown');
      if (!c || reasons.length) {
        throw new ToolError(
          'step_failed',
          `Google Calendar could not read the availability of calendar "${id}" (${reasons.join(', ') || 'not in the answer'})`,
          false,
          'Check the calendar id (an email address or "primary") and that the user can see that calendar',
        );
      }
      periods.push(...(c.busy ?? []));
    }
    return availability(periods, text(input['time_min']), text(input['time_max']));
  },
  ...googleCalendarEditsLive,
};

export interface Period {
  start: string;
  end: string;
}

/** The answer of check_availability: busy periods clipped to the window, overlaps merged, in order. */
export function availability(periods: Period[], timeMin: string, timeMax: string): Record<string, unknown> {
  const min = Date.parse(timeMin);
  const max = Date.parse(timeMax);
  const spans = periods
    .map((p) => [Math.max(Date.parse(p.start), min), Math.min(Date.parse(p.end), max)] as [number, number])
    .filter(([s, e]) => e > s)
    .sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [s, e] of spans) {
    const last = merged.at(-1);
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else merged.push([s, e]);
  }
  const iso = (t: number) => new Date(t).toISOString();
  return {
    free: merged.length === 0,
    busy: merged.map(([s, e]) => ({ start: iso(s), end: iso(e) })),
    time_min: iso(min),
    time_max: iso(max),
  };
}
