import type { FakeRequest, Reply } from '../../test-support/fake-provider.js';

/**
 * Google Calendar API v3 as the fake Google server (test-support/fake-google.ts) answers it:
 * events.insert/get/list/patch/delete and freeBusy.query. A deleted event is kept with
 * status "cancelled" (get still answers it, list and freeBusy leave it out, a second delete is 410).
 */
interface When {
  dateTime?: string;
  date?: string;
  timeZone?: string;
}

export interface GEvent {
  id: string;
  status: string;
  eventType?: string;
  summary: string;
  description?: string;
  start: When;
  end: When;
  attendees?: { email: string }[];
  recurrence?: string[];
  outOfOfficeProperties?: Record<string, unknown>;
  htmlLink: string;
}

/** The mailbox's owner (users.getProfile) and the only calendar freeBusy knows besides "primary". */
export const FAKE_GOOGLE_USER = 'me@example.com';

function googleError(code: number, status: string, message: string, reason: string): Reply {
  return { status: code, body: { error: { code, message, status, errors: [{ message, domain: 'global', reason }] } } };
}

/** An all-day event's day counts from midnight UTC here. */
const instant = (w: When) => Date.parse(w.dateTime ?? `${w.date ?? '1970-01-01'}T00:00:00Z`);
const live = (events: Map<string, GEvent>) => [...events.values()].filter((e) => e.status !== 'cancelled');

/** What Google refuses in an event as inserted or patched; undefined when it is acceptable. */
function refusal(e: Omit<GEvent, 'htmlLink' | 'status'>): Reply | undefined {
  // As Google answers a recurring event whose start has no timeZone.
  if (e.recurrence?.length && e.start.dateTime && !e.start.timeZone)
    return googleError(400, 'INVALID_ARGUMENT', 'Missing time zone definition for start time.', 'required');
  if (instant(e.end) <= instant(e.start))
    return googleError(400, 'INVALID_ARGUMENT', 'The specified time range is empty.', 'timeRangeEmpty');
  // Out of office: timed start/end only, no attendees (Calendar API guide "calendar status" events).
  if (e.eventType === 'outOfOffice' && (!e.start.dateTime || !e.end.dateTime))
    return googleError(400, 'INVALID_ARGUMENT', 'An out of office event cannot be an all-day event.', 'invalid');
  if (e.eventType === 'outOfOffice' && e.attendees?.length)
    return googleError(400, 'INVALID_ARGUMENT', 'An out of office event cannot have attendees.', 'invalid');
  return undefined;
}

/** PATCH semantics: fields sent replace the current ones; start/end merge, a null clears a field. */
function patched(e: GEvent, body: Record<string, unknown>): GEvent {
  const merge = (w: When, p: unknown) =>
    Object.fromEntries(Object.entries({ ...w, ...(p as object) }).filter(([, v]) => v !== null)) as When;
  return { ...e, ...body, id: e.id, start: merge(e.start, body['start']), end: merge(e.end, body['end']) };
}

/** The fake's answer to a Calendar request, or undefined when the path is not Calendar's. */
export function calendarRoute(events: Map<string, GEvent>, req: FakeRequest): Reply | undefined {
  const m = /^\/calendar\/v3\/calendars\/([^/]+)\/events(?:\/([^/]+))?$/.exec(req.path);
  const known = m?.[2] ? events.get(decodeURIComponent(m[2])) : undefined;
  const notFound = googleError(404, 'NOT_FOUND', 'Not Found', 'notFound');
  if (m && req.method === 'POST' && !m[2]) {
    const b = req.body as Omit<GEvent, 'htmlLink' | 'status'>;
    const refused = refusal(b);
    if (refused) return refused;
    if (events.has(b.id)) return googleError(409, 'ALREADY_EXISTS', 'The requested identifier already exists.', 'duplicate');
    const e: GEvent = { ...b, status: 'confirmed', htmlLink: `https://calendar.google.com/event?eid=${b.id}` };
    events.set(e.id, e);
    return { status: 200, body: { kind: 'calendar#event', ...e } };
  }
  if (m?.[2] && req.method === 'GET') return known ? { status: 200, body: { kind: 'calendar#event', ...known } } : notFound;
  if (m?.[2] && req.method === 'PATCH') {
    if (!known) return notFound;
    const next = patched(known, req.body as Record<string, unknown>);
    const refused = refusal(next);
    if (refused) return refused;
    events.set(next.id, next);
    return { status: 200, body: { kind: 'calendar#event', ...next } };
  }
  if (m?.[2] && req.method === 'DELETE') {
    if (!known) return notFound;
    if (known.status === 'cancelled') return googleError(410, 'GONE', 'Resource has been deleted', 'deleted');
    events.set(known.id, { ...known, status: 'cancelled' });
    return { status: 204, body: undefined };
  }
  if (m && req.method === 'GET') {
    const min = Date.parse(req.query.get('timeMin') ?? '1970-01-01T00:00:00Z');
    const max = Date.parse(req.query.get('timeMax') ?? '2999-01-01T00:00:00Z');
    const items = live(events)
      .filter((e) => instant(e.end) > min && instant(e.start) < max)
      .sort((a, b) => instant(a.start) - instant(b.start))
      .slice(0, Number(req.query.get('maxResults') ?? 250));
    return { status: 200, body: { kind: 'calendar#events', items } };
  }
  if (req.path === '/calendar/v3/freeBusy' && req.method === 'POST') {
    const b = req.body as { timeMin: string; timeMax: string; items: { id: string }[] };
    const min = Date.parse(b.timeMin);
    const max = Date.parse(b.timeMax);
    const busy = live(events)
      .filter((e) => instant(e.end) > min && instant(e.start) < max)
      .map((e) => ({ start: new Date(instant(e.start)).toISOString(), end: new Date(instant(e.end)).toISOString() }));
    const calendars = Object.fromEntries(
      b.items.map(({ id }) => [
        id,
        id === 'primary' || id === FAKE_GOOGLE_USER ? { busy } : { errors: [{ domain: 'global', reason: 'notFound' }], busy: [] },
      ]),
    );
    return { status: 200, body: { kind: 'calendar#freeBusy', timeMin: b.timeMin, timeMax: b.timeMax, calendars } };
  }
  return undefined;
}
