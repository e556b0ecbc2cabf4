import { startFakeProvider, type Fault, type FakeProvider, type Reply } from './fake-provider.js';

/** Google Calendar v3 and Gmail v1 in one server (both under their own base path). */
export interface FakeGoogle extends FakeProvider {
  calendarUrl: string;
  gmailUrl: string;
  events: Map<string, GEvent>;
  sent: { id: string; raw: string }[];
}

interface GEvent {
  id: string;
  summary: string;
  description?: string;
  start: { dateTime: string };
  end: { dateTime: string };
  attendees?: { email: string }[];
  htmlLink: string;
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
    subject: 'Invoice March',
    snippet: 'Please find the invoice',
    date: 'Tue, 11 Mar 2025 09:00:00 +0000',
  },
  {
    id: 'm2',
    threadId: 't2',
    from: 'Bob <bob@example.com>',
    to: 'me@example.com',
    subject: 'Lunch?',
    snippet: 'Noon at the usual place',
    date: 'Wed, 12 Mar 2025 08:00:00 +0000',
  },
];

export async function startFakeGoogle(tokens?: Iterable<string>): Promise<FakeGoogle> {
  const events = new Map<string, GEvent>();
  const sent: FakeGoogle['sent'] = [];
  const fake = await startFakeProvider(
    {
      fault,
      route(req): Reply {
        let m = /^\/calendar\/v3\/calendars\/([^/]+)\/events(?:\/([^/]+))?$/.exec(req.path);
        if (m) {
          if (req.method === 'POST' && !m[2]) {
            const b = req.body as Omit<GEvent, 'htmlLink'>;
            if (events.has(b.id)) return googleError(409, 'ALREADY_EXISTS', 'The requested identifier already exists.', 'duplicate');
            const e: GEvent = { ...b, htmlLink: `https://calendar.google.com/event?eid=${b.id}` };
            events.set(e.id, e);
            return { status: 200, body: { kind: 'calendar#event', status: 'confirmed', ...e } };
          }
          if (req.method === 'GET' && m[2]) {
            const e = events.get(m[2]);
            return e ? { status: 200, body: e } : googleError(404, 'NOT_FOUND', 'Not Found', 'notFound');
          }
          if (req.method === 'GET') {
            const min = Date.parse(req.query.get('timeMin') ?? '1970-01-01T00:00:00Z');
            const max = Date.parse(req.query.get('timeMax') ?? '2999-01-01T00:00:00Z');
            const items = [...events.values()]
              .filter((e) => Date.parse(e.end.dateTime) > min && Date.parse(e.start.dateTime) < max)
              .sort((a, b) => Date.parse(a.start.dateTime) - Date.parse(b.start.dateTime))
              .slice(0, Number(req.query.get('maxResults') ?? 250));
            return { status: 200, body: { kind: 'calendar#events', items } };
          }
        }
        if (req.path === '/gmail/v1/users/me/messages/send' && req.method === 'POST') {
          const id = `s${sent.length + 1}`;
          sent.push({ id, raw: (req.body as { raw: string }).raw });
          return { status: 200, body: { id, threadId: `t-${id}`, labelIds: ['SENT'] } };
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
              (!from || x.from.toLowerCase().includes(from)) && words.every((w) => `${x.subject} ${x.snippet}`.toLowerCase().includes(w)),
          );
          return {
            status: 200,
            body: { messages: hits.map((x) => ({ id: x.id, threadId: x.threadId })), resultSizeEstimate: hits.length },
          };
        }
        m = /^\/gmail\/v1\/users\/me\/messages\/([^/]+)$/.exec(req.path);
        if (m && req.method === 'GET') {
          const x = INBOX.find((i) => i.id === m?.[1]);
          if (!x) return googleError(404, 'NOT_FOUND', 'Requested entity was not found.', 'notFound');
          const wanted = req.query.getAll('metadataHeaders');
          const headers = [
            { name: 'From', value: x.from },
            { name: 'To', value: x.to },
            { name: 'Subject', value: x.subject },
            { name: 'Date', value: x.date },
          ].filter((h) => wanted.length === 0 || wanted.includes(h.name));
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
  return Object.assign(fake, { calendarUrl: `${fake.url}/calendar/v3`, gmailUrl: `${fake.url}/gmail/v1`, events, sent });
}
