import { gmailQuery, replyRecipients, replySubject } from './live.js';
import { text, ToolError, type ActionImpl } from '../tool.js';
import { sandboxId, sandboxScope } from '../sandbox-scope.js';
import { forwardedText, forwardSubject } from './forward.js';

/**
 * A simulated mailbox: one welcome message, plus every email the user sends, replies or
 * forwards (kind `email`). Drafts are kept apart (kind `draft`): search never finds them.
 */
const ME = 'me@example.com';
const WELCOME = {
  id: 'msg_welcome',
  thread_id: 'thr_welcome',
  from: 'Sandbox <sandbox@example.com>',
  to: [ME],
  cc: [],
  subject: 'Welcome to the sandbox',
  snippet: 'Emails you send with a test key land here and can be searched.',
  date: '2024-01-01T00:00:00.000Z',
};

/** Gmail's YYYY/MM/DD (or YYYY-MM-DD) as the instant its day starts (UTC here). */
const dayStart = (v: string) => Date.parse(`${v.replaceAll('/', '-')}T00:00:00Z`);

/** Gmail query subset: from:, to:, subject:, after:/before: (days), is:unread (nothing is unread), in:… (ignored), and words. */
export function matches(m: Record<string, unknown>, query: string): boolean {
  const terms = query.match(/(?:[a-z]+:)?"[^"]*"|\S+/gi) ?? [];
  const hay = (v: unknown) => (Array.isArray(v) ? v.join(' ') : text(v)).toLowerCase();
  return terms.every((raw) => {
    const [, op, value] = /^(?:([a-z]+):)?"?([^"]*)"?$/i.exec(raw) ?? [];
    const v = (value ?? '').toLowerCase();
    switch (op?.toLowerCase()) {
      case 'from':
        return hay(m['from']).includes(v);
      case 'to':
        return hay(m['to']).includes(v);
      case 'subject':
        return hay(m['subject']).includes(v);
      case 'after':
        return Date.parse(text(m['date'])) >= dayStart(v);
      case 'before':
        return Date.parse(text(m['date'])) < dayStart(v);
      case 'is':
        return v !== 'unread';
      case 'in':
        return true;
      default:
        return `${hay(m['from'])} ${hay(m['to'])} ${hay(m['subject'])} ${hay(m['snippet'])}`.includes(v);
    }
  });
}

const out = (d: Record<string, unknown>) => ({ id: d['id'], thread_id: d['thread_id'], to: d['to'], subject: d['subject'] });

export const gmailSandbox: Record<string, ActionImpl> = {
  send_email: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'gmail');
    const doc = await ctx.env.sandbox.createOnce(scope, 'email', 'sent', ctx.step.idempotency_key, (n) => ({
      id: sandboxId('msg_', n),
      thread_id: sandboxId('thr_', n),
      from: ME,
      to: input['to'],
      cc: input['cc'] ?? [],
      subject: input['subject'],
      snippet: text(input['body']).slice(0, 100),
      date: new Date().toISOString(),
    }));
    return out(doc.data);
  },
  search_email: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'gmail');
    const sent = (await ctx.env.sandbox.list(scope, 'email', 'sent')).map((d) => d.data);
    const q = gmailQuery(input);
    const items = [...sent, WELCOME]
      .filter((m) => matches(m, q))
      .slice(0, Number(input['limit'] ?? 10))
      .map(({ cc: _cc, ...m }) => m);
    return { items, count: items.length };
  },
  create_draft: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'gmail');
    const doc = await ctx.env.sandbox.createOnce(scope, 'draft', 'drafts', ctx.step.idempotency_key, (n) => ({
      id: sandboxId('r', n, 8),
      message_id: sandboxId('msg_draft_', n),
      to: input['to'] ?? [],
      cc: input['cc'] ?? [],
      subject: input['subject'],
      body: input['body'],
    }));
    const d = doc.data;
    return { id: d['id'], message_id: d['message_id'], to: d['to'], subject: d['subject'] };
  },
  reply_to_email: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'gmail');
    const id = text(input['message_id']);
    const sent = (await ctx.env.sandbox.list(scope, 'email', 'sent')).map((d) => d.data);
    const original = [...sent, WELCOME].find((m) => m['id'] === id);
    if (!original) {
      throw new ToolError('step_failed', `Gmail: not found (no message ${id})`, false, 'Reply to a message id that search_email answered');
    }
    const list = (v: unknown) => (Array.isArray(v) ? v.join(', ') : text(v));
    const { to, cc } = replyRecipients(
      { from: text(original['from']), replyTo: '', to: list(original['to']), cc: list(original['cc']) },
      ME,
      input['reply_all'] === true,
    );
    const doc = await ctx.env.sandbox.createOnce(scope, 'email', 'sent', ctx.step.idempotency_key, (n) => ({
      id: sandboxId('msg_', n),
      thread_id: original['thread_id'],
      from: ME,
      to,
      cc,
      subject: replySubject(text(original['subject'])),
      snippet: text(input['body']).slice(0, 100),
      date: new Date().toISOString(),
    }));
    return out(doc.data);
  },
  // A new message in the sent mail, in a thread of its own, as Gmail's forward; the original's text is its snippet.
  forward_email: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'gmail');
    const id = text(input['message_id']);
    const sent = (await ctx.env.sandbox.list(scope, 'email', 'sent')).map((d) => d.data);
    const o = [...sent, WELCOME].find((m) => m['id'] === id);
    if (!o) {
      throw new ToolError('step_failed', `Gmail: not found (no message ${id})`, false, 'Forward a message id that search_email answered');
    }
    const list = (v: unknown) => (Array.isArray(v) ? v.join(', ') : text(v));
    const body = forwardedText(
      {
        from: text(o['from']),
        date: new Date(text(o['date'])).toUTCString(),
        subject: text(o['subject']),
        to: list(o['to']),
        cc: list(o['cc']),
      },
      text(o['snippet']),
      input['note'] ? text(input['note']) : undefined,
    );
    const doc = await ctx.env.sandbox.createOnce(scope, 'email', 'sent', ctx.step.idempotency_key, (n) => ({
      id: sandboxId('msg_', n),
      thread_id: sandboxId('thr_', n),
      from: ME,
      to: input['to'],
      cc: input['cc'] ?? [],
      subject: forwardSubject(text(o['subject'])),
      snippet: body.replace(/\s+/g, ' ').trim().slice(0, 100),
      date: new Date().toISOString(),
    }));
    return out(doc.data);
  },
};
