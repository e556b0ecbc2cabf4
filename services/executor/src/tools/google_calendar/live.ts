import { createHash } from 'node:crypto';
import { findAction } from '@tes/catalog';
import { DateTime } from 'luxon';
import { text, ToolError, type ActionImpl, type ToolContext } from '../tool.js';
import { classifyGoogle } from '../../provider-api/google.js';
import { callProvider } from '../../provider-api/provider-http.js';

/**
 * Google Calendar API v3 (GOOGLE_CALENDAR_API_URL). Creating an event is made
 * idempotent with a client-chosen event id derived from the step's idempotency key:
 * a second insert answers 409 and the existing event is read back.
 */
interface GEvent {
  id: string;
  summary?: string;
  description?: string;
  start?: { dateTime?: string; date?: string; timeZone?: string };
  end?: { dateTime?: string; date?: string; timeZone?: string };
  attendees?: { email: string }[];
  htmlLink?: string;
  recurrence?: string[];
}

export function eventOut(e: GEvent): Record<string, unknown> {
  const when = (t?: { dateTime?: string; date?: string }) =>
    t?.dateTime ? new Date(t.dateTime).toISOString() : t?.date ? new Date(`${t.date}T00:00:00Z`).toISOString() : '';
  return {
    id: e.id,
    summary: e.summary ?? '(no title)',
    ...(e.description ? { description: e.description } : {}),
    start: when(e.start),
    end: when(e.end),
    attendees: (e.attendees ?? []).map((a) => a.email),
    url: e.htmlLink ?? '',
    ...(e.start?.timeZone ? { time_zone: e.start.timeZone } : {}),
    ...(e.recurrence?.length ? { recurrence: e.recurrence } : {}),
  };
}

/** The event's IANA zone, checked with the platform's own zone data (Intl): a typo fails before any call. */
export function eventZone(input: Record<string, unknown>): string | undefined {
  const zone = input['time_zone'] as string | undefined;
  if (zone === undefined) return input['recurrence'] ? 'UTC' : undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    throw new ToolError(
      'step_failed',
      `time_zone "${zone}" is not an IANA time zone`,
      false,
      'Name the time zone as an IANA name such as Europe/Berlin or America/Los_Angeles',
    );
  }
}

/** An instant written as the wall time of `zone` with its offset there (2030-01-07T10:00:00+01:00). */
export function inZone(iso: string, zone: string | undefined): string {
  return zone ? (DateTime.fromISO(iso).setZone(zone).toISO({ suppressMilliseconds: true }) ?? iso) : iso;
}

/** base32hex (a–v, 0–9), 5–1024 characters: hex of a hash qualifies. */
export function eventIdFor(idempotencyKey: string): string {
  return createHash('sha256').update(idempotencyKey).digest('hex');
}

function call<T>(
  ctx: ToolContext,
  action: string,
  method: 'GET' | 'POST',
  path: string,
  extra: { params?: Record<string, unknown>; body?: unknown; passThrough?: ['conflict'] } = {},
) {
  const def = findAction('google_calendar', action);
  return callProvider<T>(ctx, {
    service: 'google_calendar',
    scopes: def?.scopes ?? [],
    method,
    path,
    write: def?.side_effect !== 'read',
    classify: classifyGoogle,
    ...extra,
  });
}

const cal = (input: Record<string, unknown>) => `/calendars/${encodeURIComponent(text(input['calendar_id'], 'primary'))}`;

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
