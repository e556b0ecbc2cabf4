import { ref, type ActionDef, type ToolDef } from '@tes/catalog';
import {
  countOf,
  entitiesOf,
  leftoverText,
  outputRef,
  pointsBack,
  referenceFor,
  previousData,
  quoteAfter,
  searchWindow,
  subjectFrom,
  takeQuote,
  type Slots,
  type StepDraft,
} from './slots.js';
import { ACTION_WORDS } from './intents.js';
import { QUOTE } from './text.js';

/**
 * Fills an action's input from a clause, field by field. Lookups the action needs first (a Notion
 * page named by its title, the email a reply answers) are planned as steps before it, and the field
 * refers to their output. Fields nothing fills are reported missing, in the user's words.
 */

export interface Filled {
  input: Record<string, unknown>;
  missing: string[];
}

interface Schema {
  properties?: Record<string, { type?: string; enum?: string[]; format?: string; items?: { format?: string } }>;
  required?: string[];
}

type Add = (step: StepDraft) => number;

export function fillInput(tool: ToolDef, action: ActionDef, s: Slots, add: Add): Filled {
  const schema = action.input as Schema;
  const props = schema.properties ?? {};
  const input: Record<string, unknown> = {};
  const key = `${tool.name}.${action.name}`;
  const put = (field: string, value: unknown) => {
    if (value !== undefined && value !== null && value !== '' && field in props) input[field] = value;
  };
  const BUILT_IN = SPECIFIC[key];
  if (BUILT_IN) BUILT_IN(s, put, add);
  else if (tool.service !== null || !GENERIC_TOOLS.has(tool.name)) fillGeneric(schema, s, put);
  // Shared fields.
  if ('owner' in props && !('owner' in input)) {
    const repo = entitiesOf(s, 'repo')[0]?.value ?? s.state.repo;
    if (repo) {
      const [owner, name] = repo.split('/');
      put('owner', owner);
      put('repo', name);
      s.state.repo = repo;
    }
  }
  if ('limit' in props && !('limit' in input)) put('limit', countOf(s));
  const missing = (schema.required ?? []).filter((f) => !(f in input));
  return { input, missing };
}

const GENERIC_TOOLS = new Set(['text', 'data', 'http']);

type Put = (field: string, value: unknown) => void;

function issueNumber(s: Slots, nouns: readonly string[]): number | string | undefined {
  if (s.state.item?.field === 'number') return ref(s.state.item.step, `items.${s.state.item.index}.number`);
  const numbers = entitiesOf(s, 'number');
  const exact = numbers.find((n) => nouns.includes(n.noun ?? ''));
  const any = exact ?? numbers.find((n) => !n.noun) ?? numbers[0];
  if (any) return Number(any.value);
  // "create an issue … then comment on it"
  const prev = previousData(s.state);
  if (prev && pointsBack(s.clause) && /^github\.(?:create_issue|get_issue|get_pull_request)$/.test(`${prev.step.tool}.${prev.step.action}`))
    return ref(prev.index, 'number');
  // "comment on issue 12 and close it": the number the step before acted on.
  const last = s.state.steps[s.state.steps.length - 1];
  const before = last?.input['issue_number'] ?? last?.input['pull_number'];
  if (pointsBack(s.clause) && last?.tool === 'github' && typeof before === 'number') return before;
  return undefined;
}

function textOrBack(s: Slots, roles: readonly string[], verbs: readonly string[], { leftover = true } = {}): string | undefined {
  const quoted = takeQuote(s, roles);
  if (quoted !== undefined) return quoted;
  // "the same message": what the step before said.
  const last = s.state.steps[s.state.steps.length - 1];
  if (last && /\bthe same (?:message|text|thing|note)\b/.test(s.clause.canon) && typeof last.input['text'] === 'string')
    return last.input['text'];
  const prev = previousData(s.state);
  if (prev && (pointsBack(s.clause) || !leftover || s.state.sourced)) return referenceFor(s.clause, prev.index, prev.step);
  if (!leftover) return undefined;
  const rest = leftoverText(s, verbs);
  // "post today's weather to #random": a description of something to fetch, not a message.
  if (rest && isDescription(rest)) return prev ? referenceFor(s.clause, prev.index, prev.step) : undefined;
  if (rest) return rest;
  return prev ? referenceFor(s.clause, prev.index, prev.step) : undefined;
}

function labels(s: Slots): string[] | undefined {
  const quoted: string[] = [];
  const re =
    /\b(?:labels?|labell?ed|tagged|tags?|as)\s*(?:it|them|(?:it|them)\s+(?:as|with))?\s*(?:[:=])?\s*((?:⟦\d+⟧(?:\s*(?:,|and|&)\s*)?)+)/giu;
  for (const m of s.clause.raw.matchAll(re)) {
    for (const q of (m[1] ?? '').matchAll(QUOTE)) {
      const id = Number(q[1]);
      const text = s.state.quotes[id]?.text;
      if (text) {
        quoted.push(text);
        s.state.usedQuotes.add(id);
      }
    }
  }
  if (quoted.length > 0) return quoted;
  const withLabel = /\bwith\s+(?:the\s+|a\s+)?(?!(?:the|a|an)\b)([\p{L}\p{N}_-]+)\s+(?:label|tag)\b/iu.exec(s.clause.raw);
  if (withLabel?.[1]) return [withLabel[1]];
  const bare =
    /\b(?:labels?|labell?ed|tag(?:ged)?|(?:mark|label|tag)\s+(?:it|them|#?\S+)\s+as|as)\s+(?:(?:it|them)\s+(?:with\s+)?)?(?:a\s+|an\s+)?([\p{L}\p{N}_-]+(?:\s*(?:,|and)\s*[\p{L}\p{N}_-]+)*)/iu.exec(
      s.clause.raw.replace(/⟨\d+⟩/g, ' '),
    );
  if (!bare?.[1]) return undefined;
  const words = bare[1]
    .split(/\s*(?:,|\band\b)\s*/)
    .filter((w) => w && !/^(?:to|on|in|the|it|them|issue|issues|pr|body|title|description|text|comment)$/i.test(w));
  return words.length > 0 ? words : undefined;
}

function emails(s: Slots): { to: string[]; cc: string[] } {
  const raw = s.clause.raw;
  const to: string[] = [];
  const cc: string[] = [];
  for (const m of raw.matchAll(/⟨(\d+)⟩/g)) {
    const e = s.state.entities[Number(m[1])];
    if (e?.kind !== 'email') continue;
    const before = raw.slice(0, m.index);
    (/\b(?:cc|copy|copying|cc'?ing)\b[^⟨]*$/i.test(before) || /\bcc\b.*$/i.test(before.slice(-40)) ? cc : to).push(e.value);
  }
  return { to, cc };
}

/** A person named after a verb or preposition ("DM Sarah", "message @bob", "to Alex"). */
function person(s: Slots): string | undefined {
  const user = entitiesOf(s, 'user')[0] ?? entitiesOf(s, 'email')[0];
  // A Slack id (U024BE7LH) is used as it is; a handle keeps its "@".
  if (user) return user.kind === 'user' && !/^[UW][A-Z0-9]{8,}$/.test(user.value) ? `@${user.value}` : user.value;
  const m = /\b(?:dm|message|ping|tell|text|let|to|with|envoie\s+à|à|an|a)\s+([\p{Lu}][\p{L}'-]+(?:\s+[\p{Lu}][\p{L}'-]+)?)/u.exec(
    s.clause.raw.replace(/^\S+\s+/, (w) => w.toLowerCase()),
  );
  return m?.[1];
}

function channelName(s: Slots): string | undefined {
  if (s.state.item?.field === 'name') return ref(s.state.item.step, `items.${s.state.item.index}.name`);
  const ch = entitiesOf(s, 'channel')[0]?.value;
  if (ch) return ch;
  const raw = s.clause.raw.replace(QUOTE, ' ');
  const skip = /^(?:the|a|this|that|slack|same|new|private|public|my|our|which|what|each|every|to|in|on|called|named)$/;
  for (const re of [
    /\b(?:the\s+)?([\p{L}\p{N}_-]+)\s+(?:slack\s+)?channel\b/iu,
    /\bchannel\s+(?:called\s+|named\s+)?([\p{Ll}\p{N}_-]+)/iu,
  ]) {
    const name = re.exec(raw)?.[1]?.toLowerCase();
    if (name && !skip.test(name)) return name;
  }
  return undefined;
}

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

/** Per built-in action: what each of its fields comes from. */
const SPECIFIC: Record<string, (s: Slots, put: Put, add: Add) => void> = {
  'github.create_issue': (s, put) => {
    put('labels', labels(s));
    put('title', takeQuote(s, ['title', 'colon', 'subject']) ?? aboutText(s));
    put('body', takeQuote(s, ['body'], { anyQuoted: true }));
  },
  'github.list_issues': (s, put) => {
    put('state', stateOf(s));
    put('labels', /\blabell?ed\b|\bwith (?:the )?labels?\b|\btagged\b/.test(s.clause.canon) ? labels(s) : undefined);
  },
  'github.get_issue': (s, put) => put('issue_number', issueNumber(s, ['issue', 'ticket', 'bug', ''])),
  'github.comment_on_issue': (s, put) => {
    put('issue_number', issueNumber(s, ['issue', 'ticket', 'bug', '']));
    put('body', textOrBack(s, ['body', 'colon'], ['comment', 'reply', 'write', 'add', 'post', 'leave'], { leftover: false }));
  },
  'github.add_labels': (s, put) => {
    put('issue_number', issueNumber(s, ['issue', 'ticket', 'bug', '']));
    put('labels', labels(s));
  },
  'github.close_issue': (s, put) => {
    put('issue_number', issueNumber(s, ['issue', 'ticket', 'bug', '']));
    if (/\b(?:not planned|won'?t fix|wontfix|duplicate|invalid|irrelevant|obsolete)\b/.test(s.clause.canon)) put('reason', 'not_planned');
  },
  'github.reopen_issue': (s, put) => put('issue_number', issueNumber(s, ['issue', 'ticket', 'bug', ''])),
  'github.update_issue': (s, put) => {
    put('issue_number', issueNumber(s, ['issue', 'ticket', 'bug', '']));
    const renames = /\b(?:rename|retitle|title)\b/.test(s.clause.canon);
    put('title', renames ? (quoteAfter(s, /\bto/) ?? takeQuote(s, ['quoted', 'title'])) : undefined);
    if (/\b(?:body|description)\b/.test(s.clause.canon)) put('body', quoteAfter(s, /\bto/) ?? takeQuote(s, ['quoted', 'body']));
    const assignee = /\bassign(?:\s+(?:it|this|the issue|⟨\d+⟩))?\s+to\s+@?([\p{L}\p{N}_-]+)/iu.exec(s.clause.raw);
    const user = entitiesOf(s, 'user')[0]?.value ?? assignee?.[1];
    if (/\bassign/.test(s.clause.canon) && user && user.toLowerCase() !== 'me') put('assignees', [user]);
  },
  'github.list_pull_requests': (s, put) => put('state', stateOf(s)),
  'github.get_pull_request': (s, put) => put('pull_number', issueNumber(s, ['pr', 'pull request', 'mr', 'merge request', ''])),
  'github.comment_on_pull_request': (s, put) => {
    put('pull_number', issueNumber(s, ['pr', 'pull request', 'mr', 'merge request', '']));
    put('body', textOrBack(s, ['body', 'colon'], ['comment', 'reply', 'write', 'add', 'post', 'leave'], { leftover: false }));
  },
  'github.merge_pull_request': (s, put) => {
    put('pull_number', issueNumber(s, ['pr', 'pull request', 'mr', 'merge request', '']));
    if (/\bsquash/.test(s.clause.canon)) put('merge_method', 'squash');
    else if (/\brebase/.test(s.clause.canon)) put('merge_method', 'rebase');
  },
  'github.search_repositories': (s, put) => {
    // "the repos in the acme org": GitHub's search syntax for an owner.
    const org =
      /\b(?:in|of|from|owned by|under)\s+(?:the\s+)?([A-Za-z0-9][\w.-]*)\s+(?:org|organization|organisation|account)\b|\b(?:org|organization)\s+([A-Za-z0-9][\w.-]*)/i.exec(
        s.clause.raw.replace(QUOTE, ' '),
      );
    const owner = org?.[1] ?? org?.[2];
    const words = (
      takeQuote(s, ['title', 'quoted', 'colon']) ?? aboutText(s, /\b(?:about|for|matching|related to|on|with|named|called)\s+(.+)$/i)
    )?.replace(/^(?:repos|repositories|projects)\s+(?:about|for|on|matching|related to|with)\s+/i, '');
    put('query', [words, owner ? `org:${owner}` : undefined].filter(Boolean).join(' ') || undefined);
  },
  'github.create_repository': (s, put) => {
    const named =
      takeQuote(s, ['title', 'quoted']) ??
      /\b(?:repo(?:sitory)?|dépôt|repositorio)\s+(?:called\s+|named\s+)?([A-Za-z0-9_.-]{1,100})\b/i.exec(
        s.clause.raw.replace(QUOTE, ' '),
      )?.[1];
    const repoEntity = entitiesOf(s, 'repo')[0]?.value;
    const org =
      /\b(?:in|under|for|to)\s+(?:the\s+)?([A-Za-z0-9][\w.-]*)\s+(?:org|organization|organisation)\b|\b(?:org|organization|organisation)\s+([A-Za-z0-9][\w.-]*)/i.exec(
        s.clause.raw.replace(QUOTE, ' '),
      );
    if (!repoEntity && (org?.[1] ?? org?.[2])) put('org', org?.[1] ?? org?.[2]);
    if (repoEntity) {
      const [org, name] = repoEntity.split('/');
      put('org', org);
      put('name', name);
    } else if (named && !/^(?:for|in|on|with|to|called|named|the)$/i.test(named)) put('name', named);
    put('description', takeQuote(s, ['body']) ?? quoteAfter(s, /\bdescription/));
    if (/\bpublic\b/.test(s.clause.canon)) put('private', false);
    else if (/\bprivate\b/.test(s.clause.canon)) put('private', true);
  },
  'github.get_repository': () => undefined,
  'slack.post_message': (s, put) => {
    const channel = channelName(s) ?? s.state.channel;
    put('channel', channel);
    if (channel) s.state.channel = channel;
    put(
      'text',
      textOrBack(s, ['body', 'colon'], ['post', 'send', 'say', 'tell', 'notify', 'announce', 'share', 'write', 'ping', 'message']),
    );
  },
  'slack.send_direct_message': (s, put) => {
    put('user', person(s));
    put('text', textOrBack(s, ['body', 'colon'], ['dm', 'message', 'send', 'tell', 'ping', 'write', 'say']));
  },
  'slack.list_channels': () => undefined,
  'slack.create_channel': (s, put) => {
    const bare = s.clause.raw.replace(QUOTE, ' ');
    const name =
      entitiesOf(s, 'channel')[0]?.value ??
      takeQuote(s, ['title', 'quoted']) ??
      /\bname\s+it\s+#?([\p{L}\p{N}_-]+)/iu.exec(bare)?.[1] ??
      /\bchannel\s+(?:called\s+|named\s+)?(?!(?:for|about|to|with|on|in|the|a|an)\b)([\p{L}\p{N}_-]+(?:\s+(?!for\b|with\b|and\b|to\b|in\b|on\b)[\p{L}\p{N}_-]+)*)/iu.exec(
        bare,
      )?.[1];
    if (name && !/^(?:for|called|named|in|on|with|the)$/i.test(name)) {
      const slug = name.replace(/^#/, '').trim().toLowerCase().replace(/\s+/g, '-');
      put('name', slug);
      s.state.channel = slug;
    }
    if (/\bprivate\b/.test(s.clause.canon)) put('is_private', true);
  },
  'slack.invite_to_channel': (s, put) => {
    put('channel', channelName(s) ?? s.state.channel);
    const users = [
      ...entitiesOf(s, 'user').map((u) => (/^[UW][A-Z0-9]{8,}$/.test(u.value) ? u.value : `@${u.value}`)),
      ...entitiesOf(s, 'email').map((e) => e.value),
    ];
    if (users.length === 0) {
      const p = person(s);
      if (p) users.push(p);
    }
    put('users', users.length > 0 ? users : undefined);
  },
  'slack.list_messages': (s, put) => {
    put('channel', channelName(s) ?? s.state.channel);
    if (s.when?.windowStart && /\b(?:today|yesterday|since|this|last|past)\b/.test(s.clause.canon)) put('oldest', s.when.windowStart);
  },
  'gmail.send_email': (s, put) => fillEmail(s, put),
  'gmail.create_draft': (s, put) => fillEmail(s, put),
  'gmail.reply_to_email': (s, put, add) => {
    put('body', textOrBack(s, ['body', 'colon'], ['reply', 'respond', 'answer', 'write'], { leftover: false }));
    if (/\breply[- ]all\b|\breply to (?:all|everyone)\b/.test(s.clause.canon)) put('reply_all', true);
    const id = /\b(?:email|message|mail|thread)\s+(?:id\s+)?([0-9a-f]{12,24})\b/i.exec(s.clause.raw)?.[1];
    if (id) return put('message_id', id);
    const prev = previousData(s.state);
    if (prev && `${prev.step.tool}.${prev.step.action}` === 'gmail.search_email') return put('message_id', ref(prev.index, 'items.0.id'));
    const from = entitiesOf(s, 'email')[0]?.value;
    const named =
      /\bfrom\s+([\p{Lu}][\p{L}-]+)/u.exec(s.clause.raw)?.[1] ??
      /\b([\p{Lu}][\p{L}-]+)['’]s\s+(?:last|latest|recent|newest)?\s*(?:e-?mail|message|mail)/u.exec(s.clause.raw)?.[1];
    if (from || named || /\b(?:last|latest|recent|newest)\b/.test(s.clause.canon)) {
      const query = from ? `from:${from}` : named ? `from:${named}` : 'in:inbox';
      put('message_id', ref(add({ tool: 'gmail', action: 'search_email', input: { query, limit: 1 } }), 'items.0.id'));
    }
  },
  'gmail.search_email': (s, put) => {
    const parts: string[] = [];
    const from =
      /\b(?:from|von|de|desde|depuis)\s+(?:(?:my|our|the)\s+)?(?:[\p{L}]+\s+){0,2}⟨(\d+)⟩/u.exec(s.clause.raw) ??
      /\bfrom\s+(?!(?:my|the|last|this|yesterday|today|before|after|since|a|an|january|february|march|april|may|june|july|august|september|october|november|december|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b)()([\p{L}][\p{L}\p{N}.-]*[\p{L}\p{N}])/iu.exec(
        s.clause.raw,
      );
    if (from?.[1]) {
      const e = s.state.entities[Number(from[1])];
      if (e) parts.push(`from:${e.value}`);
    } else if (from?.[2]) parts.push(`from:${from[2]}`);
    const to = /\bto\s+⟨(\d+)⟩/.exec(s.clause.raw);
    if (to?.[1]) {
      const e = s.state.entities[Number(to[1])];
      if (e?.kind === 'email') parts.push(`to:${e.value}`);
    }
    const subject = quoteAfter(s, /\bsubject/);
    if (subject) parts.push(`subject:"${subject}"`);
    const quoted = takeQuote(s, ['quoted', 'title']);
    if (quoted) parts.push(/\s/.test(quoted) ? `"${quoted}"` : quoted);
    else {
      const about =
        /\b(?:about|regarding|re|mentioning|containing|with the word|on the topic of|concerning|for)\s+(?!(?:last|this|the\s+last|the\s+past|past|today|yesterday|emails?|mails?|messages?)\b)([\p{L}\p{N} _-]{2,40}?)(?=\s+(?:from|to|since|in|on|this|last|today|yesterday|before|after)\b|[,.?!]|$)/iu.exec(
          s.clause.raw.replace(/⟨\d+⟩/g, ' '),
        );
      if (about?.[1]) parts.push(about[1].trim().replace(/^(?:the|a|an|my|our)\s+/i, ''));
    }
    if (parts.length === 0 || !quoted) {
      const kindOf = /\b(?:the\s+|my\s+|any\s+|all\s+)?([\p{L}][\p{L}-]{2,})\s+(?:emails|mails|messages)\b/iu.exec(
        s.clause.raw.replace(QUOTE, ' '),
      )?.[1];
      if (
        kindOf &&
        !ACTION_WORDS.has(kindOf.toLowerCase()) &&
        !/^(?:my|the|all|any|unread|new|recent|last|latest|these|those|few|some|old|other|gmail|important|starred|read)$/i.test(kindOf)
      )
        parts.push(kindOf.toLowerCase());
    }
    if (/\bunread\b/.test(s.clause.canon)) parts.push('is:unread');
    if (/\battachments?\b/.test(s.clause.canon)) parts.push('has:attachment');
    if (/\b(?:starred|important)\b/.test(s.clause.canon)) parts.push(/\bstarred\b/.test(s.clause.canon) ? 'is:starred' : 'is:important');
    const window = searchWindow(s);
    put('after', window?.after);
    put('before', window?.before);
    put('query', parts.length > 0 ? parts.join(' ') : window ? undefined : 'in:inbox');
  },
  'google_calendar.create_event': (s, put) => {
    const attendees = entitiesOf(s, 'email').map((e) => e.value);
    put('attendees', attendees.length > 0 ? attendees : undefined);
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
    const generic = thing && /^(?:event|meeting|appointment|call|calendar|time|slot|reminder|block)$/i.test(thing) ? undefined : thing;
    put(
      'summary',
      named ??
        (kind ? capitalize(kind) + (who ? ` with ${who}` : '') : who ? `Meeting with ${who}` : generic ? capitalize(generic) : undefined) ??
        'Meeting',
    );
    put('description', takeQuote(s, ['body']));
    const w = s.when;
    if (w?.start && w.hasTime) {
      put('start', w.start);
      put('end', w.end);
      if (w.zoneNamed) put('time_zone', w.zone);
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
  'notion.create_page': (s, put, add) => {
    const c = s.clause.canon;
    const parentKind =
      !/\b(?:database|db)\b/.test(c) &&
      /\b(?:under|inside|in|into|to)\s+(?:the\s+|my\s+|our\s+)?(?:notion\s+)?(?:page|wiki|doc)\b|⟦\d+⟧\s+(?:notion\s+)?page\b/.test(c)
        ? 'page'
        : 'database';
    const parentQuote = quoteAfter(s, /\b(?:in|into|under|to|inside)\s+(?:the|my|our)?\s*(?:notion\s+)?(?:database|db|page|wiki)?/);
    const uuid = entitiesOf(s, 'uuid')[0]?.value;
    put('title', takeQuote(s, ['title', 'colon', 'quoted']));
    put('content', takeQuote(s, ['body']));
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
    put('content', content ?? backRef(s));
    put('page_id', lookup(s, add, 'page'));
  },
  'text.echo': (s, put) => put('text', textOrBack(s, ['body', 'colon', 'title'], ['echo', 'repeat', 'say', 'print', 'return', 'output'])),
  'text.uppercase': (s, put) =>
    put('text', textOrBack(s, ['body', 'colon', 'title'], ['uppercase', 'upper', 'capitalize', 'shout', 'caps'])),
  'text.lowercase': (s, put) => put('text', textOrBack(s, ['body', 'colon', 'title'], ['lowercase', 'lower'])),
  'text.count_words': (s, put) => put('text', textOrBack(s, ['body', 'colon', 'title'], ['count', 'words', 'the', 'in', 'how', 'many'])),
  'data.count': (s, put) => put('items', backRef(s, 'items')),
  'data.pluck': (s, put) => {
    put('items', backRef(s, 'items'));
    const named =
      /\b(?:their|its|the|each)\s+([a-z_]+)\s+(?:field|property|attribute|column)\b/i.exec(s.clause.raw) ??
      /\b(?:field|property)\s+([a-z_]+)\b/i.exec(s.clause.raw) ??
      /\b(?:the\s+)?([a-z_]+)\s+(?:of each|of every|from each|of them|of all)\b/i.exec(s.clause.raw);
    put('field', takeQuote(s, ['quoted']) ?? named?.[1]);
  },
  'data.join': (s, put) => {
    put('values', backRef(s, 'values'));
    const named = /\b(?:with|by|using)\s+(?:a\s+)?(commas?|semicolons?|new ?lines?|line breaks?|spaces?|pipes?|slashes?|dashes?)\b/i.exec(
      s.clause.raw,
    )?.[1];
    const SEPARATORS: Record<string, string> = {
      comma: ', ',
      semicolon: '; ',
      newline: '\n',
      'new line': '\n',
      'line break': '\n',
      space: ' ',
      pipe: ' | ',
      slash: ' / ',
      dash: ' - ',
    };
    put('separator', quoteAfter(s, /\b(?:with|by|using)/) ?? (named ? SEPARATORS[named.toLowerCase().replace(/s$/, '')] : undefined));
  },
  'http.fetch': (s, put) => {
    put('url', entitiesOf(s, 'url')[0]?.value);
    put('headers', headersOf(s));
  },
  'http.post': (s, put) => {
    put('url', entitiesOf(s, 'url')[0]?.value);
    const body = takeQuote(s, ['quoted', 'body', 'colon']);
    if (body !== undefined) {
      try {
        const json: unknown = JSON.parse(body);
        if (json && typeof json === 'object') put('json', json);
      } catch {
        put('json', { text: body });
      }
    } else {
      const prev = previousData(s.state);
      if (prev) put('json', { data: outputRef(prev.index, prev.step) });
    }
  },
};

function backRef(s: Slots, field?: string): string | undefined {
  const prev = previousData(s.state);
  if (!prev) return undefined;
  const key = `${prev.step.tool}.${prev.step.action}`;
  // A fetched JSON document: its parsed value is the list to count or pluck.
  if (key === 'http.fetch' || key === 'http.post') return ref(prev.index, 'json');
  const r = outputRef(prev.index, prev.step);
  if (field === 'items' && !r.includes('.items') && key !== 'data.pluck') return undefined;
  return r;
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

/** "with the header Accept: application/json", "header X-Token=abc". */
function headersOf(s: Slots): Record<string, string> | undefined {
  const text = s.clause.raw.replace(QUOTE, (_m, i: string) => s.state.quotes[Number(i)]?.text ?? '');
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/\bheaders?\s+([A-Za-z][\w-]*)\s*[:=]\s*([^\s,;]+)/g)) if (m[1] && m[2]) out[m[1]] = m[2];
  return Object.keys(out).length > 0 ? out : undefined;
}

function fillEmail(s: Slots, put: Put): void {
  const { to, cc } = emails(s);
  put('to', to.length > 0 ? to : undefined);
  put('cc', cc.length > 0 ? cc : undefined);
  let subject = takeQuote(s, ['subject', 'title'], { anyQuoted: false }) ?? quoteAfter(s, /\b(?:subject|titled|about)/);
  let body = takeQuote(s, ['body', 'colon'], { anyQuoted: false });
  // Quotes without a marker: with two, the first is the subject; with one, it is the body.
  const rest = s.quoteIds.filter((id) => !s.state.usedQuotes.has(id) && s.state.quotes[id]?.role === 'quoted');
  if (!subject && !body && rest.length >= 2) {
    subject = takeQuote(s, ['quoted']);
    body = takeQuote(s, ['quoted']);
  } else if (!body && rest.length >= 1) body = takeQuote(s, ['quoted']);
  else if (!subject && rest.length >= 1) subject = takeQuote(s, ['quoted']);
  const prev = previousData(s.state);
  const last = s.state.steps[s.state.steps.length - 1];
  if (body === undefined && /\bthe same\b/.test(s.clause.canon) && typeof last?.input['text'] === 'string') body = last.input['text'];
  if (body === undefined && prev) body = referenceFor(s.clause, prev.index, prev.step);
  if (!subject && body?.startsWith('{{') && prev) subject = s.state.topic ?? topicOf(prev.step);
  if (!subject) {
    const about = /\babout\s+(?:the\s+)?([\p{L}\p{N} '_-]{3,60}?)(?=[,.;!?]|\s+(?:to|and|saying|with|for)\b|$)/iu.exec(
      s.clause.raw.replace(QUOTE, ' ').replace(/⟨\d+⟩/g, ' '),
    );
    subject = about?.[1] ? capitalize(about[1].trim()) : body && !body.startsWith('{{') ? capitalize(subjectFrom(body)) : s.state.topic;
  }
  put('subject', subject);
  put('body', body);
}

/** A noun phrase with no verb that starts with a determiner ("the agenda", "today's weather"): what to send, not the text. */
function isDescription(text: string): boolean {
  return (
    (/^(?:the|a|an|my|our|your|their|his|her|its|today's|tomorrow's|yesterday's|this|that|these|those|some|every|each|all|everyone)\b/i.test(
      text,
    ) ||
      /\b(?:of|to|in|on|for|with|about)$/i.test(text)) &&
    !/\b(?:is|are|was|were|will|has|have|had|can|should|must|need|needs|going|done|ready|live|down|up|out|back|over|broke|went|\w+ed|\w+n't)\b|\d/i.test(
      text,
    )
  );
}

/** A subject for an email that carries an earlier step's output. */
function topicOf(step: StepDraft): string {
  const i = step.input;
  const repo = typeof i['owner'] === 'string' ? `${i['owner']}/${String(i['repo'])}` : '';
  const topics: Record<string, string> = {
    'github.list_issues': `Issues in ${repo}`,
    'github.list_pull_requests': `Pull requests in ${repo}`,
    'github.search_repositories': `Repositories matching "${String(i['query'])}"`,
    'github.create_issue': `New issue: ${String(i['title'])}`,
    'github.get_repository': repo,
    'github.get_issue': `Issue #${String(i['issue_number'])} in ${repo}`,
    'github.get_pull_request': `Pull request #${String(i['pull_number'])} in ${repo}`,
    'google_calendar.list_events': 'Your events',
    'google_calendar.create_event': `Event: ${String(i['summary'])}`,
    'slack.list_channels': 'Slack channels',
    'slack.list_messages': `Messages in #${String(i['channel'])}`,
    'gmail.search_email': 'Emails',
    'notion.query_database': 'Notion database entries',
    'http.fetch': `Content of ${String(i['url'])}`,
  };
  return topics[`${step.tool}.${step.action}`] ?? `${step.tool} ${step.action.replace(/_/g, ' ')}`;
}

function stateOf(s: Slots): string | undefined {
  const c = s.clause.canon;
  if (/\bopen\b.*\bclosed\b|\bclosed\b.*\bopen\b|\bboth\b/.test(c)) return 'all';
  if (/\bclosed\b|\bmerged\b|\bresolved\b/.test(c)) return 'closed';
  if (/\bopen\b/.test(c)) return 'open';
  if (/\ball\b/.test(c) && /\b(?:issues|prs|pull requests)\b/.test(c)) return 'all';
  return undefined;
}

/** Text after "about …" (or another pattern), up to a target or the end: "an issue about the login bug in acme/api" → "the login bug". */
function aboutText(s: Slots, pattern = /\b(?:about|for|regarding|re)\s+(.+)$/i): string | undefined {
  const raw = s.clause.raw.replace(QUOTE, ' ');
  const m = pattern.exec(raw);
  if (!m?.[1]) return undefined;
  const text = m[1]
    .replace(/\s*\b(?:in|on|to|at|for)\s+(?:the\s+)?⟨\d+⟩.*$/i, '')
    .replace(/⟨\d+⟩/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[.,;!?]+$/, '');
  return text.length >= 2 ? capitalize(text) : undefined;
}

function capitalize(t: string): string {
  return t.charAt(0).toUpperCase() + t.slice(1);
}

/** Custom tools: `field "value"`, `field: value`, `field=value`, an email for an email field, an enum value, then quotes in order. */
function fillGeneric(schema: Schema, s: Slots, put: Put): void {
  const props = schema.properties ?? {};
  const raw = s.clause.raw;
  const filled = new Set<string>();
  const set = (f: string, v: unknown) => {
    put(f, v);
    filled.add(f);
  };
  for (const [field, def] of Object.entries(props)) {
    const name = field.replace(/_/g, '[ _]');
    const q = new RegExp(`\\b${name}\\s*(?:[:=]|is|of)?\\s*⟦(\\d+)⟧`, 'i').exec(raw);
    if (q?.[1]) {
      s.state.usedQuotes.add(Number(q[1]));
      set(field, coerce(s.state.quotes[Number(q[1])]?.text ?? '', def.type));
      continue;
    }
    const kv = new RegExp(`\\b${name}\\s*[:=]\\s*([^\\s,;]+)`, 'i').exec(
      raw.replace(/⟨(\d+)⟩/g, (_m, i: string) => s.state.entities[Number(i)]?.value ?? ''),
    );
    if (kv?.[1]) {
      set(field, coerce(kv[1], def.type));
      continue;
    }
    if (def.format === 'email' || def.items?.format === 'email') {
      const e = entitiesOf(s, 'email').map((x) => x.value);
      if (e.length > 0) set(field, def.type === 'array' ? e : e[0]);
      continue;
    }
    if (def.enum) {
      const v = def.enum.find((x) => new RegExp(`\\b${x}\\b`, 'i').test(s.clause.canon));
      if (v) set(field, v);
      continue;
    }
    if (/^(?:limit|count|max)$/.test(field)) set(field, countOf(s));
    if (def.format === 'uri' || /url$/.test(field)) set(field, entitiesOf(s, 'url')[0]?.value);
  }
  for (const field of schema.required ?? []) {
    if (filled.has(field) || props[field]?.type !== 'string') continue;
    const q = takeQuote(s, ['quoted', 'title', 'body', 'colon', 'subject']);
    if (q !== undefined) set(field, q);
  }
}

function coerce(v: string, type: string | undefined): unknown {
  if (type === 'integer' || type === 'number') {
    const n = Number(v);
    return Number.isFinite(n) ? n : v;
  }
  if (type === 'boolean') return /^(?:true|yes|1)$/i.test(v);
  return v;
}
