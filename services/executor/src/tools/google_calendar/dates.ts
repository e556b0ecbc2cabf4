import { DateTime } from 'luxon';
import { eventZone } from './event.js';
import { text, ToolError } from '../tool.js';

/**
 * The time arithmetic of update_event and create_all_day_event, the same live and in the
 * sandbox: a new start keeps the event's duration; an all-day range is inclusive for the
 * user and exclusive for Google.
 */
export interface Span {
  /** Instants (ISO 8601 with an offset). */
  start: string;
  end: string;
}

/** The event's new start and end from `start`/`end` in the input (undefined when neither is given). */
export function rescheduled(current: Span, input: Record<string, unknown>): Span | undefined {
  const start = input['start'] as string | undefined;
  const end = input['end'] as string | undefined;
  if (start === undefined && end === undefined) return undefined;
  const duration = Date.parse(current.end) - Date.parse(current.start);
  const next: Span = {
    start: start ?? current.start,
    end: end ?? (start !== undefined ? new Date(Date.parse(start) + duration).toISOString() : current.end),
  };
  if (Date.parse(next.end) <= Date.parse(next.start)) {
    throw new ToolError(
      'step_failed',
      `The event would end (${next.end}) before it starts (${next.start})`,
      false,
      'Give an end after the start, or only a new start to keep the event’s duration',
    );
  }
  return next;
}

export interface DayRange extends Span {
  /** First and last day, inclusive (YYYY-MM-DD). */
  startDate: string;
  endDate: string;
  /** The day after the last: Google's exclusive `end.date`. */
  endExclusive: string;
  /** Where the days are counted: `time_zone`, default UTC. */
  zone: string;
}

/** The days of an all-day event: checked to exist and be in order; `start`/`end` are the midnights around them in `zone`. */
export function dayRange(input: Record<string, unknown>): DayRange {
  const zone = eventZone(input) ?? 'UTC';
  const day = (field: 'start_date' | 'end_date', value: string) => {
    const d = DateTime.fromISO(value, { zone });
    if (!d.isValid || !/^\d{4}-\d{2}-\d{2}$/.test(value)) {
      throw new ToolError('step_failed', `${field} "${value}" is not a date`, false, 'Give the day as YYYY-MM-DD, e.g. 2030-06-10');
    }
    return d;
  };
  const startDate = text(input['start_date']);
  const endDate = text(input['end_date'], startDate);
  const first = day('start_date', startDate);
  const last = day('end_date', endDate);
  if (last < first) {
    throw new ToolError(
      'step_failed',
      `end_date ${endDate} is before start_date ${startDate}`,
      false,
      'Give the last day of the event as end_date (it is included), on or after start_date',
    );
  }
  const after = last.plus({ days: 1 });
  const iso = (d: DateTime) => d.toUTC().toISO() ?? '';
  return { startDate, endDate, endExclusive: after.toISODate() ?? '', zone, start: iso(first), end: iso(after) };
}

/** Google refuses an out-of-office event with attendees: said before any call. */
export function checkOutOfOffice(input: Record<string, unknown>): boolean {
  const ooo = input['out_of_office'] === true;
  if (ooo && Array.isArray(input['attendees']) && input['attendees'].length > 0) {
    throw new ToolError(
      'step_failed',
      'An out-of-office event cannot have attendees',
      false,
      'Leave the attendees out of the out-of-office block, or create an all-day event (out_of_office false) to invite them',
    );
  }
  return ooo;
}
