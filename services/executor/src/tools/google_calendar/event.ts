import { createHash } from 'node:crypto';
import { findAction } from '@tes/catalog';
import { DateTime } from 'luxon';
import { text, ToolError, type ToolContext } from '../tool.js';
import { classifyGoogle } from '../../provider-api/google.js';
import { callProvider, type ProviderRequest } from '../../provider-api/provider-http.js';

/** An event of the Google Calendar API v3, as far as the actions read it. */
export interface GEvent {
  id: string;
  status?: string;
  eventType?: string;
  summary?: string;
  description?: string;
  start?: { dateTime?: string; date?: string; timeZone?: string };
  end?: { dateTime?: string; date?: string; timeZone?: string };
  attendees?: { email: string }[];
  htmlLink?: string;
  recurrence?: string[];
}

/** The day before `date` (YYYY-MM-DD): Google's all-day `end.date` is exclusive, ours inclusive. */
export const dayBefore = (date: string) => DateTime.fromISO(date, { zone: 'utc' }).minus({ days: 1 }).toISODate() ?? date;

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
    ...(e.start?.date && e.end?.date ? { all_day: true, start_date: e.start.date, end_date: dayBefore(e.end.date) } : {}),
    ...(e.eventType === 'outOfOffice' ? { out_of_office: true } : {}),
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

/** One call to the Calendar API with the scopes and side effect of `action` (the catalog's). */
export function call<T>(
  ctx: ToolContext,
  action: string,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  path: string,
  extra: Pick<ProviderRequest, 'params' | 'body' | 'passThrough' | 'classify'> = {},
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

export const cal = (input: Record<string, unknown>) => `/calendars/${encodeURIComponent(text(input['calendar_id'], 'primary'))}`;

/** The event the step names does not exist (or was deleted): in the sandbox and live alike. */
export function noSuchEvent(input: Record<string, unknown>, deleted = false): ToolError {
  const id = text(input['event_id']);
  const calendar = text(input['calendar_id'], 'primary');
  return new ToolError(
    'step_failed',
    `Google Calendar has no event "${id}" in calendar "${calendar}"${deleted ? ' (it was deleted)' : ''}`,
    false,
    'Check the event id (list_events gives it; one occurrence of a recurring event has its own, <id>_<start>) and the calendar it is in',
  );
}
