import * as rrule from 'rrule';

export const { RRule } = (rrule as unknown as { default?: typeof rrule }).default ?? rrule;

/** Recurrences ("every Monday", "the second Monday of every month", "tous les lundis") as RFC 5545 lines. */

const WEEKDAYS: Record<string, string> = {
  lundi: 'monday',
  mardi: 'tuesday',
  mercredi: 'wednesday',
  jeudi: 'thursday',
  vendredi: 'friday',
  samedi: 'saturday',
  dimanche: 'sunday',
  montag: 'monday',
  dienstag: 'tuesday',
  mittwoch: 'wednesday',
  donnerstag: 'thursday',
  freitag: 'friday',
  samstag: 'saturday',
  sonntag: 'sunday',
  lunes: 'monday',
  martes: 'tuesday',
  miércoles: 'wednesday',
  miercoles: 'wednesday',
  jueves: 'thursday',
  viernes: 'friday',
  sábado: 'saturday',
  domingo: 'sunday',
};

/** "every Monday", "each weekday", "daily", "tous les lundis", "jeden Montag", "cada lunes" → RFC 5545 lines. */
export function findRecurrence(text: string): { rule: string[]; span: string } | undefined {
  // "on Tuesdays": a weekday in the plural repeats, with or without "weekly".
  const plural = /\bon\s+((?:mon|tues|wednes|thurs|fri|satur|sun)day)s\b/i.exec(text);
  if (plural?.[1] && !/\b(?:every|each)\b/i.test(text)) {
    const rule = new RRule(RRule.fromText(`every ${plural[1].toLowerCase()}`).origOptions).toString();
    return { rule: [rule], span: plural[0] };
  }
  // "the second Monday of every month", "the last Friday of each month".
  const nth =
    /\b(?:on\s+)?(?:the\s+)?(first|1st|second|2nd|third|3rd|fourth|4th|last)\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\s+(?:of\s+)?(?:every|each|the)\s+month\b/i.exec(
      text,
    );
  if (nth?.[1] && nth[2]) {
    const ordinal =
      { first: 1, '1st': 1, second: 2, '2nd': 2, third: 3, '3rd': 3, fourth: 4, '4th': 4, last: -1 }[nth[1].toLowerCase()] ?? 1;
    return { rule: [`RRULE:FREQ=MONTHLY;BYDAY=${ordinal}${nth[2].slice(0, 2).toUpperCase()}`], span: nth[0] };
  }
  const monthDay = /\b(?:on\s+)?the\s+(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?:every|each)\s+month\b/i.exec(text);
  if (monthDay?.[1]) return { rule: [`RRULE:FREQ=MONTHLY;BYMONTHDAY=${Number(monthDay[1])}`], span: monthDay[0] };
  const m =
    /\b(?:every|each|tous les|toutes les|chaque|jeden|jede|alle|cada|todos los|todas las)\s+(?:other\s+|\d+\s+)?(?:[\p{L}]+)(?:(?:\s*,\s*|\s+(?:and|et|und|y)\s+)(?:[\p{L}]+))*(?:\s+for\s+\d+\s+(?:weeks?|days?|months?|times))?/iu.exec(
      text,
    ) ??
    /\b(?:daily|weekly|monthly|yearly|annually|quotidien(?:ne)?|hebdomadaire|täglich|wöchentlich|monatlich|diario|semanal|mensual)\b/iu.exec(
      text,
    );
  if (!m) return undefined;
  let phrase = m[0].toLowerCase();
  for (const [foreign, english] of Object.entries(WEEKDAYS)) phrase = phrase.replace(new RegExp(`${foreign}s?\\b`, 'gu'), english);
  phrase = phrase
    .replace(/\b(?:tous les|toutes les|chaque|jeden|jede|alle|cada|todos los|todas las|each)\b/g, 'every')
    .replace(/\b(?:et|und|y)\b/g, 'and')
    .replace(/\b(?:daily|quotidien(?:ne)?|täglich|diario)\b/, 'every day')
    .replace(/\b(?:weekly|hebdomadaire|wöchentlich|semanal)\b/, 'every week')
    .replace(/\b(?:monthly|monatlich|mensual)\b/, 'every month')
    .replace(/\b(?:yearly|annually)\b/, 'every year')
    .replace(/\bevery other (\w+)/, (_a, d: string) => (/day$/.test(d) && d !== 'day' ? `every 2 weeks on ${d}` : `every 2 ${d}s`))
    .replace(/\bevery (?:morning|evening|night|afternoon)\b/, 'every day')
    .replace(/\bevery (?:jour|tag|día)\b/, 'every day')
    .replace(/\bevery (?:semaine|woche|semana)\b/, 'every week');
  // Only what rrule reads: "every <n>? <unit|weekday list>" (times of day go to the start).
  const core =
    /^every(?:\s+\d+)?\s+(?:day|week(?:day)?|month|year|(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weeks?|days?|months?)(?:\s+on\s+\w+)?(?:(?:\s*,\s*|\s+and\s+)(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))*)(?:\s+for\s+\d+\s+(?:weeks?|days?|months?|times))?/.exec(
      phrase,
    );
  if (!core) return undefined;
  try {
    const options = { ...RRule.fromText(core[0].replace(/\bweekday\b/, 'weekday')).origOptions };
    delete options.byhour;
    delete options.byminute;
    delete options.bysecond;
    delete options.until;
    delete options.dtstart;
    const rule = new RRule(options).toString();
    if (!rule.startsWith('RRULE:')) return undefined;
    return { rule: [rule], span: m[0] };
  } catch {
    return undefined;
  }
}
