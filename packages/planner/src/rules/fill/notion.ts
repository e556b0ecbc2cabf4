import { ref } from '@tes/catalog';
import { entitiesOf, pointsBack, previousData, quoteAfter, referenceFor, takeQuote, type Slots } from '../slots.js';
import { QUOTE } from '../text.js';
import { aboutText, backRef, type Add, type Fill } from './common.js';

/** Per action: what each of its fields comes from. */
export const NOTION_FILLS: Record<string, Fill> = {
  'notion.create_page': (s, put, add) => {
    const c = s.clause.canon;
    const parentKind =
      !/\b(?:database|db)\b/.test(c) &&
      /\b(?:under|inside|in|into|to)\s+(?:the\s+|my\s+|our\s+)?(?:notion\s+)?(?:page|wiki|doc)\b|⟦\d+⟧\s+(?:notion\s+)?page\b/.test(c)
        ? 'page'
        : 'database';
    const parentQuote = quoteAfter(s, /\b(?:in|into|under|to|inside)\s+(?:the|my|our)?\s*(?:notion\s+)?(?:database|db|page|wiki)?/);
    const uuid = entitiesOf(s, 'uuid')[0]?.value;
    const titled = takeQuote(s, ['title', 'quoted']) ?? takeQuote(s, ['colon']);
    put('title', titled);
    const prev = previousData(s.state);
    // "… with this note: launch slipped", "save what you find as a new page": its content.
    put(
      'content',
      takeQuote(s, ['body', 'colon']) ??
        (prev && /\b(?:what you find|what you found|the results?|them|it|those|these|the list)\b/.test(s.clause.canon)
          ? referenceFor(s.clause, prev.index, prev.step)
          : undefined),
    );
    const parentNamed =
      /\b(?:in|into|under|inside)\s+(?:the|my|our)\s+([\p{L}\p{N}][\p{L}\p{N} _-]{0,40}?)\s+(?:notion\s+)?(page|database|db)\b/iu.exec(
        s.clause.raw.replace(QUOTE, ' '),
      );
    if (uuid) put('parent_id', uuid);
    else if (!parentQuote && parentNamed?.[1]) {
      const kind = parentNamed[2]?.toLowerCase() === 'page' ? 'page' : 'database';
      put('parent_id', ref(add({ tool: 'notion', action: 'search', input: { query: parentNamed[1], kind, limit: 1 } }), 'items.0.id'));
      if (kind === 'page') put('parent_type', 'page');
    } else if (parentQuote)
      put(
        'parent_id',
        ref(add({ tool: 'notion', action: 'search', input: { query: parentQuote, kind: parentKind, limit: 1 } }), 'items.0.id'),
      );
    if (parentKind === 'page') put('parent_type', 'page');
  },
  'notion.query_database': (s, put, add) => {
    put('filter', notionFilter(s));
    const inTitle = /⟦(\d+)⟧\s+in\s+(?:the\s+)?(?:title|name)/.exec(s.clause.raw);
    // "with launch in the title": one bare word is the text too.
    const bare = /\b(?:with|having|containing)\s+([\p{L}\p{N}_-]+)\s+in\s+(?:the\s+|its\s+)?(?:title|name)\b/iu.exec(s.clause.raw)?.[1];
    if (!inTitle?.[1] && bare) put('filter_text', bare);
    if (inTitle?.[1]) {
      s.state.usedQuotes.add(Number(inTitle[1]));
      put('filter_text', s.state.quotes[Number(inTitle[1])]?.text);
    }
    put('database_id', lookup(s, add, 'database'));
  },
  'notion.search': (s, put) => {
    put('query', takeQuote(s, ['title', 'quoted', 'colon']) ?? aboutText(s, /\b(?:for|about|named|called|titled|on)\s+(.+)$/i));
    if (/\bdatabases?\b/.test(s.clause.canon)) put('kind', 'database');
    else if (/\bpages?\b/.test(s.clause.canon)) put('kind', 'page');
  },
  'notion.get_page': (s, put, add) => put('page_id', lookup(s, add, 'page')),
  'notion.append_to_page': (s, put, add) => {
    const content = takeQuote(s, ['body', 'colon']) ?? takeQuote(s, ['quoted']);
    const prev = previousData(s.state);
    // "… and log the link on page X": the field named of what the step before made.
    put('content', content ?? (prev ? referenceFor(s.clause, prev.index, prev.step) : backRef(s)));
    put('page_id', lookup(s, add, 'page'));
  },
};

function lookup(s: Slots, add: Add, kind: 'page' | 'database'): string | undefined {
  const uuid = entitiesOf(s, 'uuid')[0]?.value;
  if (uuid) return uuid;
  const noun = kind === 'database' ? '(?:database|db|table)' : '(?:page|doc|note|wiki)';
  const bare = s.clause.raw.replace(QUOTE, ' ');
  const named =
    new RegExp(`\\b(?:the|my|our)\\s+([\\p{L}\\p{N}][\\p{L}\\p{N} _-]{0,40}?)\\s+(?:notion\\s+)?${noun}\\b`, 'iu').exec(bare)?.[1] ??
    new RegExp(`\\b${noun}\\s+(?:called\\s+|named\\s+)?([\\p{Lu}\\p{N}][\\p{L}\\p{N}_-]*)`, 'u').exec(bare)?.[1];
  const title =
    takeQuote(s, ['title', 'colon', 'quoted']) ?? (named && !/^(?:notion|same|new|this|that)$/i.test(named) ? named : undefined);
  if (!title) {
    const prev = previousData(s.state);
    if (prev && pointsBack(s.clause) && /^notion\.(?:create_page|get_page)$/.test(`${prev.step.tool}.${prev.step.action}`))
      return ref(prev.index, 'id');
    return undefined;
  }
  s.state.topic ??= title;
  const i = add({ tool: 'notion', action: 'search', input: { query: title, kind, limit: 1 } });
  return ref(i, 'items.0.id');
}

/** "where Status is Done", "whose Assignee contains Maria", "whose Done checkbox is unchecked". */
function notionFilter(s: Slots): Record<string, unknown> | undefined {
  const raw = s.clause.raw;
  const value = (quote: string | undefined, word: string | undefined) => {
    if (quote) {
      s.state.usedQuotes.add(Number(quote));
      return s.state.quotes[Number(quote)]?.text;
    }
    return word;
  };
  const checkbox =
    /\b(?:where|whose|with)\s+(?:the\s+)?([\p{L}\p{N} _-]{1,40}?)\s+(?:checkbox|box)\s+(?:is\s+)?(un)?(?:checked|ticked|true|false)/iu.exec(
      raw,
    );
  if (checkbox?.[1]) return { property: checkbox[1].trim(), checkbox: !checkbox[2] && !/false/i.test(checkbox[0]) };
  const m =
    /\b(?:where|whose|with)\s+(?:the\s+)?([\p{L}\p{N} _-]{1,40}?)\s+(is|=|equals|contains|includes|has)\s+(?:⟦(\d+)⟧|([\p{L}\p{N}_-]+))/iu.exec(
      raw,
    );
  if (!m?.[1]) return undefined;
  const v = value(m[3], m[4]);
  if (!v) return undefined;
  return { property: m[1].trim(), [/^(?:contains|includes|has)$/i.test(m[2] ?? '') ? 'contains' : 'equals']: v };
}
