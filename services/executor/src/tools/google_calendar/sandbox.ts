import { DateTime } from 'luxon';
import * as rruleModule from 'rrule';
import { availability, type Period } from './live.js';
import { eventIdFor, eventZone } from './event.js';
import { text, type ActionImpl, type ToolContext } from '../tool.js';
import { SANDBOX_HOST, sandboxScope } from '../sandbox-scope.js';
import { googleCalendarEditsSandbox } from './sandbox-edits.js';

// rrule is CommonJS: Node's ESM loader sees its exports only as `default`, the tests' CommonJS as the module itself.
const { rrulestr } = (rruleModule as unknown as { default?: typeof rruleModule }).default ?? rruleModule;

type CalendarEvent = Record<string, unknown>;

/**
 * The occurrences of an event overlapping [min, max): the event itself, or each instance of its
 * recurrence, expanded in the event's zone (rrule over "floating" wall-clock times, which luxon
 * places in the zone), so a weekly 10:00 Europe/Berlin stays at 10:00 across daylight saving.
 * Instances are named as Google names them: `<event id>_<start, UTC basic format>`.
 */
export function occurrences(e: CalendarEvent, min: number, max: number): CalendarEvent[] {
  const start = Date.parse(text(e['start']));
  const duration = Date.parse(text(e['end'])) - start;
  const lines = e['recurrence'] as string[] | undefined;
  if (!lines?.length) return start < max && start + duration > min ? [e] : [];
  const zone = text(e['time_zone'], 'UTC');
  const floating = (t: number) => {
    const l = DateTime.fromMillis(t, { zone });
    return new Date(Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute, l.second));
  };
  const real = (f: Date) =>
    DateTime.fromObject(
      {
        year: f.getUTCFullYear(),
        month: f.getUTCMonth() + 1,
        day: f.getUTCDate(),
        hour: f.getUTCHours(),
        minute: f.getUTCMinutes(),
        second: f.getUTCSeconds(),
      },
      { zone },
    ).toMillis();
  // DTSTART as a line: rrulestr's dtstart option is ignored once it builds a set (rrule 2.8).
  const dtstart = DateTime.fromJSDate(floating(start), { zone: 'utc' }).toFormat("yyyyMMdd'T'HHmmss'Z'");
  const rule = rrulestr([`DTSTART:${dtstart}`, ...lines].join('\n'), { forceset: true });
  // A day of slack on each side covers offsets; the exact overlap is checked on real instants.
  return rule
    .between(new Date(floating(min - duration).getTime() - 86_400_000), new Date(floating(max).getTime() + 86_400_000), true)
    .map(real)
    .filter((s) => s < max && s + duration > min)
    .map((s) => ({
      ...e,
      id: `${text(e['id'])}_${DateTime.fromMillis(s, { zone: 'utc' }).toFormat("yyyyMMdd'T'HHmmss'Z'")}`,
      start: new Date(s).toISOString(),
      end: new Date(s + duration).toISOString(),
    }));
}

async function eventsIn(ctx: ToolContext, calendar: string, min: number, max: number): Promise<CalendarEvent[]> {
  const scope = await sandboxScope(ctx, 'google_calendar');
  return (await ctx.env.sandbox.list(scope, 'event', calendar))
    .filter((d) => !d.data['cancelled'])
    .flatMap((d) => occurrences(d.data, min, max))
    .sort((a, b) => Date.parse(text(a['start'])) - Date.parse(text(b['start'])));
}

/** A simulated Google Calendar: events persist per account, user and calendar. */
export const googleCalendarSandbox: Record<string, ActionImpl> = {
  create_event: async (input, ctx) => {
    const zone = eventZone(input);
    const scope = await sandboxScope(ctx, 'google_calendar');
    const calendar = text(input['calendar_id'], 'primary');
    const start = new Date(text(input['start'])).toISOString();
    const end = input['end'] ? new Date(text(input['end'])).toISOString() : new Date(Date.parse(start) + 3_600_000).toISOString();
    const id = eventIdFor(ctx.step.idempotency_key).slice(0, 26);
    const doc = await ctx.env.sandbox.createOnce(scope, 'event', calendar, ctx.step.idempotency_key, () => ({
      id,
      summary: input['summary'],
      ...(input['description'] ? { description: input['description'] } : {}),
      start,
      end,
      attendees: input['attendees'] ?? [],
      url: `${SANDBOX_HOST}/calendar/event/${id}`,
      ...(zone ? { time_zone: zone } : {}),
      ...(input['recurrence'] ? { recurrence: input['recurrence'] } : {}),
    }));
    return doc.data;
  },
  list_events: async (input, ctx) => {
    const min = Date.parse((input['time_min'] as string | undefined) ?? new Date().toISOString());
    const max = input['time_max'] ? Date.parse(text(input['time_max'])) : min + 7 * 86_400_000;
    const q = (input['query'] as string | undefined)?.toLowerCase();
    // Overlapping the window, recurring events as single instances (singleEvents=true), as Google does.
    const items = (await eventsIn(ctx, text(input['calendar_id'], 'primary'), min, max))
      .filter((e) => !q || `${text(e['summary'])} ${text(e['description'])}`.toLowerCase().includes(q))
      .slice(0, Number(input['limit'] ?? 25));
    return { items, count: items.length };
  },
  check_availability: async (input, ctx) => {
    const timeMin = text(input['time_min']);
    const timeMax = text(input['time_max']);
    const periods: Period[] = [];
    for (const calendar of (input['calendar_ids'] as string[] | undefined) ?? ['primary']) {
      const events = await eventsIn(ctx, calendar, Date.parse(timeMin), Date.parse(timeMax));
      periods.push(...events.map((e) => ({ start: text(e['start']), end: text(e['end']) })));
    }
    return availability(periods, timeMin, timeMax);
  },
  ...googleCalendarEditsSandbox,
};
