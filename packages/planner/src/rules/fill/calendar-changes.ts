import { ref } from '@tes/catalog';
import { DateTime } from 'luxon';
import { takeQuote, type Slots } from '../slots.js';
import { QUOTE } from '../text.js';
import { parseWhen, type When } from '../time.js';
import { capitalize, derive, type Add, type Fill } from './common.js';

/**
 * Moving, cancelling and blocking out days. An event to change is found by a listing planned
 * first (its time, its day, or its title as the user says them), and the change refers to the
 * first event found; with neither a time nor a title the event is not known and the request is
 * refused (missing `event_id`), never guessed.
 */

/** "the design review", "tomorrow's standup", "my 1:1 with Ana": what kind of event, for the listing's query. */
const KIND =
  /\b(standup|stand-up|sync|lunch|review|design review|interview|demo|retro|retrospective|1:1|one-on-one|coffee|dinner|workshop|catch-up|planning|kickoff|offsite|all-hands|board meeting|dentist|doctor)\b/i;

function plainText(s: Slots): string {
  return s.clause.raw.replace(QUOTE, ' ').replace(/⟨\d+⟩/g, ' ');
}

/** The event the clause names: a listing around its time (or day), by its title when given. */
function findEvent(s: Slots, add: Add, when: When | undefined): string | undefined {
  // "event 7k2m9q0abcd": an event id said as it is (Google's are letters a-v and digits).
  const id = /\b(?:event|evento|événement|termin|evento|gebeurtenis|afspraak)\s+(?:id\s+)?([a-v0-9_]{5,1024})\b/i.exec(s.clause.raw)?.[1];
  if (id && /\d/.test(id)) return id;
  const title = takeQuote(s, ['title', 'quoted']) ?? KIND.exec(plainText(s))?.[1];
  if (!title && !when?.hasTime) return undefined;
  const input: Record<string, unknown> = { limit: 1 };
  if (title) input['query'] = title;
  if (when?.start && when.hasTime) {
    input['time_min'] = when.start;
    input['time_max'] = DateTime.fromISO(when.start, { setZone: true }).plus({ minutes: 1 }).toISO();
  } else if (when?.windowStart) {
    input['time_min'] = when.windowStart;
    input['time_max'] = when.windowEnd;
  }
  return ref(add({ tool: 'google_calendar', action: 'list_events', input }), 'items.0.id');
}

/** "bump my 3pm to 4", "move the review to friday 2pm": the part that names the event and the new time. */
function splitMove(text: string): { from: string; to: string } | undefined {
  const m =
    /^(.*?)\s+(?:to|until|till|for|until)\s+((?:(?:next|this|on)\s+)?(?:\d|noon|midday|tomorrow|today|monday|tuesday|wednesday|thursday|friday|saturday|sunday|the\s+\d|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec).*)$/i.exec(
      text.trim(),
    );
  return m?.[1] && m[2] ? { from: m[1], to: m[2] } : undefined;
}

const DAY_WORDS =
  /\b(?:today|tomorrow|tonight|monday|tuesday|wednesday|thursday|friday|saturday|sunday|next|week|\d{4}-\d{2}-\d{2}|jan\w*|feb\w*|mar\w*|apr\w*|may|jun\w*|jul\w*|aug\w*|sep\w*|oct\w*|nov\w*|dec\w*|the\s+\d{1,2}(?:st|nd|rd|th)?)\b/i;

/** The new start: the time said after "to", on the day said there or else the day the event was named by. */
function newStart(s: Slots, from: When | undefined, to: string): string | undefined {
  const spoken = /^\d{1,2}(?::\d{2})?$/.test(to.trim()) ? `at ${to.trim()}` : to;
  const target = parseWhen(spoken, s.state.lang, s.state.now);
  if (!target?.start || !target.hasTime) return undefined;
  if (DAY_WORDS.test(to) || !from?.start) return target.start;
  const at = DateTime.fromISO(target.start, { setZone: true });
  return DateTime.fromISO(from.start, { setZone: true }).set({ hour: at.hour, minute: at.minute }).toISO() ?? undefined;
}

/** "from the 2nd to the 5th", "march 10-12", "on friday": the first and last day (inclusive). */
function dayRange(s: Slots): { start: string; end?: string } | undefined {
  const text = plainText(s);
  const now = DateTime.fromJSDate(s.state.now, { zone: 'utc' });
  const range =
    /\b(?:from\s+)?(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?\s*(?:to|until|till|through|thru|-|–)\s*(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?(?:\s+(?:of\s+)?([a-z]+))?\b/i.exec(
      text,
    );
  if (range?.[1] && range[2]) {
    const [first, last] = [Number(range[1]), Number(range[2])];
    const named = range[3] ? DateTime.fromFormat(range[3].slice(0, 3), 'LLL', { locale: 'en' }) : undefined;
    let month = named?.isValid ? now.set({ month: named.month }) : first >= now.day ? now : now.plus({ months: 1 });
    if (named?.isValid && month.month < now.month) month = month.plus({ years: 1 });
    if (last >= first && last <= 31) {
      const start = month.set({ day: first });
      return { start: start.toISODate() ?? '', end: start.set({ day: last }).toISODate() ?? '' };
    }
  }
  // "from 16 March until 20 March", "march 9 through march 13": each side a day.
  const sides =
    /\b(?:from\s+)?(.{3,30}?)\s+(?:to|until|till|through|thru|-|–)\s+(.{3,30}?)(?=\s+(?:and|for|as|,)|[,.]|$)/i.exec(text) ??
    /\b([a-z]+\s+\d{1,2})\s+and\s+(\d{1,2})\b/i.exec(text);
  // "march 19 and 20": the second day in the first one's month.
  if (sides?.[2] && /^\d{1,2}$/.test(sides[2]) && sides[1]) sides[2] = sides[1].replace(/\d{1,2}$/, sides[2]);
  if (sides?.[1] && sides[2]) {
    const a = parseWhen(sides[1], s.state.lang, s.state.now);
    const b = parseWhen(sides[2], s.state.lang, s.state.now);
    if (a?.start && b?.start && !a.hasTime && !b.hasTime) {
      const [first, last] = [DateTime.fromISO(a.start, { setZone: true }), DateTime.fromISO(b.start, { setZone: true })];
      if (last >= first) return { start: first.toISODate() ?? '', end: last.toISODate() ?? '' };
    }
  }
  const when = s.when;
  if (!when?.start) return undefined;
  const start = DateTime.fromISO(when.start, { setZone: true });
  const end = when.end && !when.hasTime ? DateTime.fromISO(when.end, { setZone: true }) : undefined;
  return { start: start.toISODate() ?? '', ...(end && end > start ? { end: end.toISODate() ?? '' } : {}) };
}

const OUT_OF_OFFICE = /\b(?:out of (?:the )?office|ooo|oof|away|vacation|holidays?|pto|leave|day off|days off|off sick|sick day)\b/i;

export const CALENDAR_CHANGE_FILLS: Record<string, Fill> = {
  'google_calendar.update_event': (s, put, add) => {
    const parts = splitMove(plainText(s));
    const from = parts ? parseWhen(parts.from, s.state.lang, s.state.now) : s.when;
    const start = parts ? newStart(s, from, parts.to) : undefined;
    const renamed = /\b(?:rename|retitle|call it)\b/i.test(s.clause.canon) ? takeQuote(s, ['quoted', 'title']) : undefined;
    put('event_id', findEvent(s, add, from));
    put('start', start);
    put('summary', renamed);
    if (start && from?.zoneNamed) put('time_zone', from.zone);
  },
  'google_calendar.delete_event': (s, put, add) => {
    put('event_id', findEvent(s, add, s.when));
    if (
      /\b(?:without|don't|do not|no|not)\s+(?:telling|notifying|notify|tell|emailing|sending|send)\b|\bquietly\b|\bsilently\b|\bno\s+(?:cancellation|notification|notice)/i.test(
        s.clause.canon,
      )
    )
      put('notify_attendees', false);
  },
  'google_calendar.create_all_day_event': (s, put) => {
    const days = dayRange(s);
    const ooo = OUT_OF_OFFICE.test(plainText(s));
    const kind = /\b(vacation|holiday|offsite|conference|day off|pto|sick day|trip|travel)\b/i.exec(plainText(s))?.[1];
    const title = takeQuote(s, ['title', 'quoted', 'colon']);
    const summary = title ?? (ooo ? 'Out of office' : kind ? capitalize(kind) : undefined);
    put('summary', summary);
    if (!title) derive(s, 'summary', summary, 'no title given: from the kind of day');
    put('start_date', days?.start);
    put('end_date', days?.end);
    if (ooo) put('out_of_office', true);
    if (s.when?.zoneNamed) put('time_zone', s.when.zone);
  },
};
