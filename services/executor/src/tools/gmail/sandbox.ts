import { text, type ActionImpl } from '../tool.js';
import { sandboxId, sandboxScope } from '../../sandbox/sandbox-scope.js';

/** A simulated mailbox: one welcome message, plus every email the user sends. */
const WELCOME = {
  id: 'msg_welcome',
  thread_id: 'thr_welcome',
  from: 'Sandbox <sandbox@example.com>',
  to: ['me@example.com'],
  subject: 'Welcome to the sandbox',
  snippet: 'Emails you send with a test key land here and can be searched.',
  date: '2024-01-01T00:00:00.000Z',
};

/** Gmail query subset: from:, to:, subject:, is:unread (nothing is unread), in:… (ignored), and words. */
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
      case 'is':
        return v !== 'unread';
      case 'in':
        return true;
      default:
        return `${hay(m['from'])} ${hay(m['to'])} ${hay(m['subject'])} ${hay(m['snippet'])}`.includes(v);
    }
  });
}

export const gmailSandbox: Record<string, ActionImpl> = {
  send_email: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'gmail');
    const doc = await ctx.env.sandbox.createOnce(scope, 'email', 'sent', ctx.step.idempotency_key, (n) => ({
      id: sandboxId('msg_', n),
      thread_id: sandboxId('thr_', n),
      from: 'me@example.com',
      to: input['to'],
      subject: input['subject'],
      snippet: text(input['body']).slice(0, 100),
      date: new Date().toISOString(),
    }));
    const d = doc.data;
    return { id: d['id'], thread_id: d['thread_id'], to: d['to'], subject: d['subject'] };
  },
  search_email: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'gmail');
    const sent = (await ctx.env.sandbox.list(scope, 'email', 'sent')).map((d) => d.data);
    const items = [...sent, WELCOME].filter((m) => matches(m, String(input['query']))).slice(0, Number(input['limit'] ?? 10));
    return { items, count: items.length };
  },
};
