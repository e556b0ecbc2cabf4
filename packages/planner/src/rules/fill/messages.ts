import { ref } from '@tes/catalog';
import { entitiesOf, previousData, quoteAfter, takeQuote, type Slots } from '../slots.js';
import { QUOTE } from '../text.js';
import { emails } from './gmail.js';
import { channelName } from './slack.js';
import { textOrBack, type Add, type Fill } from './common.js';

/**
 * Replies in a Slack thread, searches of Slack, forwards of an email. The message replied to or
 * forwarded is found by a step planned first (the latest post of the channel, a search of the
 * mailbox), never guessed.
 */

/** The post a thread reply answers: one the step before found, else the channel's latest post. */
function threadOf(s: Slots, add: Add, channel: string | undefined): string | undefined {
  // "thread 1772611200.004500": a message's ts, as Slack writes it.
  const ts = /\b(\d{10}\.\d{3,6})\b/.exec(s.clause.raw)?.[1];
  if (ts) return ts;
  const prev = previousData(s.state);
  const key = prev ? `${prev.step.tool}.${prev.step.action}` : '';
  if (prev && (key === 'slack.list_messages' || key === 'slack.search_messages')) return ref(prev.index, 'items.0.ts');
  if (!channel || !/\b(?:latest|last|newest|most recent|recent|top)\b/.test(s.clause.canon)) return undefined;
  return ref(add({ tool: 'slack', action: 'list_messages', input: { channel, limit: 1 } }), 'items.0.ts');
}

/** "messages about the outage in #incident from @ana": Slack's search syntax. */
function slackQuery(s: Slots): string | undefined {
  const words =
    takeQuote(s, ['quoted', 'title', 'colon']) ??
    /\b(?:about|for|mentioning|containing|with|that mention|on)\s+(?!(?:the\s+)?(?:slack|messages?)\b)([\p{L}\p{N} _'-]{2,60}?)(?=\s+(?:in|from|since|on|this|last|today|yesterday|before|after)\b|[,.?!]|$)/iu
      .exec(s.clause.raw.replace(QUOTE, ' ').replace(/⟨\d+⟩/g, ' '))?.[1]
      ?.trim()
      .replace(/^(?:the|a|an)\s+/i, '');
  const parts = [words ? (/\s/.test(words) && !/^".*"$/.test(words) ? words : words) : undefined];
  for (const c of entitiesOf(s, 'channel')) parts.push(`in:#${c.value}`);
  for (const u of entitiesOf(s, 'user')) parts.push(`from:@${u.value}`);
  const query = parts.filter(Boolean).join(' ');
  return words ? query : undefined;
}

/** The email forwarded: one the step before found, else the latest one from the sender named. */
function forwardedEmail(s: Slots, add: Add, from: string | undefined): string | undefined {
  const id = messageId(s);
  if (id) return id;
  const prev = previousData(s.state);
  if (prev && `${prev.step.tool}.${prev.step.action}` === 'gmail.search_email') return ref(prev.index, 'items.0.id');
  const subject = quoteAfter(s, /\b(?:subject|titled|called|about)/);
  if (!from && !subject) return undefined;
  const query = [from ? `from:${from}` : undefined, subject ? `subject:"${subject}"` : undefined].filter(Boolean).join(' ');
  return ref(add({ tool: 'gmail', action: 'search_email', input: { query, limit: 1 } }), 'items.0.id');
}

export const MESSAGE_FILLS: Record<string, Fill> = {
  'slack.reply_in_thread': (s, put, add) => {
    const channel = channelName(s) ?? s.state.channel;
    put('channel', channel);
    put('thread_ts', threadOf(s, add, channel));
    put('text', textOrBack(s, ['body', 'colon', 'quoted'], ['reply', 'respond', 'answer', 'post', 'write', 'say'], { leftover: false }));
    if (/\b(?:also send to|broadcast|and the channel|also (?:in|to) the channel)\b/.test(s.clause.canon)) put('also_send_to_channel', true);
  },
  'slack.search_messages': (s, put) => put('query', slackQuery(s)),
  'gmail.forward_email': (s, put, add) => {
    // "forward the latest email from bob@x.io to ana@y.io": the sender is searched, the others receive it.
    const raw = s.clause.raw;
    const from = /\bfrom\s+⟨(\d+)⟩/.exec(raw)?.[1] ?? /⟨(\d+)⟩['’]s\b/.exec(raw)?.[1];
    const sender = from ? s.state.entities[Number(from)]?.value : /\bfrom\s+([\p{L}][\p{L}\p{N}.-]+)/u.exec(raw.replace(QUOTE, ' '))?.[1];
    const { to: all, cc } = emails(s);
    const to = all.filter((v) => v !== sender);
    put('message_id', forwardedEmail(s, add, sender));
    put('to', to.length > 0 ? to : undefined);
    put('cc', cc.length > 0 ? cc : undefined);
    put('note', takeQuote(s, ['body', 'colon'], { anyQuoted: false }));
  },
};

/** "message 18c2f0a9d1e4b7aa", "reply all on 18d00aa1f2c3b4e5": a Gmail message id (hex) said as it is. */
export function messageId(s: Slots): string | undefined {
  return /(?<![\w/.-])([0-9a-f]{16})(?![\w/.-])/i.exec(s.clause.raw.replace(QUOTE, ' '))?.[1];
}
