import { ref, type ToolDef } from '@tes/catalog';
import { QUOTE_TOKEN, entities, quoteIndexes, rx, unmask, whenOf, words, type Entities, type Repo, type When } from './planner-text.js';

/** What the planner remembers from clause to clause: "… in acme/api, then list issues" keeps the repo. */
export interface PlanContext {
  now: Date;
  repo?: Repo;
  channel?: string;
  databaseId?: string;
  url?: string;
}

export interface PrevStep {
  index: number;
  tool: string;
  action: string;
}

export type ListKind = 'issue' | 'channel' | 'event' | 'message' | 'page';

/** One item of a "for each" loop over an earlier listing: item `index` of step `step`'s `items`. */
export interface ItemRef {
  step: number;
  index: number;
  kind: ListKind;
}

export interface BuiltStep {
  tool: string;
  action: string;
  input: Record<string, unknown>;
}

/** The list actions, the kind of item they list, and the field that names an item. */
export const LISTINGS: Record<string, { kind: ListKind; title: string }> = {
  'github.list_issues': { kind: 'issue', title: 'title' },
  'slack.list_channels': { kind: 'channel', title: 'name' },
  'google_calendar.list_events': { kind: 'event', title: 'summary' },
  'gmail.search_email': { kind: 'message', title: 'subject' },
  'notion.query_database': { kind: 'page', title: 'title' },
};

/** The output field a later step means by "it", "them", "the results". */
const PRIMARY: Record<string, string> = {
  'github.create_issue': '',
  'github.comment_on_issue': 'body',
  'github.add_labels': 'labels',
  'github.get_repository': '',
  'slack.post_message': 'text',
  'google_calendar.create_event': '',
  'gmail.send_email': '',
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
};

export function primaryRef(prev: PrevStep): string {
  const key = `${prev.tool}.${prev.action}`;
  return ref(prev.index, LISTINGS[key] ? 'items' : (PRIMARY[key] ?? ''));
}

const BACK_REFERENCE =
  /\b(?:it|its|them|they|those|these|(?:a|an)\s+(?:summary|list|report|overview|digest|recap)|the\s+(?:results?|list|output|response|body|data|summary|count|total|text|answer|findings|same)|(?:the|that|this)\s+(?:new\s+)?(?:issues?|channels?|events?|meetings?|emails?|messages?|pages?|comments?|repo(?:sitory)?|numbers?|values?))\b/i;

// ---- tool choice ----

const NAME_WORDS: Record<string, readonly string[]> = {
  github: ['github', 'gh'],
  slack: ['slack'],
  google_calendar: ['calendar', 'gcal'],
  gmail: ['gmail'],
  notion: ['notion'],
  http: ['http', 'url'],
  text: ['text'],
  data: ['data'],
};

/** Keyword score of each tool for one masked clause: tool names 3, tool keywords 2, action keywords 1, entities 1–3. */
export function scoreTools(masked: string, tools: readonly ToolDef[]): { tool: ToolDef; score: number }[] {
  const w = words(masked);
  const e = entities(masked);
  const lower = masked.replace(QUOTE_TOKEN, ' ').toLowerCase();
  return tools.map((tool) => {
    let score = 0;
    if ((NAME_WORDS[tool.name] ?? [tool.name]).some((n) => w.has(n)) || w.has(tool.name)) score += 3;
    for (const k of tool.keywords) if (w.has(k)) score += 2;
    if (score > 0 || e.repos.length + e.channels.length + e.urls.length + e.emails.length > 0 || tool.service === null) {
      score += Math.max(0, ...tool.actions.map((a) => (a.keywords ?? []).filter((k) => w.has(k)).length));
    }
    switch (tool.name) {
      case 'github':
        if (e.repos.length) score += 3;
        if (e.issueNumbers.length) score += 2;
        break;
      case 'slack':
        if (e.channels.length) score += 3;
        break;
      case 'gmail':
        if (e.emails.length && !/\b(?:meeting|event|calendar|invite|schedule|appointment|call|book|sync|standup)/.test(lower)) score += 2;
        break;
      case 'http':
        if (e.urls.length) score += 3;
        break;
      case 'text':
        // A verb of its own alone is enough for the text tool ("echo …").
        if (!/\b(?:echo|repeat|say|uppercase|upper|lowercase|lower|shout|words?)\b/.test(lower)) score = Math.min(score, 1);
        break;
      case 'data':
        if (
          /\b(?:how many|count (?:them|those|these|it)|count the (?:results|items|issues|channels|events|emails|messages|pages)|pluck|join|total)\b/.test(
            lower,
          )
        )
          score += 2;
        else score = Math.min(score, 1);
        break;
    }
    return { tool, score };
  });
}

export function chooseTool(masked: string, tools: readonly ToolDef[]): { tool: ToolDef; score: number } | undefined {
  let best: { tool: ToolDef; score: number } | undefined;
  for (const s of scoreTools(masked, tools)) if (s.score > (best?.score ?? 0)) best = s;
  return best && best.score >= 2 ? best : undefined;
}

// ---- action choice ----

const CREATE_ISSUE =
  /\b(?:create|file|raise|submit|make|log)\b[^⟦]*?\b(?:issue|bug|ticket)\b|\bopen\s+(?:a|an|new|one)\b|\b(?:report|file)\s+(?:a|an)\s+(?:bug|issue)\b|\badd\s+(?:a|an|new)\s+(?:issue|bug|ticket)\b|\bnew\s+(?:issue|bug|ticket)\b/;

export function chooseAction(tool: ToolDef, masked: string): string {
  const t = masked.replace(QUOTE_TOKEN, ' ').toLowerCase();
  const has = (name: string) => tool.actions.some((a) => a.name === name);
  const pick = (name: string) => (has(name) ? name : undefined);
  let chosen: string | undefined;
  switch (tool.name) {
    case 'github':
      if (/\bcomment|\breply\b|\brespond\b/.test(t)) chosen = pick('comment_on_issue');
      else if (CREATE_ISSUE.test(t)) chosen = pick('create_issue');
      else if (/\b(?:add|apply|put|set)\b[^.]*\blabels?\b|^\s*(?:label|tag|mark)\b|\b(?:label|tag)\s+(?:it|them|issue|#)/.test(t))
        chosen = pick('add_labels');
      else if (/\b(?:describe|info|information|details|stars?|about|summary|how popular)\b/.test(t) && !/\bissues\b/.test(t))
        chosen = pick('get_repository');
      else if (/\bissues?\b|\bbugs\b|\btickets\b/.test(t)) chosen = pick('list_issues');
      else chosen = pick('get_repository');
      break;
    case 'slack':
      chosen =
        /\bchannels\b/.test(t) && !/\b(?:post|send|say|tell|notify|announce|share|write|ping)\b/.test(t)
          ? pick('list_channels')
          : pick('post_message');
      break;
    case 'google_calendar':
      chosen = /\b(?:create|schedule|book|add|set\s+up|arrange|plan|put|invite|new|organi[sz]e)\b/.test(t)
        ? pick('create_event')
        : pick('list_events');
      break;
    case 'gmail': {
      const send = /\b(?:send|write|reply|forward|compose|mail)\b|^\s*email\b|\bemail\s+(?:it|them|\S+@)/.test(t);
      const search = /\b(?:search|find|list|show|check|read|look|any|latest|last|recent|unread|get)\b/.test(t);
      chosen =
        send && !(search && !/\b(?:send|write|reply|forward|compose)\b/.test(t) && !/^\s*email\b/.test(t))
          ? pick('send_email')
          : pick('search_email');
      break;
    }
    case 'notion':
      chosen = /\b(?:create|add|new|write|make|save|record|log|note\s+down|put|jot)\b/.test(t)
        ? pick('create_page')
        : pick('query_database');
      break;
    case 'http':
      chosen =
        /\b(?:post|submit|send|call|trigger|notify)\b/.test(t) && !/\bfetch|\bget\b|\bdownload/.test(t) ? pick('post') : pick('fetch');
      break;
    case 'text':
      if (/\b(?:uppercase|upper|shout|caps|capitali[sz]e)\b/.test(t)) chosen = pick('uppercase');
      else if (/\b(?:lowercase|lower)\b/.test(t)) chosen = pick('lowercase');
      else if (/\bcount\b|\bhow many words\b|\bword count\b/.test(t)) chosen = pick('count_words');
      else chosen = pick('echo');
      break;
    case 'data':
      if (/\bpluck\b|\bextract\b|\bfield\b/.test(t)) chosen = pick('pluck');
      else if (/\bjoin\b|\bcombine\b|\bconcatenate\b/.test(t)) chosen = pick('join');
      else chosen = pick('count');
      break;
  }
  if (chosen) return chosen;
  // A tool the planner has no rules for (custom tools): the action with most keyword hits, else the first.
  const w = words(masked);
  let best = tool.actions[0]?.name ?? '';
  let bestHits = 0;
  for (const a of tool.actions) {
    const hits = (a.keywords ?? []).filter((k) => w.has(k)).length + (w.has(a.name) ? 2 : 0);
    if (hits > bestHits) [best, bestHits] = [a.name, hits];
  }
  return best;
}

// ---- arguments ----

export interface BuildInput {
  tool: ToolDef;
  action: string;
  masked: string;
  quotes: readonly string[];
  ctx: PlanContext;
  prev?: PrevStep | undefined;
  item?: ItemRef | undefined;
}

/** Argument extraction for one clause; quotes are consumed as they are used. */
class Args {
  readonly e: Entities;
  readonly t: string;
  readonly when: When;
  private readonly free: number[];

  constructor(readonly b: BuildInput) {
    this.e = entities(b.masked);
    this.t = b.masked;
    this.when = whenOf(b.masked, b.ctx.now);
    this.free = quoteIndexes(b.masked);
  }

  get backRef(): boolean {
    return this.b.prev !== undefined && BACK_REFERENCE.test(this.t.replace(QUOTE_TOKEN, ' '));
  }

  /** The quote right after one of `keywords` ("titled ⟦0⟧", "with the body: ⟦1⟧"). */
  quoteAfter(keywords: string): string | undefined {
    const re = rx(
      `\\b(?:${keywords})\\b\\s*(?:(?:of|as|to|is|=|:|-)\\s*)?(?:the\\s+|a\\s+|an\\s+)?(?:(?:text|message|title|body|subject|name|label|labels|words?)\\s*:?\\s*)?⟦(\\d+)⟧`,
      'i',
    );
    const m = re.exec(this.t);
    if (!m?.[1]) return undefined;
    return this.take(Number(m[1]));
  }

  /** Every quote right after one of `keywords`, including lists: `labels "a", "b" and "c"`. */
  quotesAfter(keywords: string): string[] {
    const re = rx(`\\b(?:${keywords})\\b\\s*:?\\s*((?:⟦\\d+⟧(?:\\s*(?:,|and|or|&)\\s*)*)+)`, 'i');
    const m = re.exec(this.t);
    if (!m?.[1]) return [];
    return [...m[1].matchAll(QUOTE_TOKEN)].map((q) => this.take(Number(q[1])) ?? '').filter(Boolean);
  }

  take(i: number): string | undefined {
    const at = this.free.indexOf(i);
    if (at < 0) return undefined;
    this.free.splice(at, 1);
    return this.b.quotes[i];
  }

  firstFree(): string | undefined {
    const i = this.free[0];
    return i === undefined ? undefined : this.take(i);
  }

  restFree(): string[] {
    const out: string[] = [];
    for (let q = this.firstFree(); q !== undefined; q = this.firstFree()) out.push(q);
    return out;
  }

  repo(): Repo | undefined {
    return this.e.repos[0] ?? this.b.ctx.repo;
  }

  /** Unquoted words after the verb, up to a preposition that starts a target ("to #x", "in a/b"). */
  looseText(verbs: string): string | undefined {
    const m = rx(
      `\\b(?:${verbs})\\b\\s*:?\\s+(.+?)(?=\\s+(?:to|in|on|into)\\s+(?:#|the\\s+\\S+\\s+channel|[\\w.-]+/)|\\s+(?:to|for)\\s+\\S+@|$)`,
      'i',
    ).exec(this.t);
    const text = m?.[1]?.replace(QUOTE_TOKEN, (_x, i: string) => this.b.quotes[Number(i)] ?? '').trim();
    if (!text || (BACK_REFERENCE.test(text) && text.split(/\s+/).length <= 3)) return undefined;
    return text;
  }

  itemRef(path = ''): string | undefined {
    const it = this.b.item;
    return it ? ref(it.step, `items.${it.index}${path ? `.${path}` : ''}`) : undefined;
  }

  itemTitle(): string | undefined {
    const it = this.b.item;
    if (!it) return undefined;
    const field = Object.values(LISTINGS).find((l) => l.kind === it.kind)?.title ?? 'title';
    return this.itemRef(field);
  }

  /** "it" in a later clause: the previous step's main output. */
  prevRef(): string | undefined {
    return this.b.prev ? primaryRef(this.b.prev) : undefined;
  }

  prevIs(tool: string, action?: string): boolean {
    return this.b.prev?.tool === tool && (action === undefined || this.b.prev.action === action);
  }
}

function put(out: Record<string, unknown>, key: string, value: unknown): void {
  if (value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0)) return;
  out[key] = value;
}

function withRef(text: string | undefined, reference: string | undefined): string | undefined {
  if (!reference) return text;
  return text ? `${text}\n${reference}` : reference;
}

function bareLabels(t: string): string[] {
  const m = /\blabels?\s+(?!⟦)([a-z][\w-]*(?:\s*(?:,|and)\s*(?!⟦)[a-z][\w-]*)*)/i.exec(t);
  if (!m?.[1]) return [];
  return m[1]
    .split(/\s*(?:,|\band\b)\s*/)
    .map((s) => s.trim())
    .filter((s) => s && !/^(?:to|on|in|it|them|the|of|for|issue|issues)$/i.test(s));
}

/** A Notion database or page id: a quoted name, a UUID, or the word after "database"; database first, then page. */
function notionId(a: Args, kinds: readonly string[]): string | undefined {
  for (const kind of kinds) {
    const q = a.quoteAfter(`${kind}(?:\\s+id)?`);
    if (q) return q;
    const m = rx(
      `\\b${kind}\\s+(?:id\\s+)?(?:called\\s+|named\\s+)?([0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}|[A-Za-z][\\w-]*)`,
      'i',
    ).exec(a.t);
    const v = m?.[1];
    if (v && !/^(?:id|called|named|titled|the|a|an|with|to|in|for|about|and|then|saying|containing|matching)$/i.test(v)) return v;
  }
  return undefined;
}

function iso(d: Date | undefined): string | undefined {
  return d ? d.toISOString().replace('.000Z', 'Z') : undefined;
}

function nameOf(email: string): string {
  const local = email.split('@')[0] ?? email;
  return local.charAt(0).toUpperCase() + local.slice(1);
}

/** Builds the input of one action from one clause. Missing required fields are left out: the step then fails with a message naming them. */
export function buildInput(b: BuildInput): Record<string, unknown> {
  const a = new Args(b);
  const out: Record<string, unknown> = {};
  const key = `${b.tool.name}.${b.action}`;
  const repo = a.repo();
  const issueRef = (): unknown =>
    a.e.issueNumbers[0] ??
    (b.item?.kind === 'issue' ? a.itemRef('number') : undefined) ??
    (b.prev && (a.prevIs('github', 'create_issue') || a.prevIs('github', 'comment_on_issue'))
      ? ref(b.prev.index, a.prevIs('github', 'create_issue') ? 'number' : 'issue_number')
      : undefined);

  switch (key) {
    case 'github.create_issue': {
      put(out, 'owner', repo?.owner);
      put(out, 'repo', repo?.repo);
      const labels = a.quotesAfter('labels?|labell?ed|tagged|tags?');
      const title =
        a.quoteAfter('titled|title|called|named|subject|saying|about') ?? a.firstFree() ?? a.itemTitle() ?? looseTitle(a.t, b.quotes);
      put(out, 'title', title);
      const body = a.quoteAfter('body|description|describing|details|text|content|with') ?? a.firstFree();
      put(out, 'body', body ?? (b.item ? a.itemRef() : a.backRef ? a.prevRef() : undefined));
      put(out, 'labels', labels.length ? labels : bareLabels(a.t));
      break;
    }
    case 'github.list_issues': {
      put(out, 'owner', repo?.owner);
      put(out, 'repo', repo?.repo);
      const t = a.t.toLowerCase();
      put(
        out,
        'state',
        /\bclosed\b/.test(t)
          ? 'closed'
          : /\ball\s+(?:the\s+)?issues\b|\bopen\s+(?:and|or)\s+closed\b/.test(t)
            ? 'all'
            : /\bopen\b/.test(t)
              ? 'open'
              : undefined,
      );
      const labels = a.quotesAfter('labell?ed|with\\s+(?:the\\s+)?labels?|labels?|tagged');
      put(
        out,
        'labels',
        labels.length ? labels : /\blabell?ed\s+([a-z][\w-]*)/i.exec(a.t)?.[1] ? [/\blabell?ed\s+([a-z][\w-]*)/i.exec(a.t)?.[1]] : [],
      );
      put(out, 'limit', a.e.count);
      break;
    }
    case 'github.comment_on_issue': {
      put(out, 'owner', repo?.owner);
      put(out, 'repo', repo?.repo);
      put(out, 'issue_number', issueRef());
      const body = a.quoteAfter('saying|comment|with|body|text|reply|message') ?? a.firstFree();
      put(out, 'body', body ?? (a.backRef && !a.prevIs('github', 'create_issue') ? a.prevRef() : undefined));
      break;
    }
    case 'github.add_labels': {
      put(out, 'owner', repo?.owner);
      put(out, 'repo', repo?.repo);
      put(out, 'issue_number', issueRef());
      const labels = [...a.quotesAfter('labels?|tags?|tag|mark(?:\\s+it)?(?:\\s+as)?|as'), ...a.restFree()];
      put(out, 'labels', labels.length ? labels : bareLabels(a.t));
      break;
    }
    case 'github.get_repository':
      put(out, 'owner', repo?.owner);
      put(out, 'repo', repo?.repo);
      break;

    case 'slack.post_message': {
      const named = /\b(?:to|in|on)\s+(?:the\s+)?([a-z][\w-]*)\s+channel\b/i.exec(a.t.replace(QUOTE_TOKEN, ' '))?.[1];
      put(
        out,
        'channel',
        a.e.channels[0] ?? (b.item?.kind === 'channel' ? a.itemRef('id') : undefined) ?? named?.toLowerCase() ?? b.ctx.channel,
      );
      let text = a.quoteAfter('saying|text|message|says|that|with') ?? a.firstFree();
      if (!text && !a.backRef && !b.item) text = a.looseText('post|send|say|tell|announce|share|write|message|ping|notify');
      const reference = b.item && b.item.kind !== 'channel' ? a.itemRef() : a.backRef || (!text && b.prev) ? a.prevRef() : undefined;
      put(out, 'text', text && reference ? `${text} ${reference}` : (text ?? reference));
      break;
    }
    case 'slack.list_channels':
      put(out, 'limit', a.e.count);
      break;

    case 'google_calendar.create_event': {
      const emails = a.e.emails;
      const summary =
        a.quoteAfter('called|titled|named|summary|about|for') ??
        a.firstFree() ??
        a.itemTitle() ??
        (emails.length
          ? `Meeting with ${emails.map(nameOf).join(', ')}`
          : /\b(call|sync|standup|lunch|review|interview|1:1|one-on-one)\b/i.exec(a.t)?.[1]
            ? capital(/\b(call|sync|standup|lunch|review|interview|1:1|one-on-one)\b/i.exec(a.t)?.[1] ?? '')
            : 'Meeting');
      put(out, 'summary', summary);
      put(out, 'start', iso(a.when.start));
      put(out, 'end', iso(a.when.end));
      put(out, 'attendees', emails);
      put(out, 'description', a.quoteAfter('description|agenda|notes') ?? (a.backRef ? a.prevRef() : undefined));
      break;
    }
    case 'google_calendar.list_events':
      put(out, 'time_min', iso(a.when.range?.min));
      put(out, 'time_max', iso(a.when.range?.max));
      put(out, 'query', a.quoteAfter('about|matching|called|titled|named|with|containing') ?? a.firstFree());
      put(out, 'limit', a.e.count);
      break;

    case 'gmail.send_email': {
      const cc = /\bcc\b\s*:?\s*((?:[\w.%+-]+@[\w.-]+\.[a-z]{2,}(?:\s*(?:,|and)\s*)?)+)/i.exec(a.t)?.[1];
      const ccList = cc ? a.e.emails.filter((x) => cc.includes(x)) : [];
      const to = a.e.emails.filter((x) => !ccList.includes(x));
      put(out, 'to', to.length ? to : b.item?.kind === 'message' ? [a.itemRef('from')] : []);
      put(out, 'cc', ccList);
      let subject = a.quoteAfter('subject|titled|title|about|re');
      let body = a.quoteAfter('body|saying|says|message|text|with|content');
      const rest = a.restFree();
      if (!subject && rest.length > 1) subject = rest.shift();
      if (!body) body = rest.shift();
      if (!subject && body) subject = body.length > 60 ? `${body.slice(0, 57)}...` : body;
      const reference = b.item ? a.itemRef() : a.backRef || (!body && b.prev) ? a.prevRef() : undefined;
      if (!subject)
        subject = b.item?.kind === 'message' ? `Re: ${a.itemRef('subject')}` : b.item ? a.itemTitle() : reference ? 'Results' : undefined;
      put(out, 'subject', subject);
      put(out, 'body', reference && body !== subject ? withRef(body, reference) : (body ?? reference));
      break;
    }
    case 'gmail.search_email': {
      const parts: string[] = [];
      const from = /\bfrom\s+([\w.%+-]+@[\w.-]+\.[a-z]{2,}|[a-z][\w.-]*)/i.exec(a.t.replace(QUOTE_TOKEN, ' '))?.[1];
      if (from && !/^(?:my|the|me|last|yesterday|today)$/i.test(from)) parts.push(`from:${from}`);
      const to = /\bto\s+([\w.%+-]+@[\w.-]+\.[a-z]{2,})/i.exec(a.t)?.[1];
      if (to) parts.push(`to:${to}`);
      const subject = a.quoteAfter('subject');
      if (subject) parts.push(`subject:"${subject}"`);
      for (const q of a.restFree()) parts.push(q.includes(' ') ? `"${q}"` : q);
      const about =
        /\b(?:about|for|regarding|containing|mentioning|with)\s+(?!my\b|the\b|emails?\b|messages?\b|mail\b|from\b|unread\b|new\b|recent\b|latest\b|all\b|any\b)([a-z][\w-]*)/i.exec(
          a.t.replace(QUOTE_TOKEN, ' '),
        )?.[1];
      if (about) parts.unshift(about);
      if (/\bunread\b/i.test(a.t)) parts.push('is:unread');
      put(out, 'query', parts.join(' ') || 'in:inbox');
      put(out, 'limit', a.e.count);
      break;
    }

    case 'notion.create_page': {
      const database = notionId(a, ['database', 'db']);
      const page = database ? undefined : notionId(a, ['page', 'under', 'parent']);
      put(out, 'parent_id', database ?? page ?? b.ctx.databaseId);
      if (page) out['parent_type'] = 'page';
      const title = a.quoteAfter('titled|called|named|title') ?? a.firstFree() ?? a.itemTitle();
      put(out, 'title', title ?? (a.backRef ? 'Results' : undefined));
      const content = a.quoteAfter('content|saying|body|text|with|containing') ?? a.firstFree();
      put(out, 'content', content ?? (b.item ? a.itemRef() : a.backRef || b.prev ? a.prevRef() : undefined));
      break;
    }
    case 'notion.query_database':
      put(out, 'database_id', notionId(a, ['database', 'db', 'table']) ?? b.ctx.databaseId);
      put(out, 'filter_text', a.quoteAfter('matching|containing|about|titled|with|for|named|called') ?? a.firstFree());
      put(out, 'limit', a.e.count);
      break;

    case 'http.fetch':
      put(out, 'url', a.e.urls[0] ?? b.ctx.url);
      break;
    case 'http.post': {
      put(out, 'url', a.e.urls[0] ?? b.ctx.url);
      // A JSON literal in the prompt ({"a":1}), else a quoted JSON text, else {text: quote}.
      const literal = parseJson(/(\{.*\}|\[.*\])/.exec(unmask(a.t, b.quotes))?.[1]);
      const q = literal === undefined ? a.firstFree() : undefined;
      const json = literal ?? (q === undefined ? undefined : (parseJson(q) ?? { text: q }));
      put(out, 'json', json ?? (b.item ? a.itemRef() : b.prev ? ref(b.prev.index) : undefined));
      break;
    }

    case 'text.echo':
    case 'text.uppercase':
    case 'text.lowercase':
    case 'text.count_words': {
      const text =
        a.firstFree() ??
        (b.item ? a.itemRef() : undefined) ??
        (a.backRef || b.prev ? a.prevRef() : undefined) ??
        a.looseText('echo|repeat|say|print|uppercase|upper|lowercase|lower|shout|count(?:\\s+the)?\\s+words\\s+(?:in|of)|count');
      put(out, 'text', text);
      break;
    }
    case 'data.count':
      put(
        out,
        'items',
        b.prev
          ? ref(b.prev.index, LISTINGS[`${b.prev.tool}.${b.prev.action}`] ? 'items' : (PRIMARY[`${b.prev.tool}.${b.prev.action}`] ?? ''))
          : undefined,
      );
      break;
    case 'data.pluck':
      put(out, 'items', b.prev ? primaryRef(b.prev) : undefined);
      put(
        out,
        'field',
        a.firstFree() ?? /\b(?:field|the)\s+([a-z_]+)\b/i.exec(a.t.replace(/\bthe\s+(?:results?|items?|list)\b/gi, ' '))?.[1],
      );
      break;
    case 'data.join':
      put(out, 'values', b.prev ? primaryRef(b.prev) : undefined);
      put(out, 'separator', a.quoteAfter('with|by|separator|using'));
      break;
    default:
      schemaInput(a, b, out);
  }
  return out;
}

/**
 * Input of an action the planner has no rules for (custom tools), from its input schema:
 * `field "value"`, `field: value` or `field=value` for each property (also with spaces for
 * underscores), emails for email fields, the count for a limit, the one allowed value of an
 * enum the prompt names; then the remaining quotes, in order, fill the required string fields
 * still empty.
 */
function schemaInput(a: Args, b: BuildInput, out: Record<string, unknown>): void {
  const schema = b.tool.actions.find((x) => x.name === b.action)?.input as
    { properties?: Record<string, { type?: string; format?: string; enum?: unknown[] }>; required?: string[] } | undefined;
  const props = Object.entries(schema?.properties ?? {});
  const plain = a.t.replace(QUOTE_TOKEN, ' ');
  for (const [name, p] of props) {
    const label = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll('_', '[\\s_]+');
    const quoted = a.quoteAfter(label);
    const bare = rx(`\\b${label}\\s*(?:=|:)\\s*([^\\s,;]+)`, 'i').exec(plain)?.[1];
    let value: unknown = quoted ?? bare;
    if (value === undefined && (p.format === 'email' || /email/.test(name))) value = a.e.emails[0];
    if (value === undefined && p.enum) {
      // One of the allowed values named in the prompt ("the open tickets" → state: open).
      const named = p.enum.filter(
        (v): v is string => typeof v === 'string' && rx(`\\b${v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'i').test(plain),
      );
      if (named.length === 1) value = named[0];
    }
    if (value === undefined && /^(?:limit|count|max|max_results|per_page)$/.test(name)) value = a.e.count ?? countBefore(plain, b.action);
    put(out, name, coerce(value, p.type));
  }
  for (const name of schema?.required ?? []) {
    if (out[name] !== undefined || (schema?.properties?.[name]?.type ?? 'string') !== 'string') continue;
    put(out, name, a.firstFree());
  }
}

/** "5 contacts" for an action named list_contacts: a number before a word of the action's name. */
function countBefore(text: string, action: string): number | undefined {
  const nouns = action.split('_').filter((w) => w.length > 2);
  if (nouns.length === 0) return undefined;
  const m = rx(`\\b(\\d{1,4})\\s+(?:[a-z]+\\s+)?(?:${nouns.join('|')})\\b`, 'i').exec(text);
  return m?.[1] ? Number(m[1]) : undefined;
}

/** A prompt's text as the schema's type; undefined when it does not fit. */
function coerce(value: unknown, type: string | undefined): unknown {
  if (typeof value !== 'string' || type === undefined || type === 'string') return value;
  if (type === 'integer' || type === 'number') {
    const n = Number(value);
    return Number.isFinite(n) && (type === 'number' || Number.isInteger(n)) ? n : undefined;
  }
  if (type === 'boolean') return value === 'true' ? true : value === 'false' ? false : undefined;
  return value;
}

function parseJson(s: string | undefined): unknown {
  if (s === undefined) return undefined;
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return undefined;
  }
}

function capital(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** An unquoted title: "titled Fix login in acme/api" → "Fix login". */
function looseTitle(t: string, quotes: readonly string[]): string | undefined {
  const m = /\b(?:titled|called|named|about)\s+(.+?)(?=\s+(?:in|on|to|for|with|and)\s|[,;.]|$)/i.exec(t);
  const title = m?.[1]?.replace(QUOTE_TOKEN, (_x, i: string) => quotes[Number(i)] ?? '').trim();
  return title || undefined;
}

/** Remembers what later clauses may leave out (repo, channel, database, URL). */
export function remember(ctx: PlanContext, step: BuiltStep): void {
  const i = step.input;
  if (typeof i['owner'] === 'string' && typeof i['repo'] === 'string') ctx.repo = { owner: i['owner'], repo: i['repo'] };
  if (typeof i['channel'] === 'string' && !i['channel'].includes('{{')) ctx.channel = i['channel'];
  if (typeof i['database_id'] === 'string') ctx.databaseId = i['database_id'];
  if (typeof i['parent_id'] === 'string') ctx.databaseId = i['parent_id'];
  if (typeof i['url'] === 'string') ctx.url = i['url'];
}
