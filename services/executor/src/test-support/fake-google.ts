import { gmailMessageFormat } from '../tools/gmail/fake.js';
import { startFakeProvider, type Fault, type FakeProvider, type Reply } from './fake-provider.js';
import { calendarRoute, FAKE_GOOGLE_USER, type GEvent } from '../tools/google_calendar/fake.js';

/** Google Calendar v3 and Gmail v1 in one server (both under their own base path). */
export interface FakeGoogle extends FakeProvider {
  calendarUrl: string;
  gmailUrl: string;
  events: Map<string, GEvent>;
  /** messages.send: the raw message and the threadId asked for. */
  sent: { id: string; raw: string; threadId?: string | undefined }[];
  /** drafts.create: saved, never sent. */
  drafts: { id: string; messageId: string; raw: string }[];
}

function googleError(code: number, status: string, message: string, reason: string): Reply {
  return { status: code, body: { error: { code, message, status, errors: [{ message, domain: 'global', reason }] } } };
}

function fault(f: Fault): Reply {
  switch (f.kind) {
    case 'unavailable':
      return googleError(f.status ?? 503, 'UNAVAILABLE', 'The service is currently unavailable.', 'backendError');
    case 'rate_limited': {
      const r = googleError(429, 'RESOURCE_EXHAUSTED', 'Rate Limit Exceeded', 'rateLimitExceeded');
      return { ...r, ...(f.retryAfter !== undefined ? { headers: { 'retry-after': String(f.retryAfter) } } : {}) };
    }
    case 'unauthorized':
      return googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.', 'authError');
    case 'insufficient_scope':
      return googleError(403, 'PERMISSION_DENIED', 'Request had insufficient authentication scopes.', 'insufficientPermissions');
    case 'client_rejected':
      return googleError(401, 'UNAUTHENTICATED', 'The OAuth client was deleted.', 'deleted_client');
  }
}

const INBOX = [
  {
    id: 'm1',
    threadId: 't1',
    from: 'Alice <alice@example.com>',
    to: 'me@example.com',
    cc: '"Carol, Finance" <carol@example.com>, dave@example.com, ME@example.com',
    subject: 'Invoice March',
    snippet: 'Please find the invoice',
    date: 'Tue, 11 Mar 2025 09:00:00 +0000',
    messageId: '<CAinvoice-1@mail.example.com>',
    references: '<CAorder-0@mail.example.com>',
  },
  {
    id: 'm2',
    threadId: 't2',
    from: 'Bob <bob@example.com>',
    to: 'me@example.com',
    subject: 'Lunch?',
    snippet: 'Noon at the usual place',
    date: 'Wed, 12 Mar 2025 08:00:00 +0000',
    messageId: '<CAlunch-2@mail.example.com>',
    replyTo: 'Bob at home <bob@home.example.org>',
  },
  {
    id: 'm3',
    threadId: 't3',
    from: 'CI <ci@builds.example.com>',
    to: 'me@example.com',
    subject: 'Fwd: Build #42 passed',
    snippet: 'Build #42 passed',
    date: 'Thu, 13 Mar 2025 10:00:00 +0000',
    messageId: '<CAbuild-42@builds.example.com>',
  },
];

/** Gmail's after:/before: take YYYY/MM/DD (a day starting at midnight; UTC here); after is inclusive, before exclusive. */
function inRange(date: string, q: string): boolean {
  const day = (op: string) => {
    const d = new RegExp(`\\b${op}:(\\d{4})/(\\d{2})/(\\d{2})\\b`).exec(q);
    return d ? Date.UTC(Number(d[1]), Number(d[2]) - 1, Number(d[3])) : undefined;
  };
  const t = Date.parse(date);
  const after = day('after');
  const before = day('before');
  return (after === undefined || t >= after) && (before === undefined || t < before);
}

export async function startFakeGoogle(tokens?: Iterable<string>): Promise<FakeGoogle> {
  const events = new Map<string, GEvent>();
  const sent: FakeGoogle['sent'] = [];
  const drafts: FakeGoogle['drafts'] = [];
  const fake = await startFakeProvider(
    {
      fault,
      route(req): Reply {
        const calendar = calendarRoute(events, req);
        if (calendar) return calendar;
        if (req.path === '/gmail/v1/users/me/profile' && req.method === 'GET') {
          return { status: 200, body: { emailAddress: FAKE_GOOGLE_USER, messagesTotal: INBOX.length, threadsTotal: 2, historyId: '1' } };
        }
        if (req.path === '/gmail/v1/users/me/drafts' && req.method === 'POST') {
          const raw = (req.body as { message?: { raw?: string } }).message?.raw;
          if (!raw) return googleError(400, 'INVALID_ARGUMENT', 'Invalid draft', 'invalidArgument');
          const d = { id: `r-${drafts.length + 1}`, messageId: `d${drafts.length + 1}`, raw };
          drafts.push(d);
          return { status: 200, body: { id: d.id, message: { id: d.messageId, threadId: `t-${d.messageId}`, labelIds: ['DRAFT'] } } };
        }
        if (req.path === '/gmail/v1/users/me/messages/send' && req.method === 'POST') {
          const id = `s${sent.length + 1}`;
          const b = req.body as { raw: string; threadId?: string };
          sent.push({ id, raw: b.raw, threadId: b.threadId });
          const known = b.threadId && (INBOX.some((x) => x.threadId === b.threadId) || sent.some((x) => `t-${x.id}` === b.threadId));
          return { status: 200, body: { id, threadId: known ? b.threadId : `t-${id}`, labelIds: ['SENT'] } };
        }
        if (req.path === '/gmail/v1/users/me/messages' && req.method === 'GET') {
          const q = (req.query.get('q') ?? '').toLowerCase();
          const from = /from:(\S+)/.exec(q)?.[1];
          const words = q
            .replace(/\S+:\S+/g, ' ')
            .split(/\s+/)
            .filter(Boolean);
          const hits = INBOX.filter(
            (x) =>
              (!from || x.from.toLowerCase().includes(from)) &&
              words.every((w) => `${x.subject} ${x.snippet}`.toLowerCase().includes(w)) &&
              inRange(x.date, q),
          );
          return {
            status: 200,
            body: { messages: hits.map((x) => ({ id: x.id, threadId: x.threadId })), resultSizeEstimate: hits.length },
          };
        }
        const m = /^\/gmail\/v1\/users\/me\/messages\/([^/]+)$/.exec(req.path);
        if (m && req.method === 'GET') {
          const x = INBOX.find((i) => i.id === m?.[1]);
          if (!x) return googleError(404, 'NOT_FOUND', 'Requested entity was not found.', 'notFound');
          // Header names as Gmail spells them in the message; metadataHeaders matches them regardless of case.
          const wanted = req.query.getAll('metadataHeaders').map((n) => n.toLowerCase());
          const headers = [
            { name: 'From', value: x.from },
            { name: 'To', value: x.to },
            ...(x.cc ? [{ name: 'Cc', value: x.cc }] : []),
            ...(x.replyTo ? [{ name: 'Reply-To', value: x.replyTo }] : []),
            { name: 'Subject', value: x.subject },
            { name: 'Date', value: x.date },
            { name: 'Message-Id', value: x.messageId },
            ...(x.references ? [{ name: 'References', value: x.references }] : []),
          ].filter((h) => wanted.length === 0 || wanted.includes(h.name.toLowerCase()));
          const format = req.query.get('format');
          if (format === 'full' || format === 'raw') return gmailMessageFormat(x, headers, format);
          return {
            status: 200,
            body: { id: x.id, threadId: x.threadId, snippet: x.snippet, internalDate: String(Date.parse(x.date)), payload: { headers } },
          };
        }
        return googleError(404, 'NOT_FOUND', 'Not Found', 'notFound');
      },
    },
    tokens,
  );
  return Object.assign(fake, { calendarUrl: `${fake.url}/calendar/v3`, gmailUrl: `${fake.url}/gmail/v1`, events, sent, drafts });
}
