import addresses from 'email-addresses';
import { findAction } from '@tes/catalog';
import { text, type ActionImpl, type ToolContext } from '../tool.js';
import { classifyGoogle } from '../../provider-api/google.js';
import { callProvider } from '../../provider-api/provider-http.js';
import { forwardedText, forwardMessage, forwardSubject, hasAttachments, plainTextOf, type GPart } from './forward.js';

/** Gmail API v1 (GMAIL_API_URL). Gmail takes no idempotency key for messages.send or drafts.create. */
function call<T>(
  ctx: ToolContext,
  action: string,
  method: 'GET' | 'POST',
  path: string,
  extra: { params?: Record<string, unknown>; body?: unknown } = {},
) {
  const def = findAction('gmail', action);
  return callProvider<T>(ctx, {
    service: 'gmail',
    // One token per step: every call of an action asks for the action's scopes.
    scopes: def?.scopes ?? [],
    method,
    path,
    write: method !== 'GET' && def?.side_effect !== 'read',
    classify: classifyGoogle,
    ...extra,
  });
}

const encodeWord = (s: string) => (/^[\x20-\x7e]*$/.test(s) ? s : `=?UTF-8?B?${Buffer.from(s, 'utf8').toString('base64')}?=`);

/** RFC 2822 message, base64url, as messages.send and drafts.create want it in `raw`. */
export function rawMessage(m: {
  to: string[];
  cc?: string[] | undefined;
  subject: string;
  body: string;
  /** A reply: the original's Message-ID, and the References chain it continues. */
  inReplyTo?: string | undefined;
  references?: string | undefined;
}): string {
  const lines = [
    ...(m.to.length ? [`To: ${m.to.join(', ')}`] : []),
    ...(m.cc?.length ? [`Cc: ${m.cc.join(', ')}`] : []),
    `Subject: ${encodeWord(m.subject)}`,
    ...(m.inReplyTo ? [`In-Reply-To: ${m.inReplyTo}`, `References: ${m.references ?? m.inReplyTo}`] : []),
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset="UTF-8"',
    'Content-Transfer-Encoding: 8bit',
    '',
    m.body,
  ];
  return Buffer.from(lines.join('\r\n'), 'utf8').toString('base64url');
}

/** The Gmail query of search_email: the words, then after:/before: as Gmail writes days (YYYY/MM/DD). */
export function gmailQuery(input: Record<string, unknown>): string {
  const day = (v: unknown) => text(v).replaceAll('-', '/');
  return [
    input['query'] ? text(input['query']) : '',
    input['after'] ? `after:${day(input['after'])}` : '',
    input['before'] ? `before:${day(input['before'])}` : '',
  ]
    .filter(Boolean)
    .join(' ');
}

/** The bare addresses of an address-list header ("Ann <a@x>, b@y" → [a@x, b@y]). */
export function addressesOf(header: string): string[] {
  const list = header.trim() ? (addresses.parseAddressList({ input: header, rfc6532: true }) ?? []) : [];
  return list.flatMap((a) => (a.type === 'group' ? a.addresses.map((m) => m.address) : [a.address]));
}

/** "Re: " once, as mail clients do (a subject already starting with Re: keeps it). */
export const replySubject = (s: string) => (/^re:/i.test(s.trim()) ? s.trim() : `Re: ${s.trim()}`);

/**
 * Who a reply goes to: the original's Reply-To or From (its To when the user sent it); with
 * reply_all also everyone else on it, the user left out.
 */
export function replyRecipients(
  o: { from: string; replyTo: string; to: string; cc: string },
  me: string,
  all: boolean,
): { to: string[]; cc: string[] } {
  const isMe = (a: string) => a.toLowerCase() === me.toLowerCase();
  const fromMe = addressesOf(o.from).some(isMe);
  const sender = fromMe ? addressesOf(o.to) : addressesOf(o.replyTo || o.from);
  if (!all) return { to: sender, cc: [] };
  const seen = new Set<string>();
  const once = (list: string[]) =>
    list.filter((a) => {
      const k = a.toLowerCase();
      if (isMe(a) || seen.has(k)) return false;
      seen.add(k);
      return true;
    });
  return { to: once([...sender, ...addressesOf(o.to)]), cc: once(addressesOf(o.cc)) };
}

interface GMessage {
  id: string;
  threadId: string;
  snippet?: string;
  internalDate?: string;
  payload?: GPart;
}

const header = (m: GMessage, name: string) => m.payload?.headers?.find((x) => x.name.toLowerCase() === name.toLowerCase())?.value ?? '';

export function messageOut(m: GMessage): Record<string, unknown> {
  const date = header(m, 'Date');
  return {
    id: m.id,
    thread_id: m.threadId,
    from: header(m, 'From'),
    to: header(m, 'To')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    subject: header(m, 'Subject'),
    snippet: m.snippet ?? '',
    date: date ? new Date(date).toISOString() : m.internalDate ? new Date(Number(m.internalDate)).toISOString() : '',
  };
}

export const gmailLive: Record<string, ActionImpl> = {
  send_email: async (input, ctx) => {
    const to = input['to'] as string[];
    const r = await call<{ id: string; threadId: string }>(ctx, 'send_email', 'POST', '/users/me/messages/send', {
      body: {
        raw: rawMessage({ to, cc: input['cc'] as string[] | undefined, subject: text(input['subject']), body: text(input['body']) }),
      },
    });
    return { id: r.data.id, thread_id: r.data.threadId, to, subject: input['subject'] };
  },
  search_email: async (input, ctx) => {
    const list = await call<{ messages?: { id: string }[] }>(ctx, 'search_email', 'GET', '/users/me/messages', {
      params: { q: gmailQuery(input), maxResults: input['limit'] ?? 10 },
    });
    const items: Record<string, unknown>[] = [];
    for (const { id } of list.data.messages ?? []) {
      const m = await call<GMessage>(ctx, 'search_email', 'GET', `/users/me/messages/${encodeURIComponent(id)}`, {
        params: { format: 'metadata', metadataHeaders: ['From', 'To', 'Subject', 'Date'] },
      });
      items.push(messageOut(m.data));
    }
    return { items, count: items.length };
  },
  // users.drafts.create: the message is saved in Drafts, nothing is sent.
  create_draft: async (input, ctx) => {
    const to = (input['to'] as string[] | undefined) ?? [];
    const r = await call<{ id: string; message: { id: string } }>(ctx, 'create_draft', 'POST', '/users/me/drafts', {
      body: {
        message: {
          raw: rawMessage({ to, cc: input['cc'] as string[] | undefined, subject: text(input['subject']), body: text(input['body']) }),
        },
      },
    });
    return { id: r.data.id, message_id: r.data.message.id, to, subject: input['subject'] };
  },
  // Gmail threads a sent message when it names the threadId, carries In-Reply-To/References and keeps the Subject.
  reply_to_email: async (input, ctx) => {
    const id = text(input['message_id']);
    const original = await call<GMessage>(ctx, 'reply_to_email', 'GET', `/users/me/messages/${encodeURIComponent(id)}`, {
      params: { format: 'metadata', metadataHeaders: ['Message-ID', 'References', 'Subject', 'From', 'Reply-To', 'To', 'Cc'] },
    });
    const me = await call<{ emailAddress: string }>(ctx, 'reply_to_email', 'GET', '/users/me/profile');
    const o = original.data;
    const { to, cc } = replyRecipients(
      { from: header(o, 'From'), replyTo: header(o, 'Reply-To'), to: header(o, 'To'), cc: header(o, 'Cc') },
      me.data.emailAddress,
      input['reply_all'] === true,
    );
    const messageId = header(o, 'Message-ID');
    const subject = replySubject(header(o, 'Subject'));
    const raw = rawMessage({
      to,
      cc,
      subject,
      body: text(input['body']),
      inReplyTo: messageId || undefined,
      references: [header(o, 'References'), messageId].filter(Boolean).join(' '),
    });
    const r = await call<{ id: string; threadId: string }>(ctx, 'reply_to_email', 'POST', '/users/me/messages/send', {
      body: { raw, threadId: o.threadId },
    });
    return { id: r.data.id, thread_id: r.data.threadId, to, subject };
  },
  // messages.get format=full (headers and text), format=raw only when it has attachments, then messages.send in a new thread.
  forward_email: async (input, ctx) => {
    const id = encodeURIComponent(text(input['message_id']));
    const o = (await call<GMessage>(ctx, 'forward_email', 'GET', `/users/me/messages/${id}`, { params: { format: 'full' } })).data;
    const h = (name: string) => header(o, name);
    const subject = forwardSubject(h('Subject'));
    const body = forwardedText(
      { from: h('From'), date: h('Date'), subject: h('Subject'), to: h('To'), cc: h('Cc') },
      plainTextOf(o.payload, o.snippet),
      input['note'] ? text(input['note']) : undefined,
    );
    // The attachments go along inside the original, attached whole (message/rfc822) as Gmail receives it.
    const raw = hasAttachments(o.payload)
      ? (await call<{ raw: string }>(ctx, 'forward_email', 'GET', `/users/me/messages/${id}`, { params: { format: 'raw' } })).data.raw
      : undefined;
    const to = input['to'] as string[];
    const message = forwardMessage({
      to,
      cc: input['cc'] as string[] | undefined,
      subject,
      text: body,
      ...(raw ? { original: Buffer.from(raw, 'base64url') } : {}),
    });
    const r = await call<{ id: string; threadId: string }>(ctx, 'forward_email', 'POST', '/users/me/messages/send', {
      body: { raw: message },
    });
    return { id: r.data.id, thread_id: r.data.threadId, to, subject };
  },
};
