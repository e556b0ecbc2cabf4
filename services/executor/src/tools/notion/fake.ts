import { startFakeProvider, type Fault, type FakeProvider, type Reply } from '../../test-support/fake-provider.js';

/** Notion API 2022-06-28: `{object: "error", status, code, message}` errors; checks the Notion-Version header. */
export interface FakeNotion extends FakeProvider {
  pages: NPage[];
  /** Page id → its blocks. */
  blocks: Map<string, Record<string, unknown>[]>;
}

export interface NPage {
  object: 'page';
  id: string;
  url: string;
  created_time: string;
  last_edited_time: string;
  parent: { type: string; database_id?: string; page_id?: string };
  properties: Record<string, Record<string, unknown> & { type: string }>;
}

/** Every database of the fake has these properties (name → type). */
const NOTION_SCHEMA: Record<string, string> = {
  Name: 'title',
  Status: 'status',
  Priority: 'select',
  Tags: 'multi_select',
  Done: 'checkbox',
  Estimate: 'number',
  Notes: 'rich_text',
};

/** A database the search endpoint knows. */
const NOTION_DATABASE = {
  object: 'database',
  id: 'db1',
  url: 'https://www.notion.so/db1',
  created_time: '2024-12-01T00:00:00.000Z',
  last_edited_time: '2024-12-01T00:00:00.000Z',
  title: [{ type: 'text', text: { content: 'Roadmap' }, plain_text: 'Roadmap' }],
  properties: Object.fromEntries(
    Object.entries(NOTION_SCHEMA).map(([name, type]) => [name, { id: name.toLowerCase(), name, type, [type]: {} }]),
  ),
};

const err = (status: number, code: string, message: string, headers?: Record<string, string>): Reply => ({
  status,
  body: { object: 'error', status, code, message },
  ...(headers ? { headers } : {}),
});
const invalid = (message: string) => err(400, 'validation_error', message);
const missing = (id: string) =>
  err(
    404,
    'object_not_found',
    `Could not find page with ID: ${id}. Make sure the relevant pages and databases are shared with your integration.`,
  );

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

const plain = (rich: unknown) =>
  Array.isArray(rich)
    ? (rich as { plain_text?: string; text?: { content?: string } }[]).map((t) => t.plain_text ?? t.text?.content ?? '').join('')
    : '';
const titleOf = (p: NPage) => plain(Object.values(p.properties).find((v) => v.type === 'title')?.['title']);
/** The block as Notion answers it: ids, and plain_text on each rich text. */
function stored(block: Record<string, unknown>, n: number): Record<string, unknown> {
  const type = String(block['type']);
  const body = (block[type] ?? {}) as { rich_text?: { text?: { content?: string } }[] };
  const rich = (body.rich_text ?? []).map((t) => ({ ...t, plain_text: t.text?.content ?? '' }));
  return { object: 'block', id: `b${n}`, has_children: false, ...block, [type]: { ...body, rich_text: rich } };
}

type Condition = { property?: string; and?: Condition[] } & Record<string, unknown>;

/** Database query filters as Notion evaluates them; a condition of the wrong type is a validation_error. */
function holds(page: NPage, c: Condition): boolean | string {
  if (c.and) {
    const parts = c.and.map((x) => holds(page, x));
    return parts.find((x) => typeof x === 'string') ?? parts.every(Boolean);
  }
  const name = c.property === 'title' ? 'Name' : (c.property ?? '');
  const type = NOTION_SCHEMA[name];
  if (!type) return `Could not find property with name or id: ${c.property}`;
  const cond = c[type] as { equals?: string | number | boolean; contains?: string } | undefined;
  if (!cond) return `body failed validation: the filter for ${name} must be a ${type} filter`;
  const v = page.properties[name];
  switch (type) {
    case 'title':
    case 'rich_text': {
      const t = plain(v?.[type]).toLowerCase();
      return cond.contains !== undefined ? t.includes(String(cond.contains).toLowerCase()) : t === String(cond.equals).toLowerCase();
    }
    case 'status':
    case 'select':
      return (v?.[type] as { name?: string } | null | undefined)?.name === cond.equals;
    case 'multi_select':
      return ((v?.[type] as { name: string }[] | undefined) ?? []).some((o) => o.name === cond.contains);
    case 'checkbox':
      return Boolean(v?.['checkbox']) === cond.equals;
    case 'number':
      return v?.['number'] === cond.equals;
  }
  return false;
}

export async function startFakeNotion(tokens?: Iterable<string>): Promise<FakeNotion> {
  const pages: NPage[] = [];
  const blocks = new Map<string, Record<string, unknown>[]>();
  let blockCount = 0;
  const findPage = (id: string) => pages.find((p) => p.id === id || p.id.replaceAll('-', '') === id);
  const fake = await startFakeProvider(
    {
      fault,
      route(req): Reply {
        if (req.headers['notion-version'] !== '2022-06-28') return err(400, 'missing_version', 'Notion-Version header failed validation.');
        if (req.path === '/pages' && req.method === 'POST') {
          const b = req.body as {
            parent: { database_id?: string; page_id?: string };
            properties: { title: { title: { text: { content: string } }[] } };
            children?: Record<string, unknown>[];
          };
          const n = pages.length + 1;
          const id = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
          const title = b.properties.title.title.map((t) => t.text.content).join('');
          const at = new Date(Date.UTC(2025, 0, 1, 0, n)).toISOString();
          const page: NPage = {
            object: 'page',
            id,
            url: `https://www.notion.so/${id.replaceAll('-', '')}`,
            created_time: at,
            last_edited_time: at,
            parent: b.parent.database_id
              ? { type: 'database_id', database_id: b.parent.database_id }
              : { type: 'page_id', page_id: b.parent.page_id ?? '' },
            properties: { Name: { id: 'title', type: 'title', title: [{ type: 'text', text: { content: title }, plain_text: title }] } },
          };
          pages.push(page);
          blocks.set(
            id,
            (b.children ?? []).map((c) => stored(c, ++blockCount)),
          );
          return { status: 200, body: page };
        }
        if (req.path === '/search' && req.method === 'POST') {
          const b = (req.body ?? {}) as { query?: string; filter?: { property?: string; value?: string }; page_size?: number };
          if (b.filter && b.filter.property !== 'object') return invalid('body.filter.property should be "object"');
          const q = (b.query ?? '').toLowerCase();
          const all = [...pages.map((p) => ({ title: titleOf(p), obj: p })), { title: plain(NOTION_DATABASE.title), obj: NOTION_DATABASE }];
          const results = all
            .filter((x) => !b.filter?.value || (x.obj as { object: string }).object === b.filter.value)
            .filter((x) => x.title.toLowerCase().includes(q))
            .map((x) => x.obj as { last_edited_time: string })
            .sort((a, c) => c.last_edited_time.localeCompare(a.last_edited_time))
            .slice(0, b.page_size ?? 100);
          return {
            status: 200,
            body: { object: 'list', results, next_cursor: null, has_more: false, type: 'page_or_database', page_or_database: {} },
          };
        }
        const pageGet = /^\/pages\/([^/]+)$/.exec(req.path);
        if (pageGet?.[1] && req.method === 'GET') {
          const p = findPage(pageGet[1]);
          return p ? { status: 200, body: p } : missing(pageGet[1]);
        }
        const children = /^\/blocks\/([^/]+)\/children$/.exec(req.path);
        if (children?.[1]) {
          const p = findPage(children[1]);
          if (!p) return missing(children[1]);
          const list = blocks.get(p.id) ?? [];
          if (req.method === 'GET') {
            const size = Math.min(Number(req.query.get('page_size') ?? 100), 100);
            const from = Number(req.query.get('start_cursor') ?? 0);
            const more = from + size < list.length;
            return {
              status: 200,
              body: {
                object: 'list',
                results: list.slice(from, from + size),
                next_cursor: more ? String(from + size) : null,
                has_more: more,
                type: 'block',
                block: {},
              },
            };
          }
          if (req.method === 'PATCH') {
            const add = ((req.body ?? {}) as { children?: Record<string, unknown>[] }).children ?? [];
            if (add.length > 100) return invalid('body.children.length should be ≤ `100`, instead was `' + String(add.length) + '`.');
            const tooLong = add.some((c) =>
              (((c[String(c['type'])] ?? {}) as { rich_text?: { text?: { content?: string } }[] }).rich_text ?? []).some(
                (t) => (t.text?.content?.length ?? 0) > 2000,
              ),
            );
            if (tooLong) return invalid('body.children[0].paragraph.rich_text[0].text.content.length should be ≤ `2000`.');
            const made = add.map((c) => stored(c, ++blockCount));
            list.push(...made);
            blocks.set(p.id, list);
            return { status: 200, body: { object: 'list', results: made, next_cursor: null, has_more: false, type: 'block', block: {} } };
          }
        }
        const db = /^\/databases\/([^/]+)$/.exec(req.path);
        if (db?.[1] && req.method === 'GET') {
          if (db[1] === 'db-missing') return missing(db[1]);
          return { status: 200, body: { ...NOTION_DATABASE, id: db[1] } };
        }
        const m = /^\/databases\/([^/]+)\/query$/.exec(req.path);
        if (m && req.method === 'POST') {
          const b = (req.body ?? {}) as { page_size?: number; filter?: Condition };
          const inDb = pages.filter((p) => p.parent.database_id === m[1]);
          if (b.filter) {
            // The filter's shape is checked against the schema, whatever the pages.
            const problem = holds({ properties: {} } as unknown as NPage, b.filter);
            if (typeof problem === 'string') return invalid(problem);
          }
          const results = inDb
            .filter((p) => !b.filter || holds(p, b.filter) === true)
            .reverse()
            .slice(0, b.page_size ?? 100);
          return { status: 200, body: { object: 'list', results, has_more: false, next_cursor: null } };
        }
        return err(404, 'object_not_found', 'Could not find the object.');
      },
    },
    tokens,
  );
  return Object.assign(fake, { pages, blocks });
}
