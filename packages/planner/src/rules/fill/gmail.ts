import { ref } from '@tes/catalog';
import { ACTION_WORDS } from '../intents.js';
import { entitiesOf, previousData, quoteAfter, referenceFor, searchWindow, takeQuote, type Slots, type StepDraft } from '../slots.js';
import { subjectFrom } from '../free-text.js';
import { QUOTE } from '../text.js';
import { messageId } from './messages.js';
import { capitalize, derive, messageAfterTarget, textOrBack, type Fill, type Put } from './common.js';

/** Per action: what each of its fields comes from. */
export const GMAIL_FILLS: Record<string, Fill> = {
  'gmail.send_email': (s, put) => fillEmail(s, put),
  'gmail.create_draft': (s, put) => fillEmail(s, put),
  'gmail.reply_to_email': (s, put, add) => {
    put('body', textOrBack(s, ['body', 'colon'], ['reply', 'respond', 'answer', 'write'], { leftover: false }));
    if (/\breply[- ]all\b|\breply to (?:all|everyone)\b/.test(s.clause.canon)) put('reply_all', true);
    const id = /\b(?:email|message|mail|thread)\s+(?:id\s+)?([0-9a-f]{12,24})\b/i.exec(s.clause.raw)?.[1] ?? messageId(s);
    if (id) return put('message_id', id);
    const prev = previousData(s.state);
    if (prev && `${prev.step.tool}.${prev.step.action}` === 'gmail.search_email') return put('message_id', ref(prev.index, 'items.0.id'));
    const from = entitiesOf(s, 'email')[0]?.value;
    const named =
      /\bfrom\s+([\p{Lu}][\p{L}-]+)/u.exec(s.clause.raw)?.[1] ??
      /\b(?!(?:today|yesterday|this|last|my|our)['’])([\p{L}][\p{L}-]+)['’]s\s+(?:last|latest|recent|newest)?\s*(?:e-?mail|message|mail)/iu.exec(
        s.clause.raw,
      )?.[1];
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
};

export function emails(s: Slots): { to: string[]; cc: string[] } {
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

function fillEmail(s: Slots, put: Put): void {
  const { to, cc } = emails(s);
  // "… with sam@contoso.com, then email him the event link": the one person the request named before.
  if (to.length === 0 && /\b(?:him|her|them)\b/.test(s.clause.canon)) {
    const named = [...new Set(s.state.entities.filter((e) => e.kind === 'email').map((e) => e.value))];
    if (named.length === 1 && named[0]) to.push(named[0]);
  }
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
  // "email lee@x.io that the deck is ready": the message in the user's own words.
  if (body === undefined) {
    body = messageAfterTarget(s);
    derive(s, 'body', body, "the request's own words after the recipient");
  }
  if (!subject && body?.startsWith('{{') && prev) subject = s.state.topic ?? topicOf(prev.step);
  if (!subject) {
    const about = /\babout\s+(?:the\s+)?([\p{L}\p{N} '_-]{3,60}?)(?=[,.;!?]|\s+(?:to|and|saying|with|for)\b|$)/iu.exec(
      s.clause.raw.replace(QUOTE, ' ').replace(/⟨\d+⟩/g, ' '),
    );
    subject = about?.[1] ? capitalize(about[1].trim()) : body && !body.startsWith('{{') ? capitalize(subjectFrom(body)) : s.state.topic;
    derive(s, 'subject', subject, about?.[1] ? 'from "about …"' : 'from the message');
  }
  put('subject', subject);
  put('body', body);
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
