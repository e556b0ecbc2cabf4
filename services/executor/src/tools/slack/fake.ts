import { startFakeProvider, type Fault, type FakeProvider, type Reply } from '../../test-support/fake-provider.js';

/** Slack Web API: errors are HTTP 200 `{ok: false, error}`, except 429 with Retry-After. */
export interface FakeSlack extends FakeProvider {
  messages: { channel: string; text: string; ts: string }[];
}

function fault(f: Fault): Reply {
  switch (f.kind) {
    case 'unavailable':
      return { status: f.status ?? 503, body: { ok: false, error: 'service_unavailable' } };
    case 'rate_limited':
      return {
        status: 429,
        body: { ok: false, error: 'ratelimited' },
        headers: f.retryAfter !== undefined ? { 'retry-after': String(f.retryAfter) } : {},
      };
    case 'unauthorized':
      return { status: 200, body: { ok: false, error: 'invalid_auth' } };
    case 'insufficient_scope':
      return { status: 200, body: { ok: false, error: 'missing_scope', needed: 'chat:write', provided: 'channels:read' } };
    case 'client_rejected':
      return { status: 200, body: { ok: false, error: 'invalid_client_id' } };
  }
}

const CHANNELS = [
  { id: 'C01GENERAL', name: 'general', is_private: false, num_members: 12 },
  { id: 'C02RANDOM', name: 'random', is_private: false, num_members: 9 },
  { id: 'C03ENG', name: 'eng', is_private: true, num_members: 4 },
];

export async function startFakeSlack(tokens?: Iterable<string>): Promise<FakeSlack> {
  const messages: FakeSlack['messages'] = [];
  const fake = await startFakeProvider(
    {
      fault,
      route(req): Reply {
        if (req.path === '/chat.postMessage' && req.method === 'POST') {
          const b = req.body as { channel?: string; text?: string };
          const ch = CHANNELS.find((c) => c.id === b.channel || c.name === b.channel);
          if (!ch) return { status: 200, body: { ok: false, error: 'channel_not_found' } };
          const ts = `1710000000.${String(messages.length + 1).padStart(6, '0')}`;
          messages.push({ channel: ch.id, text: b.text ?? '', ts });
          return { status: 200, body: { ok: true, channel: ch.id, ts, message: { type: 'message', text: b.text, ts } } };
        }
        if (req.path === '/conversations.list' && req.method === 'GET') {
          return {
            status: 200,
            body: { ok: true, channels: CHANNELS.slice(0, Number(req.query.get('limit') ?? 100)), response_metadata: { next_cursor: '' } },
          };
        }
        return { status: 200, body: { ok: false, error: 'unknown_method' } };
      },
    },
    tokens,
  );
  return Object.assign(fake, { messages });
}
