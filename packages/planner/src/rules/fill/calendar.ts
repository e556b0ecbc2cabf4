import { entitiesOf, quoteAfter, takeQuote } from '../slots.js';
import { QUOTE } from '../text.js';
import { isCity, parseWhen } from '../time.js';
import { capitalize, derive, type Fill } from './common.js';

/** Per action: what each of its fields comes from. */
export const CALENDAR_FILLS: Record<string, Fill> = {
  'google_calendar.create_event': (s, put) => {
    const attendees = entitiesOf(s, 'email').map((e) => e.value);
    put('attendees', attendees.length > 0 ? attendees : undefined);
    // "…, description 'Q1 results'": that quote is the description, not the name.
    const description = quoteAfter(s, /\b(?:description|details|notes?|agenda)/);
    let named = takeQuote(s, ['title', 'quoted', 'colon']);
    // A cut-out text that also held the date: the date is not part of the name.
    for (const span of s.when?.spans ?? []) if (named) named = named.replace(span, ' ');
    named =
      named
        ?.replace(/\s+(?:on|at|from|for|by)\s*$/i, '')
        .replace(/[\s,;-]+$/, '')
        .replace(/\s+/g, ' ')
        .trim() || undefined;
    const kind =
      /\b(standup|stand-up|sync|lunch|review|interview|demo|retro|retrospective|1:1|one-on-one|coffee|dinner|workshop|catch-up|call|planning|kickoff|offsite|reminder)\b/i.exec(
        s.clause.raw.replace(QUOTE, ' '),
      )?.[1];
    const who = /\bwith\s+([\p{Lu}][\p{L}'-]+(?:\s+(?:and\s+)?[\p{Lu}][\p{L}'-]+)*)/u.exec(s.clause.raw)?.[1];
    const thing =
      /^(?:create|add|schedule|book|set\s+up|plan|put|organi[sz]e|arrange)\s+(?:an?\s+|the\s+)?(?:new\s+)?([\p{L}][\p{L}-]*(?:\s+[\p{L}][\p{L}-]*)?)\s+(?:on|at|for|tomorrow|today|next|this|every|with|from)\b/iu.exec(
        s.clause.raw.replace(QUOTE, ' '),
      )?.[1];
    // "create an event tomorrow at 3pm": a generic noun, or a day, is not a name.
    const generic =
      thing && /^(?:event|meeting|appointment|call|calendar|time|slot|reminder|block)\b/i.test(thing)
        ? undefined
        : thing?.replace(/\s+(?:today|tomorrow|tonight|monday|tuesday|wednesday|thursday|friday|saturday|sunday)$/i, '');
    // "block friday afternoon for focus time": what the time is for names it.
    const purpose =
      /\bfor\s+(?!(?:an?|the|\d|\w+\s+(?:minutes?|hours?|mins?)\b))([\p{L}][\p{L}\p{N}'-]*(?:\s+[\p{L}\p{N}][\p{L}\p{N}'-]*){0,3}?)(?=\s+(?:on|at|from|tomorrow|today|next|this|with|every|in)\b|[,.;!?]|$)/iu.exec(
        s.clause.raw.replace(QUOTE, ' ').replace(/⟨\d+⟩/g, ' '),
      )?.[1];
    // "Plan een afspraak Tandarts op 10 maart": a capitalised word inside the request names it.
    const proper = [...s.clause.raw.replace(QUOTE, ' ').matchAll(/(?<=\S\s+)([\p{Lu}][\p{Ll}'-]{2,})\b/gu)]
      .map((m) => m[1] ?? '')
      .find(
        (w) =>
          !parseWhen(w, s.state.lang, s.state.now) &&
          !who?.includes(w) &&
          !isCity(w) &&
          !(s.when?.spans ?? []).some((span) => span.includes(w)) &&
          !/^(?:I|Slack|Google|Calendar|Zoom|Meet|Teams)$/.test(w),
      );
    const thingName =
      thing && kind && thing.toLowerCase().includes(kind.toLowerCase()) && thing.includes(' ') ? capitalize(thing) : undefined;
    const purposeName =
      purpose && !parseWhen(purpose, s.state.lang, s.state.now) && kind && purpose.toLowerCase().includes(kind.toLowerCase())
        ? capitalize(purpose)
        : undefined;
    const summary =
      named ??
      purposeName ??
      thingName ??
      (kind
        ? capitalize(kind) + (who ? ` with ${who}` : '')
        : who
          ? `Meeting with ${who}`
          : (proper ??
            (purpose && !parseWhen(purpose, s.state.lang, s.state.now)
              ? capitalize(purpose)
              : generic
                ? capitalize(generic)
                : undefined))) ??
      'Meeting';
    put('summary', summary);
    if (!named) derive(s, 'summary', summary, 'no title given: from the kind of event, who it is with, or "Meeting"');
    put('description', description ?? takeQuote(s, ['body']));
    const w = s.when;
    // "block friday afternoon": the part of the day said is the event's span.
    if (w && !w.hasTime && w.windowStart && w.windowEnd && /\b(?:morning|afternoon|evening)\b/i.test(s.clause.canon)) {
      put('start', w.windowStart);
      put('end', w.windowEnd);
      derive(s, 'start', w.windowStart, 'the part of the day said');
    }
    if (w?.start && w.hasTime) {
      put('start', w.start);
      put('end', w.end);
      if (w.zoneNamed) put('time_zone', w.zone);
      if (w.zoneNamed && !/\//.test(w.spans[0] ?? '')) derive(s, 'time_zone', w.zone, `from "${w.spans[0] ?? ''}"`);
      if (!w.end) derive(s, 'end', 'start + 1 h', 'no end or duration given: the default length');
    }
    put('recurrence', w?.recurrence);
  },
  'google_calendar.list_events': (s, put) => {
    const w = s.when;
    if (w?.windowStart) {
      put('time_min', w.windowStart);
      put('time_max', w.windowEnd);
    }
    const q = takeQuote(s, ['quoted', 'title']);
    put('query', q);
    const other = /\bcalendar\s+⟨(\d+)⟩|⟨(\d+)⟩'s\s+calendar/.exec(s.clause.raw);
    const cal = other ? s.state.entities[Number(other[1] ?? other[2])] : undefined;
    if (cal?.kind === 'email') put('calendar_id', cal.value);
  },
  'google_calendar.check_availability': (s, put) => {
    const w = s.when;
    if (w?.windowStart) {
      put('time_min', w.windowStart);
      put('time_max', w.windowEnd);
    }
  },
};
