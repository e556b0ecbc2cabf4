/**
 * Text analysis for the deterministic planner: pure functions, no I/O.
 * Quoted passages are masked first (⟦n⟧) so that nothing inside quotes is taken for a
 * keyword, a separator or an entity; they come back as arguments.
 */

const REGEX_CACHE = new Map<string, RegExp>();

/** A RegExp built once per (source, flags): the planner's dynamic patterns are compiled a single time. */
export function rx(source: string, flags = ''): RegExp {
  const key = `${flags}/${source}`;
  let r = REGEX_CACHE.get(key);
  if (!r) {
    r = new RegExp(source, flags);
    REGEX_CACHE.set(key, r);
  }
  if (r.global || r.sticky) r.lastIndex = 0;
  return r;
}

export interface Masked {
  /** The prompt with every quoted passage replaced by ⟦n⟧. */
  text: string;
  quotes: string[];
}

const QUOTE_PATTERNS = [/"([^"]*)"/g, /“([^”]*)”/g, /‘([^’]*)’/g, /(^|[\s(:=,[])'([^']+)'(?=$|[\s.,;:!?)\]])/g];

export function mask(prompt: string): Masked {
  const quotes: string[] = [];
  let text = prompt;
  for (const re of QUOTE_PATTERNS) {
    text = text.replace(re, (...m: string[]) => {
      const single = re.source.startsWith('(^|');
      const lead = single ? (m[1] ?? '') : '';
      const body = single ? (m[2] ?? '') : (m[1] ?? '');
      quotes.push(body);
      return `${lead}⟦${quotes.length - 1}⟧`;
    });
  }
  return { text, quotes };
}

export const QUOTE_TOKEN = /⟦(\d+)⟧/g;

/** Puts the quoted passages back, with their quotes. */
export function unmask(text: string, quotes: readonly string[]): string {
  return text.replace(QUOTE_TOKEN, (_m, i: string) => `"${quotes[Number(i)] ?? ''}"`);
}

/** Indexes of the quotes a masked clause holds, in order. */
export function quoteIndexes(masked: string): number[] {
  return [...masked.matchAll(QUOTE_TOKEN)].map((m) => Number(m[1]));
}

/** Verbs that start a new action; used to split "X and post Y" and to find a loop's body. */
export const ACTION_VERBS = [
  'create',
  'open',
  'file',
  'raise',
  'report',
  'post',
  'send',
  'share',
  'notify',
  'tell',
  'message',
  'ping',
  'announce',
  'list',
  'find',
  'show',
  'get',
  'fetch',
  'search',
  'query',
  'look',
  'check',
  'read',
  'download',
  'retrieve',
  'comment',
  'reply',
  'add',
  'label',
  'tag',
  'email',
  'mail',
  'schedule',
  'book',
  'echo',
  'repeat',
  'say',
  'uppercase',
  'lowercase',
  'count',
  'make',
  'write',
  'save',
  'record',
  'log',
  'describe',
  'pluck',
  'join',
  'forward',
  'shout',
] as const;
const VERB_ALT = ACTION_VERBS.join('|');

/**
 * Splits a masked prompt into top-level segments on strong separators: "then",
 * "and then", "after that", "afterwards", "finally", ";", new lines and sentence ends.
 */
export function splitSegments(masked: string): string[] {
  return masked
    .split(
      /\s*(?:;|\n+|,?\s+and\s+then\b,?|,?\s+then\b,?|,?\s+after\s+that\b,?|,?\s+afterwards\b,?|,?\s+and\s+finally\b,?|,?\s+finally\b,?|(?<=[.!?])\s+(?=[A-Z⟦]))\s*/i,
    )
    .map(cleanClause)
    .filter((s) => s.length > 0);
}

/** Splits a non-loop segment further where a new action verb starts: "…, post …", "… and send …". */
export function splitActions(segment: string): string[] {
  // "… and label \"bug\"" stays with its clause: labels of the thing being created.
  const re = rx(`\\s*(?:,\\s*and|,|\\s+and|\\s+also)\\s+(?=(?:${VERB_ALT})\\b)(?!(?:label|tag)(?:s|ged|led|ed)?\\s+(?:as\\s+)?⟦)`, 'i');
  return segment
    .split(re)
    .map(cleanClause)
    .filter((s) => s.length > 0);
}

export function cleanClause(s: string): string {
  let out = s.trim();
  for (let i = 0; i < 3; i++) {
    out = out
      .replace(/^(?:then|and|also|please|after\s+that|afterwards)\b[,:]?\s*/i, '')
      .replace(rx(`^(?:first(?:ly)?|next|finally|lastly)\\s*(?:,\\s*|(?=(?:${VERB_ALT})\\b))`, 'i'), '');
  }
  return out.replace(/[\s,.;:!?]+$/, '').trim();
}

export function startsWithVerb(s: string): boolean {
  return rx(`^(?:please\\s+)?(?:${VERB_ALT})\\b`, 'i').test(s.trim());
}

export function words(masked: string): Set<string> {
  return new Set(
    masked
      .replace(QUOTE_TOKEN, ' ')
      .toLowerCase()
      .split(/[^a-z0-9_'-]+/)
      .filter(Boolean),
  );
}

// ---- entities ----

export interface Repo {
  owner: string;
  repo: string;
}

export interface Entities {
  urls: string[];
  emails: string[];
  repos: Repo[];
  channels: string[];
  issueNumbers: number[];
  count?: number;
}

const URL_RE = /\bhttps?:\/\/[^\s<>"'⟦⟧]+/gi;
const EMAIL_RE = /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b/g;
const REPO_RE = /(?<![\w./@:#-])([A-Za-z0-9][A-Za-z0-9_.-]*)\/([A-Za-z0-9][A-Za-z0-9_.-]*)(?![\w/-])/g;
const CHANNEL_RE = /(?:^|[\s(,:])#([A-Za-z][A-Za-z0-9_-]*)/g;
const NOT_OWNERS = new Set(['and', 'or', 'either', 'w', 'n', 'a', 'i', 'he', 'she', 'his', 'her', 'read', 'input', 'client', 'true']);

export function entities(masked: string): Entities {
  const hasUrl = masked.includes('://');
  const urls = hasUrl ? [...masked.matchAll(URL_RE)].map((m) => m[0].replace(/[.,;:!?)]+$/, '')) : [];
  let rest = hasUrl ? masked.replace(URL_RE, ' ') : masked;
  const hasAt = rest.includes('@');
  const emails = hasAt ? [...rest.matchAll(EMAIL_RE)].map((m) => m[0]) : [];
  if (hasAt) rest = rest.replace(EMAIL_RE, ' ');
  const repos: Repo[] = [];
  for (const m of rest.includes('/') ? rest.matchAll(REPO_RE) : []) {
    const owner = m[1] ?? '';
    const repo = (m[2] ?? '').replace(/\.+$/, '');
    if (/^\d+$/.test(owner) || /^\d+$/.test(repo) || NOT_OWNERS.has(owner.toLowerCase()) || !repo) continue;
    repos.push({ owner, repo });
  }
  const hasHash = rest.includes('#');
  const channels = hasHash ? [...rest.matchAll(CHANNEL_RE)].map((m) => (m[1] ?? '').toLowerCase()) : [];
  const issueNumbers = [
    ...(hasHash ? [...rest.matchAll(/(?:^|[\s(,])#(\d+)\b/g)].map((m) => Number(m[1])) : []),
    ...[...rest.matchAll(/\b(?:issue|pr|pull request|ticket)\s+(?:number\s+|no\.?\s*)?(\d+)\b/gi)].map((m) => Number(m[1])),
  ];
  const count = countOf(rest);
  return { urls, emails, repos, channels, issueNumbers: [...new Set(issueNumbers)], ...(count !== undefined ? { count } : {}) };
}

const NUMBER_WORDS: Record<string, number> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  hundred: 100,
  dozen: 12,
};
const N = `(\\d+|${Object.keys(NUMBER_WORDS).join('|')})`;

export function numberOf(s: string): number | undefined {
  const n = /^\d+$/.test(s) ? Number(s) : NUMBER_WORDS[s.toLowerCase()];
  return n !== undefined && Number.isFinite(n) ? n : undefined;
}

const NOUNS =
  'issues?|channels?|events?|meetings?|appointments?|emails?|e-mails?|mails?|messages?|pages?|entries|entry|items?|results?|rows?|records?|notes?|comments?';

/** "the last 5 issues", "top 3", "10 most recent", "up to 20", "5 emails". */
export function countOf(masked: string): number | undefined {
  const patterns = [
    rx(`\\b(?:last|latest|first|top|recent|newest|oldest|next)\\s+${N}\\b`, 'i'),
    rx(`\\b${N}\\s+(?:most\\s+recent|latest|newest|recent|last|oldest|open|closed|unread|upcoming)\\b`, 'i'),
    rx(`\\b(?:up\\s+to|limit(?:\\s+of)?|at\\s+most|max(?:imum)?(?:\\s+of)?)\\s+${N}\\b`, 'i'),
    rx(`\\b${N}\\s+(?:${NOUNS})\\b`, 'i'),
  ];
  for (const re of patterns) {
    const m = re.exec(masked);
    const n = m?.[1] ? numberOf(m[1]) : undefined;
    if (n !== undefined && n > 0) return n;
  }
  return undefined;
}

// ---- dates and times (UTC) ----

export interface When {
  /** Start instant, when the text names a day and/or a time. */
  start?: Date;
  /** End instant, from "from 2pm to 3pm" or a duration. */
  end?: Date;
  /** A span for listing: "today", "this week", "next 3 days", a date. */
  range?: { min: Date; max: Date };
  durationMin?: number;
}

const DAY_MS = 86_400_000;
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH_RE =
  '(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';

function startOfDay(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
}

/** The day the text names, if any (UTC midnight). */
function dayOf(t: string, now: Date): { day: Date; span?: number } | undefined {
  const today = startOfDay(now);
  let m = /\b(\d{4})-(\d{2})-(\d{2})\b/.exec(t);
  if (m) return { day: new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) };
  if (/\bday\s+after\s+tomorrow\b/i.test(t)) return { day: new Date(today.getTime() + 2 * DAY_MS) };
  if (/\btomorrow\b/i.test(t)) return { day: new Date(today.getTime() + DAY_MS) };
  if (/\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b/i.test(t)) return { day: today };
  if (/\bnext\s+week\b/i.test(t)) {
    const toMonday = (1 - today.getUTCDay() + 7) % 7 || 7;
    return { day: new Date(today.getTime() + toMonday * DAY_MS), span: 7 };
  }
  m = rx(`\\bin\\s+${N}\\s+days?\\b`, 'i').exec(t);
  if (m?.[1]) return { day: new Date(today.getTime() + (numberOf(m[1]) ?? 0) * DAY_MS) };
  m = rx(`\\b${MONTH_RE}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?(?:,?\\s+(\\d{4}))?\\b`, 'i').exec(t);
  const m2 = rx(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH_RE}(?:,?\\s+(\\d{4}))?\\b`, 'i').exec(t);
  const md = m ? { mon: m[1], d: m[2], y: m[3] } : m2 ? { mon: m2[2], d: m2[1], y: m2[3] } : undefined;
  if (md?.mon && md.d) {
    const month = MONTHS.indexOf(md.mon.slice(0, 3).toLowerCase());
    let year = md.y ? Number(md.y) : now.getUTCFullYear();
    let day = new Date(Date.UTC(year, month, Number(md.d)));
    if (!md.y && day.getTime() < today.getTime()) day = new Date(Date.UTC(++year, month, Number(md.d)));
    return { day };
  }
  m = /\b(?:(next|this|on|coming)\s+)?(sunday|monday|tuesday|wednesday|thursday|friday|saturday)\b/i.exec(t);
  if (m?.[2]) {
    const wd = WEEKDAYS.indexOf(m[2].toLowerCase());
    let ahead = (wd - today.getUTCDay() + 7) % 7;
    if (ahead === 0 && m[1]?.toLowerCase() !== 'this') ahead = 7;
    return { day: new Date(today.getTime() + ahead * DAY_MS) };
  }
  return undefined;
}

/** Minutes after midnight of one time expression ("3pm", "3:30 pm", "15:00", "noon"). */
export function minutesOf(s: string): number | undefined {
  const t = s.trim().toLowerCase();
  if (t === 'noon' || t === 'midday') return 12 * 60;
  if (t === 'midnight') return 0;
  const m = /^(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?$/.exec(t);
  if (!m) return undefined;
  let h = Number(m[1]);
  const min = m[2] ? Number(m[2]) : 0;
  const ap = m[3]?.[0];
  if (ap === 'p' && h < 12) h += 12;
  if (ap === 'a' && h === 12) h = 0;
  // "at 3" with neither am/pm nor minutes: business hours, 1–7 mean the afternoon.
  if (!ap && !m[2] && h >= 1 && h <= 7) h += 12;
  if (h > 23 || min > 59) return undefined;
  return h * 60 + min;
}

const TIME = '(\\d{1,2}(?::\\d{2})?\\s*(?:am|pm|a\\.m\\.|p\\.m\\.)?|noon|midday|midnight)';

function timesOf(t: string): { start?: number; end?: number } {
  let m = rx(`\\b(?:from|between)\\s+${TIME}\\s+(?:to|and|until|till|-)\\s+${TIME}`, 'i').exec(t);
  if (m?.[1] && m[2]) {
    let s = minutesOf(m[1]);
    const e = minutesOf(m[2]);
    // "from 2 to 3pm": the first takes the second's half of the day.
    if (s !== undefined && e !== undefined && s > e && !/am|pm/i.test(m[1])) s -= 12 * 60;
    if (s !== undefined && e !== undefined) return { start: s, end: e };
  }
  m = /(?<![\d:-])(\d{1,2}(?::\d{2})?\s*(?:am|pm)?)\s*[-–]\s*(\d{1,2}(?::\d{2})?\s*(?:am|pm))\b/i.exec(t);
  if (m?.[1] && m[2]) {
    const half = /pm/i.test(m[2]) ? 'pm' : 'am';
    const s = minutesOf(/am|pm/i.test(m[1]) ? m[1] : `${m[1]}${half}`);
    const e = minutesOf(m[2]);
    if (s !== undefined && e !== undefined) return { start: s, end: e };
  }
  m = rx(`\\bat\\s+${TIME}(?![\\w/:-])`, 'i').exec(t);
  if (m?.[1]) {
    const s = minutesOf(m[1]);
    if (s !== undefined) return { start: s };
  }
  m = /\b(\d{1,2}(?::\d{2})?\s*(?:am|pm))\b/i.exec(t) ?? /(?<![\d:-])(\d{1,2}:\d{2})(?![\d:])/.exec(t);
  if (m?.[1]) {
    const s = minutesOf(m[1]);
    if (s !== undefined) return { start: s };
  }
  if (/\bnoon\b/i.test(t)) return { start: 12 * 60 };
  if (/\btonight\b|\bthis\s+evening\b/i.test(t)) return { start: 19 * 60 };
  if (/\bmorning\b/i.test(t)) return { start: 9 * 60 };
  if (/\bafternoon\b/i.test(t)) return { start: 14 * 60 };
  return {};
}

function durationOf(t: string): number | undefined {
  if (/\bhalf\s+an?\s+hour\b|\b30[- ]?min/i.test(t)) return 30;
  let m = rx(`\\bfor\\s+(an?|${N.slice(1, -1)})\\s*(minutes?|mins?|hours?|hrs?|h)\\b`, 'i').exec(t);
  if (!m)
    m = rx(
      `\\b(an?|${N.slice(1, -1)})[- ]?(minutes?|mins?|hours?|hrs?|h)[- ](?:long\\s+)?(?:meeting|call|event|sync|slot|session|chat)\\b`,
      'i',
    ).exec(t);
  if (!m?.[1] || !m[2]) return undefined;
  const n = /^an?$/i.test(m[1]) ? 1 : numberOf(m[1]);
  if (n === undefined) return undefined;
  return /^h/i.test(m[2]) ? n * 60 : n;
}

/** Dates, times, spans and durations in a masked clause, resolved against `now` (UTC). */
export function whenOf(masked: string, now: Date): When {
  const t = masked.replace(QUOTE_TOKEN, ' ').replace(URL_RE, ' ');
  const out: When = {};
  const dur = durationOf(t);
  if (dur !== undefined) out.durationMin = dur;

  const iso = /\b(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?(Z|[+-]\d{2}:?\d{2})?/i.exec(t);
  if (iso) {
    const d = new Date(`${iso[1]}T${iso[2]}:${iso[3]}:${iso[4] ?? '00'}${iso[5] ? iso[5].toUpperCase() : 'Z'}`);
    if (!Number.isNaN(d.getTime())) out.start = d;
  }
  const rel = rx(`\\bin\\s+${N}\\s+(minutes?|mins?|hours?|hrs?)\\b`, 'i').exec(t);
  if (!out.start && rel?.[1] && rel[2]) {
    const n = numberOf(rel[1]) ?? 0;
    out.start = new Date(now.getTime() + (/^h/i.test(rel[2]) ? n * 60 : n) * 60_000);
  }
  const day = dayOf(t, now);
  if (!out.start) {
    const times = timesOf(t.replace(/\b\d{4}-\d{2}-\d{2}\b/g, ' '));
    if (times.start !== undefined) {
      let base = day?.day ?? startOfDay(now);
      // A bare time already past today means the next occurrence.
      if (!day && base.getTime() + times.start * 60_000 <= now.getTime()) base = new Date(base.getTime() + DAY_MS);
      out.start = new Date(base.getTime() + times.start * 60_000);
      if (times.end !== undefined) out.end = new Date(base.getTime() + times.end * 60_000);
    } else if (day) {
      out.start = new Date(day.day.getTime() + 9 * 60 * 60_000);
    }
  }
  if (out.start && !out.end && out.durationMin !== undefined) out.end = new Date(out.start.getTime() + out.durationMin * 60_000);

  // Spans, for listing.
  const nextDays = rx(`\\b(?:next|coming)\\s+${N}\\s+days\\b`, 'i').exec(t);
  if (nextDays?.[1]) out.range = { min: now, max: new Date(now.getTime() + (numberOf(nextDays[1]) ?? 7) * DAY_MS) };
  else if (/\bthis\s+week\b/i.test(t)) {
    const today = startOfDay(now);
    const toMonday = (1 - today.getUTCDay() + 7) % 7 || 7;
    out.range = { min: now, max: new Date(today.getTime() + toMonday * DAY_MS) };
  } else if (day) out.range = { min: day.day, max: new Date(day.day.getTime() + (day.span ?? 1) * DAY_MS) };
  return out;
}
