import type * as chrono from 'chrono-node';
import { DateTime } from 'luxon';
import type { Lang } from './lexicon.js';
import { NUMBER_WORDS } from './numbers.js';
import { PARSERS } from './time.js';

/** Windows of a search ("since Monday", "the past two weeks", "between Feb 1 and Feb 15") as after/before days. */

export function parseSearchWindow(raw: string, lang: Lang, now: Date): { after?: string; before?: string; span: string } | undefined {
  const text = raw.replace(/\bbetween\s+(.+?)\s+and\s+/i, 'from $1 to ');
  // "in the past two weeks", "over the last 3 days": from that long ago until now.
  const span =
    /\b(?:in\s+|over\s+|during\s+|for\s+|from\s+)?the\s+(?:past|last|previous)\s+(\d+|a|one|two|three|four|five|six|seven|eight|nine|ten|couple of|few)?\s*(day|week|month|year)s?\b/i.exec(
      text,
    );
  if (span?.[2]) {
    const n = NUMBER_WORDS[(span[1] ?? '1').toLowerCase()] ?? Number(span[1]);
    const unit = span[2].toLowerCase() as 'day' | 'week' | 'month' | 'year';
    const from = DateTime.fromJSDate(now, { zone: 'UTC' }).minus({ [`${unit}s`]: Number.isFinite(n) ? n : 1 });
    return { after: from.toISODate() ?? '', span: span[0] };
  }
  const results = PARSERS[lang].parse(text, { instant: now, timezone: 0 }, { forwardDate: false });
  const r = results[0];
  if (!r) return undefined;
  const day = (c: chrono.ParsedComponents) =>
    DateTime.fromObject({ year: c.get('year') ?? 0, month: c.get('month') ?? 1, day: c.get('day') ?? 1 }, { zone: 'UTC' });
  const start = day(r.start);
  const fmt = (d: DateTime) => d.toISODate() ?? '';
  const before = /\b(?:before|until|avant|vor|antes)\s*$/i.test(text.slice(0, r.index).trimEnd());
  if (before) return { before: fmt(start), span: r.text };
  if (r.end) return { after: fmt(start), before: fmt(day(r.end).plus({ days: 1 })), span: r.text };
  const since = /\b(?:since|after|depuis|seit|desde)(?:\s+(?:el|le|la|the|dem|den))?\s*$/i.test(text.slice(0, r.index).trimEnd());
  if (/\bthis week\b|cette semaine|diese woche|esta semana/i.test(text)) {
    const monday = DateTime.fromJSDate(now, { zone: 'UTC' }).startOf('week');
    return { after: fmt(monday), span: r.text };
  }
  if (since) return { after: fmt(start), span: r.text };
  if (/\bmonth\b|mois|monat|\bmes\b/i.test(r.text))
    return { after: fmt(start.startOf('month')), before: fmt(start.startOf('month').plus({ months: 1 })), span: r.text };
  if (/\bweek\b|semaine|woche|semana/i.test(r.text))
    return { after: fmt(start.startOf('week')), before: fmt(start.startOf('week').plus({ days: 7 })), span: r.text };
  if (!r.start.isCertain('day') && r.start.isCertain('month'))
    return { after: fmt(start.startOf('month')), before: fmt(start.startOf('month').plus({ months: 1 })), span: r.text };
  return { after: fmt(start), before: fmt(start.plus({ days: 1 })), span: r.text };
}
