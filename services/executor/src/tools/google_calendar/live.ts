import { createHash } from 'node:crypto';
import { findAction } from '@tes/catalog';
import { text, type ActionImpl, type ToolContext } from '../tool.js';
import { classifyGoogle } from '../../providers/google.js';
import { callProvider } from '../../providers/provider-http.js';

/**
 * Google Calendar API v3 (GOOGLE_CALENDAR_API_URL). Creating an event is made
 * idempotent with a client-chosen event id derived from the step's idempotency key:
 * a second insert answers 409 and the existing event is read back.
 */
interface GEvent {
  id: string;
  summary?: string;
  description?: string;
  start?: { dateTime?: string; date?: string };
  end?: { dateTime?: string; date?: string };
  attendees?: { email: string }[];
  htmlLink?: string;
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
  };
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
    const start = text(input['start']);
    const end = (input['end'] as string | undefined) ?? new Date(Date.parse(start) + 3_600_000).toISOString();
    const id = eventIdFor(ctx.step.idempotency_key);
    const r = await call<GEvent>(ctx, 'create_event', 'POST', `${cal(input)}/events`, {
      params: { sendUpdates: 'all' },
      body: {
        id,
        summary: input['summary'],
        ...(input['description'] ? { description: input['description'] } : {}),
        start: { dateTime: start },
        end: { dateTime: end },
        ...(Array.isArray(input['attendees']) ? { attendees: (input['attendees'] as string[]).map((email) => ({ email })) } : {}),
      },
      passThrough: ['conflict'],
    });
    if (r.status !== 409) return eventOut(r.data);
    // Created by an earlier run of this very step: answer that event.
    const again = await call<GEvent>(ctx, 'list_events', 'GET', `${cal(input)}/events/${id}`);
    return eventOut(again.data);
  },
};
