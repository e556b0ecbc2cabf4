import { MAX_PLANNED_STEPS } from './limits.js';
import { previousData, type PlanState } from './slots.js';
import { ENTITY, type Clause, type Prepared } from './text.js';

/** Loops ("for each …", "for each number from 1 to 60") and the several targets one clause names. */

/** What a "for each" goes over: named items, or the items of a listing (planned first, or the step before). */
export type Each = { kind: 'items'; body: string; items: number[] } | { kind: 'listing'; body: string; list?: string; count: number };

/** The field of a listed item a body step takes: an issue's or PR's number, a channel's name. */
export const ITEM_FIELDS: Record<string, string> = {
  'github.list_issues': 'number',
  'github.list_pull_requests': 'number',
  'slack.list_channels': 'name',
};
export const DEFAULT_LOOP_COUNT = 10;

export function forEach(clause: Clause, prepared: Prepared, state: PlanState): Each | undefined {
  const raw = clause.raw.trim();
  // "For each of a@x.io and b@x.io, send …", "for every repo in acme/api, acme/web and acme/cli, create …"
  const items = /^for\s+(?:each|every)\s+(?:of\s+|[\p{L}]+\s+(?:in|of)\s+)?((?:⟨\d+⟩\s*(?:,|and|&)?\s*){2,})\s*,?\s*(.+)$/iu.exec(raw);
  if (items?.[1] && items[2]) return { kind: 'items', body: items[2], items: [...items[1].matchAll(/⟨(\d+)⟩/g)].map((m) => Number(m[1])) };
  // "For each of the last 5 issues in acme/api, add the label 'triage'"
  const listing = /^for\s+(?:each|every)\s+(?:of\s+)?(.+?),\s*(.+)$/iu.exec(raw);
  if (
    listing?.[1] &&
    listing[2] &&
    /\b(?:issues?|prs?|pull requests?|channels?)\b/i.test(listing[1]) &&
    !/^(?:number|integer)\b/i.test(listing[1])
  ) {
    const n = /\b(\d{1,3})\b/.exec(listing[1].replace(/⟨\d+⟩|⟦\d+⟧/g, ' '))?.[1];
    const head = listing[1].replace(/^(?:the\s+)?/i, '').replace(/\b(issue|pr|pull request|channel)\b(?!s)/gi, '$1s');
    return { kind: 'listing', body: listing[2], list: `list the ${head}`, count: n ? Number(n) : DEFAULT_LOOP_COUNT };
  }
  // "… then post 'hello' to each of them": over the listing before.
  const last = previousData(state);
  if (
    last &&
    ITEM_FIELDS[`${last.step.tool}.${last.step.action}`] &&
    /\b(?:to|on|for|in)\s+each\s+(?:of\s+)?(?:them|those|these)\b/i.test(raw)
  ) {
    const limit = last.step.input['limit'];
    return {
      kind: 'listing',
      body: raw.replace(/\s*\b(?:to|on|for|in)\s+each\s+(?:of\s+)?(?:them|those|these)\b/i, ''),
      count: typeof limit === 'number' ? limit : DEFAULT_LOOP_COUNT,
    };
  }
  void prepared;
  return undefined;
}

/** "For each number from 1 to 60, echo it". */
export function numberLoop(clause: Clause): { from: number; to: number } | undefined {
  const m = /\bfor (?:each|every) (?:number|integer|n) (?:from )?(\d{1,6}) (?:to|through|until|-) (\d{1,6})\b/.exec(clause.canon);
  if (!m) return undefined;
  const from = Number(m[1]);
  const to = Number(m[2]);
  return to >= from ? { from, to: Math.min(to, from + MAX_PLANNED_STEPS) } : undefined;
}

export function numbersOf(clause: Clause, state: PlanState): number[] {
  const out: number[] = [];
  // The numbers acted on are the first and those listed with it ("#4, #5 and #6"); one after
  // "of", "from", "than", "like" ("dupe of #398") is only mentioned.
  const numbers = [...clause.raw.matchAll(/⟨(\d+)⟩/g)].filter((m) => state.entities[Number(m[1])]?.kind === 'number');
  for (const [i, m] of numbers.entries()) {
    const e = state.entities[Number(m[1])];
    if (!e) continue;
    const before = clause.raw.slice(0, m.index);
    const listed = i === 0 || /(?:,|\band\b|&|\+)\s*(?:(?:issue|pr|pull request|ticket|bug)s?\s*)?#?\s*$/i.test(before);
    if (
      !listed ||
      /\b(?:of|from|than|like|as|to|by|with|after|before|since)\s+(?:(?:issue|pr|pull request|ticket|bug)s?\s*)?#?\s*$/i.test(before)
    )
      break;
    out.push(Number(e.value));
  }
  // "issues 4 and 5": the numbers after the first are bare digits.
  const more = /\b(?:issues|prs|pull requests|tickets|bugs)\s+(?:#?(\d+)|⟨\d+⟩)((?:\s*(?:,|and|&)\s*#?\d+)+)/i.exec(clause.raw);
  if (more?.[2])
    for (const d of [...(more[1] ? [more[1]] : []), ...(more[2].match(/\d+/g) ?? [])]) if (!out.includes(Number(d))) out.push(Number(d));
  return out;
}

export function channelsOf(clause: Clause, state: PlanState): string[] {
  const out: string[] = [];
  for (const m of clause.raw.matchAll(ENTITY)) {
    const e = state.entities[Number(m[1])];
    if (e?.kind === 'channel') out.push(e.value);
  }
  return out;
}
