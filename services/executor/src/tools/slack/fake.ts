import { searchMessages } from './fake-search.js';
import { startFakeProvider, type Fault, type FakeProvider, type FakeRequest, type Reply } from '../../test-support/fake-provider.js';

/** Slack Web API: errors are HTTP 200 `{ok: false, error}`, except 429 with Retry-After. */
export interface FakeSlack extends FakeProvider {
  /** Posted messages; a thread reply has the parent's thread_ts (broadcast: also shown in the channel). */
  messages: { channel: string; text: string; ts: string; thread_ts?: string; broadcast?: boolean }[];
  channels: { id: string; name: string; is_private: boolean; num_members: number }[];
  /** Channel id → member user ids. */
  members: Map<string, Set<string>>;
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

interface Channel {
  id: string;
  name: string;
  is_private: boolean;
  num_members: number;
}

const CHANNELS: Channel[] = [
  { id: 'C01GENERAL', name: 'general', is_private: false, num_members: 12 },
  { id: 'C02RANDOM', name: 'random', is_private: false, num_members: 9 },
  { id: 'C03ENG', name: 'eng', is_private: true, num_members: 4 },
];

/** The workspace's people, as users.list answers them; the token is U00ME's. */
const SLACK_USERS = [
  { id: 'U00ME', name: 'me', real_name: 'Me Myself', profile: { display_name: 'me', real_name: 'Me Myself', email: 'me@acme.test' } },
  {
    id: 'U01ALICE',
    name: 'alice',
    real_name: 'Alice Martin',
    profile: { display_name: 'alice', real_name: 'Alice Martin', email: 'alice@acme.test' },
  },
  {
    id: 'U02BOB',
    name: 'bob.stone',
    real_name: 'Bob Stone',
    profile: { display_name: 'bob', real_name: 'Bob Stone', email: 'bob@acme.test' },
  },
  {
    id: 'U03CHLOE',
    name: 'chloe',
    real_name: 'Chloé Dubois',
    profile: { display_name: 'chloé', real_name: 'Chloé Dubois', email: 'chloe@acme.test' },
  },
  { id: 'U04OLD', name: 'gone', real_name: 'Gone Away', deleted: true, profile: { display_name: 'gone', real_name: 'Gone Away' } },
  { id: 'U05SAM', name: 'sam.lee', real_name: 'Sam Lee', profile: { display_name: 'sam', real_name: 'Sam Lee', email: 'sam@acme.test' } },
  { id: 'U06SAML', name: 'saml', real_name: 'Sam Lee', profile: { display_name: 'saml', real_name: 'Sam Lee', email: 'saml@acme.test' } },
];
/** users.list answers fewer than asked, as Slack may: resolution must follow the cursor. */
const USERS_PAGE = 3;

const ok = (body: Record<string, unknown>): Reply => ({ status: 200, body: { ok: true, ...body } });
const no = (error: string): Reply => ({ status: 200, body: { ok: false, error } });

/** Slack's cursor pagination: the cursor is the next offset, base64 as Slack's are opaque. */
function page<T>(all: readonly T[], q: URLSearchParams, max = 1000): { items: T[]; next: string } {
  const from = Number(Buffer.from(q.get('cursor') ?? '', 'base64').toString() || 0);
  const size = Math.min(Number(q.get('limit') ?? 100), max);
  const next = from + size < all.length ? Buffer.from(String(from + size)).toString('base64') : '';
  return { items: all.slice(from, from + size), next };
}

/** `tokens`: those the fake accepts (default tok-valid); a token starting xoxb- is a bot token. */
export async function startFakeSlack(tokens?: Iterable<string>): Promise<FakeSlack> {
  const messages: FakeSlack['messages'] = [];
  const channels = CHANNELS.map((c) => ({ ...c }));
  const members = new Map<string, Set<string>>([
    ['C01GENERAL', new Set(['U00ME', 'U01ALICE'])],
    ['C02RANDOM', new Set(['U00ME'])],
    ['C03ENG', new Set(['U00ME', 'U01ALICE'])],
  ]);
  const ims = new Map<string, string>();
  const byId = (id: string) => SLACK_USERS.find((u) => u.id === id && !u.deleted);
  // Slack accepts form-encoded or JSON bodies; this fake takes JSON, as the adapter sends.
  const body = (req: FakeRequest) => (req.body ?? {}) as Record<string, string | boolean | undefined>;
  const fake = await startFakeProvider(
    {
      fault,
      route(req): Reply {
        const b = body(req);
        const q = req.query;
        switch (`${req.method} ${req.path}`) {
          case 'POST /chat.postMessage': {
            const ch =
              channels.find((c) => c.id === b['channel'] || c.name === b['channel'])?.id ??
              [...ims.values()].find((d) => d === b['channel']);
            if (!ch) return no('channel_not_found');
            if (!b['text']) return no('no_text');
            const parent = b['thread_ts'] === undefined ? undefined : messages.find((m) => m.channel === ch && m.ts === b['thread_ts']);
            if (b['thread_ts'] !== undefined && !parent) return no('thread_not_found');
            const ts = `1710000000.${String(messages.length + 1).padStart(6, '0')}`;
            // A reply to a reply joins the same thread, as in Slack.
            const thread = parent ? { thread_ts: parent.thread_ts ?? parent.ts, broadcast: b['reply_broadcast'] === true } : {};
            messages.push({ channel: ch, text: String(b['text']), ts, ...thread });
            const subtype = thread.broadcast ? { subtype: 'thread_broadcast' } : {};
            return ok({
              channel: ch,
              ts,
              message: {
                type: 'message',
                ...subtype,
                user: 'U00ME',
                text: b['text'],
                ts,
                ...(parent ? { thread_ts: thread.thread_ts } : {}),
              },
            });
          }
          case 'GET /conversations.list': {
            const { items, next } = page(channels, q);
            return ok({ channels: items, response_metadata: { next_cursor: next } });
          }
          case 'GET /users.list': {
            const { items, next } = page(SLACK_USERS, q, USERS_PAGE);
            return ok({ members: items, response_metadata: { next_cursor: next } });
          }
          case 'GET /users.lookupByEmail': {
            const u = SLACK_USERS.find((x) => !x.deleted && x.profile.email === q.get('email'));
            return u ? ok({ user: u }) : no('users_not_found');
          }
          case 'POST /conversations.open': {
            const users = String(b['users'] ?? '');
            if (!byId(users)) return no('user_not_found');
            const id = ims.get(users) ?? `D${users.slice(1)}`;
            ims.set(users, id);
            return ok({ channel: { id } });
          }
          case 'POST /conversations.create': {
            const name = String(b['name'] ?? '');
            if (!name) return no('invalid_name_required');
            if (!/^[a-z0-9_\-\p{Ll}\p{Lo}]{1,80}$/u.test(name)) return no('invalid_name_specials');
            if (channels.some((c) => c.name === name)) return no('name_taken');
            const c = {
              id: `C${String(channels.length + 1).padStart(2, '0')}${name.toUpperCase().replace(/[^A-Z0-9]/g, '')}`,
              name,
              is_private: b['is_private'] === true,
              num_members: 1,
            };
            channels.push(c);
            members.set(c.id, new Set(['U00ME']));
            return ok({ channel: { ...c, is_channel: true, created: 1710000000, creator: 'U00ME' } });
          }
          case 'POST /conversations.invite': {
            const c = channels.find((x) => x.id === b['channel']);
            if (!c) return no('channel_not_found');
            const inside = members.get(c.id) ?? new Set<string>();
            if (!inside.has('U00ME')) return no('not_in_channel');
            const ids = String(b['users'] ?? '')
              .split(',')
              .filter(Boolean);
            if (ids.includes('U00ME')) return no('cant_invite_self');
            if (ids.some((id) => !byId(id))) return no('user_not_found');
            if (ids.some((id) => inside.has(id))) return no('already_in_channel');
            for (const id of ids) inside.add(id);
            members.set(c.id, inside);
            c.num_members = inside.size;
            return ok({ channel: { id: c.id, name: c.name, is_private: c.is_private } });
          }
          case 'GET /conversations.history': {
            const c = channels.find((x) => x.id === q.get('channel'));
            if (!c) return no('channel_not_found');
            if (c.is_private && !members.get(c.id)?.has('U00ME')) return no('not_in_channel');
            const oldest = Number(q.get('oldest') ?? 0);
            // Parents and broadcast replies only: a thread's replies are read with conversations.replies.
            const found = messages
              .filter((m) => m.channel === c.id && Number(m.ts) > oldest && (!m.thread_ts || m.broadcast))
              .reverse()
              .slice(0, Number(q.get('limit') ?? 100))
              .map((m) => ({ type: 'message', user: 'U00ME', text: m.text, ts: m.ts }));
            return ok({ messages: found, has_more: false, pin_count: 0, response_metadata: { next_cursor: '' } });
          }
          case 'GET /search.messages':
            // A user-token method: the app's bot token (xoxb-) is refused.
            if (req.token?.startsWith('xoxb-')) return no('not_allowed_token_type');
            return searchMessages(q, messages, channels);
        }
        return no('unknown_method');
      },
    },
    tokens,
  );
  return Object.assign(fake, { messages, channels, members });
}
