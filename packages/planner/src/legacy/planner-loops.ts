import { ACTION_VERBS, countOf, entities, numberOf, rx, startsWithVerb } from './planner-text.js';

/**
 * "for each" loops of the deterministic planner. A loop expands into one step per item
 * at planning time, which is how a prompt can exceed the 50-step limit.
 *
 *  - items:   "for each repo in acme/api, acme/web and acme/cli, create an issue …",
 *             "post "hi" to each of #a, #b and #c", "for each number from 1 to 60, echo it",
 *             "echo "hi" 3 times"
 *  - listing: "for each of the last 5 issues in acme/api, add the label "triage"": one list
 *             step, then one step per item referring to {{steps.<list>.output.items.<i>…}}
 */
export type Loop =
  | { kind: 'items'; items: string[]; body: string }
  | { kind: 'listing'; head: string; count: number; explicitCount: boolean; body: string }
  /** "… to each of them": over the items of the step just before. */
  | { kind: 'previous'; body: string };

/** No loop expands beyond this many items (the workflow limit rejects far fewer). */
export const MAX_LOOP_ITEMS = 1000;
/** Items planned for a listing loop that names no count ("for each open issue in acme/api"). */
export const DEFAULT_LOOP_COUNT = 10;

const VERB_ALT = ACTION_VERBS.join('|');
const LISTABLE =
  /^(?:issues?|bugs|tickets|channels?|events?|meetings?|appointments?|emails?|e-mails?|mails?|messages?|pages?|entries|entry|rows?|notes?)$/i;

export function parseLoop(segment: string): Loop | undefined {
  let m = /^(?:for\s+(?:each|every|all)|foreach)\s+(.+)$/i.exec(segment);
  if (m?.[1]) {
    const rest = m[1];
    const split = bodyStart(rest);
    if (!split) return undefined;
    return classify(split.head, split.body);
  }
  m = /^(.+?)\s+(?:for|on|to|in|with|across)\s+(?:each|every|all)\s+(?:one\s+)?(.+)$/i.exec(segment);
  if (m?.[1] && m[2] && startsWithVerb(m[1])) return classify(m[2], m[1]);
  m = /^(.+?)\s+(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twenty|fifty|sixty|hundred)\s+times$/i.exec(segment);
  if (m?.[1] && m[2] && startsWithVerb(m[1])) {
    const n = Math.min(numberOf(m[2]) ?? 1, MAX_LOOP_ITEMS);
    return { kind: 'items', items: Array.from({ length: n }, () => ''), body: m[1] };
  }
  return undefined;
}

/** Where a leading loop's body starts: at ", verb" / ": verb", else at the first verb after the head's first word. */
function bodyStart(rest: string): { head: string; body: string } | undefined {
  const punct = rx(`\\s*(?:,|:|\\s-|\\s—)\\s*(?=(?:${VERB_ALT})\\b)`, 'i').exec(rest);
  if (punct && punct.index > 0) return { head: rest.slice(0, punct.index), body: rest.slice(punct.index + punct[0].length) };
  const firstWord = /^\S+\s+/.exec(rest)?.[0].length ?? 0;
  const verb = rx(`\\s(?=(?:${VERB_ALT})\\b)`, 'i').exec(rest.slice(firstWord));
  if (!verb) return undefined;
  const at = firstWord + verb.index;
  return { head: rest.slice(0, at), body: rest.slice(at + 1) };
}

function classify(headRaw: string, body: string): Loop | undefined {
  const head = headRaw.trim().replace(/[,:]$/, '');
  if (/^(?:of\s+)?(?:them|those|these|the\s+(?:results|items|ones))$|^(?:one\s+of\s+)?(?:them|those|these)$/i.test(head))
    return { kind: 'previous', body };
  const range =
    /(?:from|between)\s+(-?\d+)\s+(?:to|and|through|thru|until|till|-)\s+(-?\d+)/i.exec(head) ??
    /(-?\d+)\s*(?:\.\.|–)\s*(-?\d+)/.exec(head);
  if (range?.[1] && range[2]) {
    const a = Number(range[1]);
    const b = Number(range[2]);
    const step = a <= b ? 1 : -1;
    const n = Math.min(Math.abs(b - a) + 1, MAX_LOOP_ITEMS);
    return { kind: 'items', items: Array.from({ length: n }, (_, i) => String(a + i * step)), body };
  }
  const e = entities(head);
  const noun = nounOf(head);
  const explicit =
    (noun && /^channels?$/i.test(noun) && e.channels.length > 0) ||
    (noun &&
      /^(?:e-?mails?|mails?|messages?|address(?:es)?|people|persons?|users?|recipients?)$/i.test(noun) &&
      e.emails.length > 0 &&
      !/\b(?:from|to)\s+\S+@/i.test(head)) ||
    (noun && /^issues?$/i.test(noun) && e.issueNumbers.length > 0);
  if (noun && LISTABLE.test(noun) && !explicit) {
    const count = countOf(head);
    return {
      kind: 'listing',
      head,
      count: Math.min(count ?? DEFAULT_LOOP_COUNT, MAX_LOOP_ITEMS),
      explicitCount: count !== undefined,
      body,
    };
  }
  const items = literalItems(head);
  return items.length > 0 ? { kind: 'items', items: items.slice(0, MAX_LOOP_ITEMS), body } : undefined;
}

/** The noun the loop ranges over: "of the last 5 open issues in …" → "issues". */
function nounOf(head: string): string | undefined {
  const stripped = head
    .replace(/^(?:one\s+)?(?:of\s+)?(?:the\s+following|the|these|those|my|our|all(?:\s+the)?|every)?\s*/i, '')
    .replace(
      /^(?:(?:last|latest|first|top|recent|newest|oldest|next|upcoming|open|closed|unread|new|most\s+recent|\d+|one|two|three|four|five|six|seven|eight|nine|ten|twenty)\s+)+/i,
      '',
    );
  return /^([a-z-]+)/i.exec(stripped)?.[1];
}

const ITEM_RE =
  /⟦\d+⟧|https?:\/\/[^\s,]+|[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}|(?<![\w./@-])[A-Za-z0-9][\w.-]*\/[A-Za-z0-9][\w.-]*|#[A-Za-z0-9][\w-]*|\b\d+\b/g;

function literalItems(head: string): string[] {
  const tokens = [...head.matchAll(ITEM_RE)].map((m) => m[0].replace(/[.,;:]+$/, ''));
  if (tokens.length > 0) return tokens;
  // Bare words: "for each of alice, bob and carol".
  const list = /(?:\bin|\bof|:)\s+(.+)$/i.exec(head)?.[1];
  if (!list || !/,|\band\b/.test(list)) return [];
  return list
    .split(/\s*(?:,\s*and|,|\band\b|\bor\b)\s*/)
    .map((s) => s.trim())
    .filter(Boolean);
}

const PRONOUN =
  /\b(?:it|them|each(?:\s+one)?|this\s+one|the\s+(?:item|number|value|repo(?:sitory)?|channel|address|email|label|url|name|person|user|one|recipient))\b/gi;

/** The body of an items loop with the item put in: in place of "it"/"the repo"… or appended. */
export function substitute(body: string, item: string): string {
  if (!item) return body;
  if (PRONOUN.test(body)) {
    PRONOUN.lastIndex = 0;
    return body.replace(PRONOUN, item);
  }
  return `${body} ${item}`;
}
