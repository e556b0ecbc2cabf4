import { findAction } from '@tes/catalog';
import { text, type ActionImpl, type ToolContext } from '../tool.js';
import { classifyGoogle } from '../../providers/google.js';
import { callProvider } from '../../providers/provider-http.js';

/** Gmail API v1 (GMAIL_API_URL). Gmail takes no idempotency key for messages.send. */
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
    scopes: def?.scopes ?? [],
    method,
    path,
    write: def?.side_effect !== 'read',
    classify: classifyGoogle,
    ...extra,
  });
}

/** RFC 2822 message, base64url, as messages.send wants it in `raw`. */
export function rawMessage(m: { to: string[]; cc?: string[] | undefined; subject: string; body: string }): string {
  const subject = /^[\x20-\x7e]*$/.test(m.subject) ? m.subject : `=?UTF-8?B?${Buffer.from(m.subject, 'utf8').toString('base64')}?=`;
  const lines = [
    `To: ${m.to.join(', ')}`,
    ...(m.cc?.length ? [`Cc: ${m.cc.join(', ')}`] : []),
    `Subject: ${subject}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset="UTF-8"',
    'Content-Transfer-Encoding: 8bit',
    '',
    m.body,
  ];
  return Buffer.from(lines.join('\r\n'), 'utf8').toString('base64url');
}

interface GMessage {
  id: string;
  threadId: string;
  snippet?: string;
  internalDate?: string;
  payload?: { headers?: { name: string; value: string }[] };
}

export function messageOut(m: GMessage): Record<string, unknown> {
  const h = (name: string) => m.payload?.headers?.find((x) => x.name.toLowerCase() === name.toLowerCase())?.value ?? '';
  const date = h('Date');
  return {
    id: m.id,
    thread_id: m.threadId,
    from: h('From'),
    to: h('To')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    subject: h('Subject'),
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
      params: { q: input['query'], maxResults: input['limit'] ?? 10 },
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
};
