import * as chrono from 'chrono-node';
import { DateTime, IANAZone } from 'luxon';
import { findRecurrence, RRule } from './recurrence.js';
import type { Lang } from './lexicon.js';
import ZONES from '../language/zones.json' with { type: 'json' };

/**
 * Dates, times, time zones and recurrence, with the libraries made for them: chrono-node (and its
 * French, German and Spanish parsers) reads dates and times, luxon places them in an IANA zone from
 * the platform's data, rrule turns "every Monday" into an RFC 5545 rule.
 */

// rrule ships a UMD bundle: Node's ESM loader sees only its default export, CommonJS (jest) sees the names.

export interface When {
  /** ISO 8601 with the zone's offset. */
  start?: string;
  end?: string;
  /** The start had an hour ("at 3pm"), not just a day. */
  hasTime: boolean;
  /** The window the words mean, for listings: a day, a week, or start…end. */
  windowStart?: string;
  windowEnd?: string;
  /** IANA zone named in the text, or UTC. */
  zone: string;
  zoneNamed: boolean;
  recurrence?: string[];
  /** The texts that made it (to keep them out of titles and message texts). */
  spans: string[];
}

/** Zone abbreviations, cities without a zone of their own, and the words that say "time in" (data). */
const ABBREVIATIONS: Readonly<Record<string, string>> = ZONES.abbreviations;

/**
 * A city's name → its IANA zone: every city of the platform's zone data (Berlin → Europe/Berlin,
 * New York → America/New_York), but the regions whose names are mostly people's or common words
 * (Antarctica's Casey and Davis, Indiana's Tell City), plus the cities and short names of the data.
 */
const CITY_ZONES: ReadonlyMap<string, string> = new Map([
  ...Intl.supportedValuesOf('timeZone')
    .filter((z) => z.includes('/') && !ZONES.excluded_regions.some((r) => z.startsWith(`${r}/`)))
    .map((z) => [(z.split('/').pop() ?? z).replace(/_/g, ' ').toLowerCase(), z] as const),
  ...Object.entries(ZONES.cities).map(([city, zone]) => [city.normalize('NFD').replace(/\p{M}/gu, ''), zone] as const),
]);
const LONGEST_CITY = Math.max(...[...CITY_ZONES.keys()].map((c) => c.split(' ').length));
const ZONE_WORDS = new Set(ZONES.zone_words);
/** A clock time a city can follow ("1pm Paris", "noon in Denver", "9:30 sydney time"). */
const CLOCK = /^(?:\d{1,2}(?::\d{2})?(?:am|pm|h|uhr)?|noon|midnight|midi|mittag|mediodía|meio-dia|mezzogiorno|am|pm|uhr)$/i;

/**
 * Names already asked about (luxon builds an Intl.DateTimeFormat to tell, tens of µs, and every
 * "owner/repo" of a prompt is asked twice: planning, then checkPlan). The platform's zone data does
 * not change while the process runs; bounded, since the names come from prompts.
 */
const zoneAnswers = new Map<string, boolean>();
const ZONE_ANSWERS_MAX = 1024;

export function isZone(name: string): boolean {
  if (!name.includes('/')) return false;
  let valid = zoneAnswers.get(name);
  if (valid === undefined) {
    valid = IANAZone.isValidZone(name);
    if (zoneAnswers.size >= ZONE_ANSWERS_MAX) zoneAnswers.clear();
    zoneAnswers.set(name, valid);
  }
  return valid;
}

/** The zone a text names, and the text that named it. */
/**
 * A city named as the zone of a time: followed by a zone word ("Berlin time", "Amsterdamse tijd",
 * "hora de Madrid"), or right after a clock time ("1pm Paris", "noon in Denver"). "LA" only in capitals.
 */
function cityZone(text: string): { zone: string; span: string } | undefined {
  const tokens = [...text.matchAll(/[\p{L}\p{N}:.'-]+/gu)].map((m) => ({ word: m[0].replace(/[.']+$/, ''), at: m.index ?? 0 }));
  for (let i = 0; i < tokens.length; i++) {
    for (let k = Math.min(LONGEST_CITY, tokens.length - i); k >= 1; k--) {
      const words = tokens.slice(i, i + k);
      const said = words.map((t) => t.word).join(' ');
      // "São Paulo" is the zone data's "Sao Paulo".
      const key = said.toLowerCase().normalize('NFD').replace(/\p{M}/gu, '');
      const zone = CITY_ZONES.get(key) ?? CITY_ZONES.get(key.replace(/(?:se|er|s)$/u, ''));
      if (!zone || (key === 'la' && said !== 'LA')) continue;
      const before = tokens.slice(Math.max(0, i - 3), i).map((t) => t.word.toLowerCase());
      const after = tokens[i + k]?.word.toLowerCase();
      const beforeWord = tokens[i - 1]?.word.toLowerCase() ?? '';
      const zoneWord = after !== undefined && ZONE_WORDS.has(after);
      const ofZone = ['de', 'in', 'di', 'van'].includes(beforeWord) && ZONE_WORDS.has(tokens[i - 2]?.word.toLowerCase() ?? '');
      const afterClock =
        CLOCK.test(before[before.length - 1] ?? '') ||
        (['in', 'at', ','].includes(beforeWord) && CLOCK.test(before[before.length - 2] ?? ''));
      if (!zoneWord && !ofZone && !afterClock) continue;
      const first = tokens[ofZone ? i - 2 : i] as { at: number };
      const last = tokens[i + k - 1 + (zoneWord ? 1 : 0)] as { word: string; at: number };
      return { zone, span: text.slice(first.at, last.at + last.word.length) };
    }
  }
  return undefined;
}

/** A word or name of a city the zone data knows ("Paris", "São Paulo"): a place, not an event's name. */
export function isCity(word: string): boolean {
  return CITY_ZONES.has(word.toLowerCase().normalize('NFD').replace(/\p{M}/gu, ''));
}

export function findZone(text: string): { zone: string; span: string } | undefined {
  const iana = /\b([A-Z][A-Za-z]+(?:_[A-Za-z]+)*\/[A-Z][A-Za-z_]+(?:\/[A-Za-z_]+)?)\b/.exec(text);
  if (iana?.[1] && isZone(iana[1])) return { zone: iana[1], span: iana[0] };
  const abbr = /\b(CEST|CET|PST|PDT|PT|EST|EDT|ET|CST|CDT|MST|MDT|GMT|UTC|BST|IST|JST|AEST|AEDT|SGT|HKT|KST|BRT|EET|EEST|WET)\b/.exec(text);
  if (abbr?.[1]) return { zone: ABBREVIATIONS[abbr[1].toLowerCase()] ?? 'UTC', span: abbr[0] };
  const named = /\b(pacific|eastern|central european|central|mountain)(\s+(?:standard\s+|daylight\s+)?time)?\b/i.exec(text);
  if (
    named?.[1] &&
    (named[2] ||
      /\b(?:am|pm|\d)\s*(?:pacific|eastern|central|mountain)\b/i.test(text) ||
      /\b(?:pacific|eastern|central european|mountain)\b/i.test(named[1]))
  )
    return { zone: ABBREVIATIONS[named[1].toLowerCase()] ?? 'UTC', span: named[0] };
  return cityZone(text);
}

export const PARSERS: Record<Lang, chrono.Chrono> = {
  en: chrono.en.casual,
  fr: chrono.fr.casual,
  de: chrono.de.casual,
  es: chrono.es.casual,
  pt: chrono.pt.casual,
  it: chrono.it.casual,
  nl: chrono.nl.casual,
};

/** The duration a text gives ("for 30 minutes", "an hour", "45-minute", "1h30"), in minutes. */
export function findDuration(text: string): { minutes: number; span: string } | undefined {
  const m =
    /\b(?:for\s+)?(?:(an?|one|half an?|\d+(?:\.\d+)?)\s*[- ]?\s*(hours?|hrs?|h|minutes?|mins?|m)\b(?:\s*(?:and\s+)?(\d+)\s*(?:minutes?|mins?|m)\b)?|(\d+)h(\d+))/i.exec(
      text,
    );
  if (!m) return undefined;
  if (m[4] && m[5]) return { minutes: Number(m[4]) * 60 + Number(m[5]), span: m[0] };
  const amount = m[1]?.toLowerCase() ?? '';
  const n = /^half/.test(amount) ? 0.5 : /^(?:an?|one)$/.test(amount) ? 1 : Number(amount);
  const unit = (m[2] ?? '').toLowerCase();
  const isHours = /^h/.test(unit);
  if (!isHours && unit === 'm' && !/\d/.test(amount)) return undefined;
  let minutes = isHours ? n * 60 : n;
  if (m[3]) minutes += Number(m[3]);
  if (!Number.isFinite(minutes) || minutes <= 0 || minutes > 60 * 24 * 14) return undefined;
  return { minutes, span: m[0] };
}

/**
 * When a clause speaks of: chrono reads the date and time in the clause's language, the zone
 * places it (UTC when none is named), a duration or a range gives the end.
 */
export function parseWhen(text: string, lang: Lang, now: Date, { past = false } = {}): When | undefined {
  const zoneFound = findZone(text);
  const zone = zoneFound?.zone ?? 'UTC';
  const recurrence = findRecurrence(text);
  let input = text;
  if (zoneFound) input = input.replace(zoneFound.span, ' ');
  input = input
    // "às 10h", "15h30": the hour as chrono reads it in every language.
    .replace(/\b(\d{1,2})h(\d{2})?\b/giu, (_m, h: string, m?: string) => `${h}:${m ?? '00'}`)
    .replace(/\bbetween\s+(\d{1,2}(?::\d{2})?\s*(?:am|pm)?)\s+and\s+(\d{1,2}(?::\d{2})?\s*(?:am|pm)?)/i, 'from $1 to $2')
    .replace(/\bentre\s+(\d{1,2}(?::\d{2}|h\d{0,2})?)\s+et\s+(\d{1,2}(?::\d{2}|h\d{0,2})?)/i, 'de $1 à $2')
    // Dutch "vrij" is free, not Friday (chrono's nl reads it as vrijdag).
    .replace(/\bvrij\b/giu, ' ')
    .replace(/\bzwischen\s+(\d{1,2}(?::\d{2})?)\s+und\s+(\d{1,2}(?::\d{2})?)(\s*uhr)?/i, 'von $1 bis $2$3')
    .replace(/\bentre\s+las\s+(\d{1,2}(?::\d{2})?)\s+y\s+las\s+(\d{1,2}(?::\d{2})?)/i, 'de $1 a $2')
    .replace(/\b(tous les|toutes les|chaque|jeden|jede|cada|todos los|todas las|every|each)\s+/giu, ' ')
    // "on Tuesdays" (a recurrence, read above): chrono reads the weekday in the singular.
    .replace(/\b((?:mon|tues|wednes|thurs|fri|satur|sun)day)s\b/giu, '$1');
  // UTC (no zone named, nearly always) has no offset: luxon would format a date to tell.
  const offset = zone === 'UTC' ? 0 : IANAZone.create(zone).offset(now.getTime());
  const today = DateTime.fromJSDate(now, { zone });
  // "on the 12th" / "the 1st of every month": the next such day.
  input = input.replace(/\b(?:on\s+)?the\s+(\d{1,2})(?:st|nd|rd|th)\b(?:\s+of\s+(?:every|each)?\s*month)?/i, (_m, d: string) => {
    const day = Number(d);
    const month = day >= today.day ? today : today.plus({ months: 1 });
    return ` on ${month.toFormat('LLLL', { locale: 'en' })} ${day}`;
  });
  // "30 minute call", "a 2 hour review", "for 30 minutes": a duration, not "in 30 minutes".
  const dated = input.replace(/\bfor\s+(?:an?\s+|\d+(?:[.,]\d+)?\s*-?\s*)(?:min(?:ute)?s?|h(?:ou)?rs?|hours?)\b/giu, ' ');
  const results = PARSERS[lang]
    .parse(dated, { instant: now, timezone: offset }, { forwardDate: !past })
    .filter((r) => !/^(?:an?\s+)?\d+\s*-?\s*(?:min(?:ute)?s?|h(?:ou)?rs?|hours?)$/i.test(r.text.trim()));
  const spans = [...(zoneFound ? [zoneFound.span] : []), ...(recurrence ? [recurrence.span] : [])];
  if (results.length === 0) {
    if (!recurrence) return undefined;
    return { hasTime: false, zone, zoneNamed: !!zoneFound, recurrence: recurrence.rule, spans };
  }
  const first = results[0] as chrono.ParsedResult;
  // "06:40" or "16:00" written: a 24-hour clock, no afternoon guessing.
  const h24 = /\b0\d:\d\d\b|\b(?:1[3-9]|2[0-3]):\d\d\b/.test(input);
  // "next Thursday … 2pm" may come as two results: a day and a time.
  const second = results[1];
  let hasTime = first.start.isCertain('hour') || (second?.start.isCertain('hour') ?? false);
  // "my 3pm meeting tomorrow": the time came first, the day second.
  const dayless = !first.start.isCertain('day') && !first.start.isCertain('weekday');
  const dayOf = dayless && second && (second.start.isCertain('day') || second.start.isCertain('weekday')) ? second.start : first.start;
  const timeOf = first.start.isCertain('hour') ? first.start : (second?.start ?? first.start);
  const place = (c: chrono.ParsedComponents, hourFrom: chrono.ParsedComponents = c): DateTime =>
    DateTime.fromObject(
      {
        year: c.get('year') ?? undefined,
        month: c.get('month') ?? undefined,
        day: c.get('day') ?? undefined,
        hour: hasTime ? afternoon(hourFrom, false, h24) : 0,
        minute: hasTime ? (hourFrom.get('minute') ?? 0) : 0,
        second: 0,
      },
      { zone },
    );
  let start = place(dayOf, timeOf);
  // "next Wednesday" said on a Wednesday is a week away, not today.
  const nowLocal = DateTime.fromJSDate(now, { zone });
  if (/\bnext\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b/i.test(input) && start.hasSame(nowLocal, 'day'))
    start = start.plus({ days: 7 });
  // A past day without a weekday or a date ("at 3pm" said at 5pm) means the next one.
  const nowInZone = DateTime.fromJSDate(now, { zone });
  if (!past && hasTime && start < nowInZone && !dayOf.isCertain('day') && !dayOf.isCertain('weekday')) start = start.plus({ days: 1 });
  // "the last Friday of every month": the first occurrence is the start (RFC 5545 counts DTSTART as one).
  if (recurrence && /BYDAY=-?\d/.test(recurrence.rule[0] ?? '')) {
    const rule = RRule.fromString(`DTSTART:${start.startOf('day').toUTC().toFormat("yyyyMMdd'T'HHmmss'Z'")}\n${recurrence.rule[0] ?? ''}`);
    const first = rule.after(nowLocal.startOf('day').toUTC().toJSDate(), true);
    if (first) {
      const day = DateTime.fromJSDate(first, { zone: 'UTC' });
      start = start.set({ year: day.year, month: day.month, day: day.day });
    }
  }
  let end: DateTime | undefined;
  // "de 14:00 a 16:00", "von 10 bis 11 Uhr", "3-4pm": a range the language's parser read as one time.
  const range =
    /(?<![\d/-])\b(\d{1,2})(?::(\d{2}))?\s*(?:h|uhr)?\s*(?:-|–|to|a|à|bis|until|till)\s*(\d{1,2})(?::(\d{2}))?\s*(am|pm|h|uhr)?\b(?![-/]\d)/i.exec(
      input,
    );
  if (range && !first.end) {
    const [, h1, m1, h2, m2, suffix] = range;
    const pm = /pm/i.test(suffix ?? '');
    const hour = (h: string | undefined) => {
      const n = Number(h);
      return pm && n < 12 ? n + 12 : !suffix && !m1 && n >= 1 && n <= 7 ? n + 12 : n;
    };
    hasTime = true;
    start = start.set({ hour: hour(h1), minute: Number(m1 ?? 0) });
    end = start.set({ hour: hour(h2), minute: Number(m2 ?? 0) });
    if (end <= start) end = end.plus({ hours: 12 });
  }
  const endComponents = first.end ?? (second && !second.start.isCertain('day') && first.start.isCertain('hour') ? second.start : undefined);
  if (!end && endComponents && (endComponents.isCertain('hour') || endComponents.isCertain('day'))) {
    end = endComponents.isCertain('hour')
      ? start.set({ hour: afternoon(endComponents, start.hour >= 12, h24), minute: endComponents.get('minute') ?? 0 })
      : place(endComponents);
    if (end <= start && endComponents.isCertain('hour')) end = end.plus({ days: endComponents.isCertain('day') ? 0 : 1 });
    if (endComponents.isCertain('day') && endComponents.isCertain('hour')) end = place(endComponents, endComponents);
  }
  const duration = findDuration(input.replace(first.text, ' '));
  if (!end && duration && hasTime) {
    end = start.plus({ minutes: duration.minutes });
    spans.push(duration.span);
  }
  const isWeek = /\b(?:week|semaine|woche|semana)\b/i.test(first.text);
  // "tomorrow afternoon": the part of the day, when no hour is said.
  const part = hasTime ? undefined : DAY_PARTS.find((p) => p.re.test(input));
  const windowStart = hasTime ? start : part ? start.startOf('day').set({ hour: part.from }) : start.startOf('day');
  const windowEnd =
    end ??
    (hasTime
      ? start.plus({ hours: 1 })
      : part
        ? windowStart.set({ hour: part.to })
        : isWeek
          ? windowStart.plus({ days: 7 })
          : windowStart.plus({ days: 1 }));
  spans.push(...results.slice(0, 2).map((r) => r.text));
  const iso = (d: DateTime) => d.toISO({ suppressMilliseconds: true }) ?? d.toString();
  return {
    start: iso(start),
    ...(end ? { end: iso(end) } : {}),
    hasTime,
    windowStart: iso(windowStart),
    windowEnd: iso(windowEnd),
    zone,
    zoneNamed: !!zoneFound,
    ...(recurrence ? { recurrence: recurrence.rule } : {}),
    spans,
  };
}

const DAY_PARTS = [
  { re: /\bmorning|\bmatin|\bvormittag|\bmorgens|\bmañana por la mañana/i, from: 8, to: 12 },
  { re: /\bafternoon|\baprès-midi|\bnachmittag|\btarde/i, from: 12, to: 18 },
  { re: /\bevening|\btonight|\bsoir|\babend|\bnoche/i, from: 17, to: 22 },
];

/** An hour from 1 to 7 said without am/pm is in the afternoon ("between 2 and 4"), as people mean it at work. */
function afternoon(c: chrono.ParsedComponents, pm = false, h24 = false): number {
  const hour = c.get('hour') ?? 0;
  // "06:40" is a 24-hour time: not shifted.
  if (c.isCertain('meridiem') || hour === 0 || hour > 12 || h24) return hour;
  return (hour >= 1 && hour <= 7) || (pm && hour < 12) ? hour + 12 : hour;
}

/** A past window for searches ("since Monday", "last week", "in March", "yesterday"): YYYY-MM-DD bounds. */
