import { startFakeProvider, type Fault, type FakeProvider, type Reply } from '../../test-support/fake-provider.js';

/** Notion API 2022-06-28: `{object: "error", status, code, message}` errors; checks the Notion-Version header. */
export interface FakeNotion extends FakeProvider {
  pages: NPage[];
}

interface NPage {
  object: 'page';
  id: string;
  url: string;
  created_time: string;
  parent: { type: string; database_id?: string; page_id?: string };
  properties: Record<string, unknown>;
}

const err = (status: number, code: string, message: string, headers?: Record<string, string>): Reply => ({
  status,
  body: { object: 'error', status, code, message },
  ...(headers ? { headers } : {}),
});

function fault(f: Fault): Reply {
  switch (f.kind) {
    case 'unavailable':
      return err(f.status ?? 503, 'service_unavailable', 'Notion is unavailable.');
    case 'rate_limited':
      return err(
        429,
        'rate_limited',
        'You have been rate limited.',
        f.retryAfter !== undefined ? { 'retry-after': String(f.retryAfter) } : undefined,
      );
    case 'unauthorized':
      return err(401, 'unauthorized', 'API token is invalid.');
    case 'insufficient_scope':
      return err(403, 'restricted_resource', 'Insufficient permissions for this endpoint.');
    case 'client_rejected':
      return { status: 401, body: { error: 'invalid_client', error_description: 'Client authentication failed.' } };
  }
}

export async function startFakeNotion(tokens?: Iterable<string>): Promise<FakeNotion> {
  const pages: NPage[] = [];
  const fake = await startFakeProvider(
    {
      fault,
      route(req): Reply {
        if (req.headers['notion-version'] !== '2022-06-28') return err(400, 'missing_version', 'Notion-Version header failed validation.');
        if (req.path === '/pages' && req.method === 'POST') {
          const b = req.body as {
            parent: { database_id?: string; page_id?: string };
            properties: { title: { title: { text: { content: string } }[] } };
          };
          const n = pages.length + 1;
          const id = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
          const title = b.properties.title.title.map((t) => t.text.content).join('');
          const page: NPage = {
            object: 'page',
            id,
            url: `https://www.notion.so/${id.replaceAll('-', '')}`,
            created_time: new Date(Date.UTC(2025, 0, 1, 0, n)).toISOString(),
            parent: b.parent.database_id
              ? { type: 'database_id', database_id: b.parent.database_id }
              : { type: 'page_id', page_id: b.parent.page_id ?? '' },
            properties: { Name: { id: 'title', type: 'title', title: [{ type: 'text', text: { content: title }, plain_text: title }] } },
          };
          pages.push(page);
          return { status: 200, body: page };
        }
        const m = /^\/databases\/([^/]+)\/query$/.exec(req.path);
        if (m && req.method === 'POST') {
          const b = (req.body ?? {}) as { page_size?: number; filter?: { title?: { contains?: string } } };
          const contains = b.filter?.title?.contains?.toLowerCase();
          const results = pages
            .filter((p) => p.parent.database_id === m[1])
            .filter((p) => !contains || JSON.stringify(p.properties).toLowerCase().includes(contains))
            .reverse()
            .slice(0, b.page_size ?? 100);
          return { status: 200, body: { object: 'list', results, has_more: false, next_cursor: null } };
        }
        return err(404, 'object_not_found', 'Could not find the object.');
      },
    },
    tokens,
  );
  return Object.assign(fake, { pages });
}
