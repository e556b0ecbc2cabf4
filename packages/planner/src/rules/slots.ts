import { ref } from '@tes/catalog';
import type { Lang } from './lexicon.js';
import { correctWord } from './words.js';
import { ENTITY, QUOTE, type Clause, type Entity, type EntityKind, type Quote } from './text.js';
import { parseWhen, type When } from './time.js';
import { NUMBER_WORDS } from './numbers.js';
import { parseSearchWindow } from './windows.js';

/**
 * Argument extraction: what a clause says for each input field of the action it asks for. Every
 * extractor answers a value or nothing; the planner refuses when a required field stays empty.
 */

export interface StepDraft {
  tool: string;
  action: string;
  input: Record<string, unknown>;
}

/** What the planner knows while it goes through the clauses. */
export interface PlanState {
  lang: Lang;
  now: Date;
  quotes: Quote[];
  entities: Entity[];
  steps: StepDraft[];
  /** Quotes already given to a field. */
  usedQuotes: Set<number>;
  /** "… in acme/api, then list the PRs" keeps the repo; same for a channel. */
  repo?: string;
  channel?: string;
  /** Inside "for each" over a listing: the list step and the item this copy of the body acts on. */
  item?: { step: number; index: number; field: string };
  /** A source this clause planned for its delivery ("post the agenda to #team"): the delivery carries it. */
  sourced?: boolean;
  /** Values derived rather than read, for the preview ("subject: … (from the message)"). */
  derived: string[];
  /** What a delivery is about when it carries an earlier step's output (a page's title, "Issues of acme/api"): its default subject. */
  topic?: string;
}

export interface Slots {
  clause: Clause;
  state: PlanState;
  /** The clause's quotes (indexes into state.quotes), in order. */
  quoteIds: number[];
  /** The clause's entities, in order. */
  ents: Entity[];
  when: When | undefined;
}

const DATE_WORDS =
  /^(?:today|tonight|tomorrow|yesterday|monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|month|morning|afternoon|evening|noon|midnight)$/;

/** "tomorow at 3" → "tomorrow at 3": misspelt date words corrected for the date parser, nothing else touched. */
function fixDateWords(text: string): string {
  return text.replace(/[\p{L}\d]{3,}/gu, (w) => {
    const fixed = correctWord(w.toLowerCase());
    return fixed !== w.toLowerCase() && DATE_WORDS.test(fixed) ? fixed : w;
  });
}

export function slotsOf(clause: Clause, state: PlanState): Slots {
  const quoteIds = [...clause.raw.matchAll(QUOTE)].map((m) => Number(m[1]));
  const ents = [...clause.raw.matchAll(ENTITY)].map((m) => state.entities[Number(m[1])]).filter((e): e is Entity => !!e);
  // Dates may sit in a cut-out title or colon text ("add an event: Dentist, March 11 at 5:30 pm").
  const plain = clause.raw
    .replace(QUOTE, (_m, i: string) => {
      const q = state.quotes[Number(i)];
      return q && (q.role === 'colon' || q.role === 'title') ? ` ${q.text} ` : ' ';
    })
    .replace(ENTITY, (_m, i: string) => {
      const e = state.entities[Number(i)];
      return e?.kind === 'number' ? ` #${e.value} ` : ' ';
    });
  const when = parseWhen(fixDateWords(plain), state.lang, state.now);
  return { clause, state, quoteIds, ents, when };
}

export function entitiesOf(s: Slots, kind: EntityKind): Entity[] {
  return s.ents.filter((e) => e.kind === kind);
}

/** The first unused quote of the clause with one of the roles (quoted texts count for any role). */
export function takeQuote(s: Slots, roles: readonly string[], { anyQuoted = true } = {}): string | undefined {
  for (const id of s.quoteIds) {
    const q = s.state.quotes[id];
    if (!q || s.state.usedQuotes.has(id)) continue;
    if (roles.includes(q.role)) {
      s.state.usedQuotes.add(id);
      return q.text;
    }
  }
  if (!anyQuoted) return undefined;
  for (const id of s.quoteIds) {
    const q = s.state.quotes[id];
    if (!q || s.state.usedQuotes.has(id) || q.role !== 'quoted') continue;
    s.state.usedQuotes.add(id);
    return q.text;
  }
  return undefined;
}

/** The quote right after a keyword in the raw clause ("labeled 'bug'", "subject 'Hi'"). */
export function quoteAfter(s: Slots, keyword: RegExp): string | undefined {
  const re = new RegExp(`${keyword.source}\\s*(?:[:=]|as|to|is|of)?\\s*⟦(\\d+)⟧`, 'iu');
  // In the user's words, or in canonical English ("na base de dados ⟦0⟧" reads "in the database ⟦0⟧").
  const m = re.exec(s.clause.raw) ?? re.exec(s.clause.canon);
  if (!m?.[1]) return undefined;
  const id = Number(m[1]);
  const q = s.state.quotes[id];
  if (!q) return undefined;
  s.state.usedQuotes.add(id);
  return q.text;
}

/** Words that point back at an earlier step's output. */
export function pointsBack(clause: Clause): boolean {
  return /\b(?:what comes back|what you get|what it returns|what you find|what is on it|how many|it|its|them|they|their|those|these|that|this|results?|list|output|response|findings|answer|same|above|contents?|summary|link|url|the (?:title|titles|star count|stars|number|issues?|prs?|pull requests?|events?|meetings?|emails?|messages?|pages?|channels?|repos?|repositories|numbers?|values?|items?|body|text|data|count|total|draft|page|email|issue))\b/.test(
    clause.canon,
  );
}

// ---- counts ----

export function countOf(s: Slots): number | undefined {
  const c = s.clause.canon.replace(QUOTE, ' ').replace(ENTITY, ' ');
  const n = (w: string | undefined) => (w === undefined ? undefined : /^\d+$/.test(w) ? Number(w) : NUMBER_WORDS[w]);
  for (const re of [
    /\b(?:last|latest|first|top|recent|next|newest|oldest|up to|at most|limit(?: to)?|max(?:imum)?)\s+(\d+|[a-z]+)\b/,
    /\b(\d+|[a-z]+)\s+(?:most\s+recent|latest|newest|last|recent)\b/,
    /\b(\d+)\s+(?:[a-z]+\s+)?(?!(?:minutes|hours|days|weeks|months|years|seconds|times|mins|hrs)\b)([a-z]{3,}s)\b/,
  ]) {
    const m = re.exec(c);
    // "the last 3 days" is a window, not a count.
    if (m && /^\s*(?:days?|weeks?|months?|years?|hours?|minutes?)\b/.test(c.slice((m.index ?? 0) + m[0].length))) continue;
    const v = n(m?.[1]);
    if (v !== undefined && v >= 1 && v <= 100) return v;
  }
  return undefined;
}

/** "3 times", "twice", "thrice": how often a step is repeated (1 when not said). */
export function repetitions(clause: Clause): number {
  const c = clause.canon.replace(QUOTE, ' ');
  if (/\btwice\b|\bdeux fois\b|\bzweimal\b|\bdos veces\b/.test(c)) return 2;
  if (/\bthrice\b/.test(c)) return 3;
  const m = /\b(\d+|two|three|four|five|six|seven|eight|nine|ten)\s+(?:times|fois|mal|veces)\b/.exec(c);
  if (!m?.[1]) return 1;
  return /^\d+$/.test(m[1]) ? Number(m[1]) : (NUMBER_WORDS[m[1]] ?? 1);
}

// ---- references ----

/** What a clause means of an earlier step's output: "the link" its url, "its title", "the star count", else the whole. */
export function referenceFor(clause: Clause, index: number, step: StepDraft): string {
  const c = clause.canon;
  const key = `${step.tool}.${step.action}`;
  if (/\b(?:link|url)\b/.test(c) && !LIST_ACTIONS.has(key)) return ref(index, 'url');
  if (/\b(?:its|the) title\b/.test(c) && !LIST_ACTIONS.has(key)) return ref(index, 'title');
  if (/\b(?:its|the) (?:body|description)\b/.test(c) && /^github\.(?:get|create)_(?:issue|pull_request)$/.test(key))
    return ref(index, 'body');
  if (/\bstar(?:s| count)\b/.test(c) && key === 'github.get_repository') return ref(index, 'stars');
  if (/\bhow many\b|\bthe (?:count|number|total)\b/.test(c) && LIST_ACTIONS.has(key)) return ref(index, 'count');
  return outputRef(index, step);
}

/** The output field a later step means by "it" / "them" for a given step. */
export function outputRef(index: number, step: StepDraft): string {
  const key = `${step.tool}.${step.action}`;
  const field = LIST_ACTIONS.has(key) ? 'items' : (PRIMARY_FIELD[key] ?? '');
  return ref(index, field);
}

export const LIST_ACTIONS = new Set([
  'github.list_issues',
  'github.list_pull_requests',
  'github.search_repositories',
  'slack.list_channels',
  'slack.list_messages',
  'google_calendar.list_events',
  'gmail.search_email',
  'notion.query_database',
  'notion.search',
]);

const PRIMARY_FIELD: Record<string, string> = {
  'github.get_repository': '',
  'github.get_issue': '',
  'github.get_pull_request': '',
  'github.create_issue': '',
  'notion.get_page': 'text',
  'notion.create_page': '',
  'http.fetch': 'body',
  'http.post': 'body',
  'text.echo': 'text',
  'text.uppercase': 'text',
  'text.lowercase': 'text',
  'text.count_words': 'words',
  'data.count': 'count',
  'data.pluck': 'values',
  'data.join': 'text',
  'google_calendar.check_availability': '',
  'google_calendar.create_event': '',
};

/** Steps that deliver something (what "it" never means). */
export const DELIVERIES = new Set([
  'slack.post_message',
  'slack.send_direct_message',
  'slack.invite_to_channel',
  'slack.create_channel',
  'gmail.send_email',
  'gmail.create_draft',
  'gmail.reply_to_email',
  'github.comment_on_issue',
  'github.comment_on_pull_request',
  'github.add_labels',
  'github.close_issue',
  'github.reopen_issue',
  'github.update_issue',
  'github.merge_pull_request',
  'notion.append_to_page',
]);

/** The latest step that produced data, for "it" / "them". */
export function previousData(state: PlanState): { index: number; step: StepDraft } | undefined {
  for (let i = state.steps.length - 1; i >= 0; i--) {
    const step = state.steps[i];
    if (step && !DELIVERIES.has(`${step.tool}.${step.action}`)) return { index: i, step };
  }
  return undefined;
}

export function searchWindow(s: Slots): { after?: string; before?: string } | undefined {
  const plain = s.clause.raw.replace(QUOTE, ' ').replace(ENTITY, ' ');
  if (
    !/\b(?:today|yesterday|since|last|this|past|week|month|in|on|before|after|from|between|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|december|\d{4}-\d{2}-\d{2}|hier|aujourd|gestern|heute|ayer|hoy|depuis|seit|desde)\b/i.test(
      plain,
    )
  )
    return undefined;
  const w = parseSearchWindow(plain, s.state.lang, s.state.now);
  if (!w) return undefined;
  return { ...(w.after ? { after: w.after } : {}), ...(w.before ? { before: w.before } : {}) };
}
