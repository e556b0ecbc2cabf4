import { findAction } from '@tes/catalog';
import { text, ToolError, type ActionImpl, type ToolContext } from '../tool.js';
import { callProvider, classifyHttp, messageOf } from '../../provider-api/provider-http.js';
import { blocksText, paragraphBlocks, propertyCondition, type NBlock, type NProperty } from './content.js';

/**
 * Notion API (NOTION_API_URL, default https://api.notion.com/v1), version 2022-06-28.
 * Errors are `{object: "error", status, code, message}`; 403 `restricted_resource` is a
 * missing capability. Notion takes no idempotency key.
 */
export const NOTION_VERSION = '2022-06-28';

function call<T>(
  ctx: ToolContext,
  action: string,
  method: 'GET' | 'POST' | 'PATCH',
  path: string,
  body?: unknown,
  subject = '',
  /** A second write of the same step to the same path needs its own key, or it would be answered as a replay of the first. */
  part = 0,
) {
  const def = findAction('notion', action);
  return callProvider<T>(ctx, {
    service: 'notion',
    scopes: def?.scopes ?? [],
    method,
    path,
    body,
    // Reads inside a write action (the page before appending) carry no Idempotency-Key.
    write: method !== 'GET' && def?.side_effect !== 'read',
    headers: {
      'Notion-Version': NOTION_VERSION,
      'Content-Type': 'application/json',
      ...(part > 0 ? { 'Idempotency-Key': `${ctx.step.idempotency_key}#${part}` } : {}),
    },
    accessHint: 'access to the page or database (share it with the integration on the consent screen)',
    classify: classifyHttp,
    passThrough: ['not_found', 'rejected'],
  }).then((res) => (res.status >= 400 ? notionFailure(res.status, res.data, subject) : res));
}

/** Notion's 404 and 400 answers in the user's terms. */
function notionFailure(status: number, body: unknown, subject: string): never {
  const detail = messageOf(body) ?? `HTTP ${status}`;
  if (status === 404) {
    throw new ToolError(
      'step_failed',
      `Notion has no ${subject || 'page or database'} shared with the integration (${detail})`,
      false,
      'Check the id or link, and share the page or database with the integration in Notion (••• menu → Connections)',
    );
  }
  throw new ToolError('step_failed', `Notion rejected the request: ${detail}`, false, 'Check the names and values given for Notion');
}

interface NPage {
  object?: 'page' | 'database';
  id: string;
  url: string;
  created_time: string;
  last_edited_time?: string;
  /** A database's own title. */
  title?: { plain_text?: string }[];
  parent?: { database_id?: string; page_id?: string };
  properties?: Record<string, { type?: string; title?: { plain_text?: string; text?: { content?: string } }[] }>;
}

function titleOf(p: NPage): string {
  if (p.object === 'database') return (p.title ?? []).map((t) => t.plain_text ?? '').join('');
  const titleProp = Object.values(p.properties ?? {}).find((v) => v.type === 'title' || Array.isArray(v.title));
  return (titleProp?.title ?? []).map((t) => t.plain_text ?? t.text?.content ?? '').join('');
}

export function pageOut(p: NPage): Record<string, unknown> {
  const title = titleOf(p);
  const parent = p.parent?.database_id ?? p.parent?.page_id;
  return { id: p.id, url: p.url, title, ...(parent ? { parent_id: parent } : {}), created_time: new Date(p.created_time).toISOString() };
}

export const notionLive: Record<string, ActionImpl> = {
  create_page: async (input, ctx) => {
    const parentKey = input['parent_type'] === 'page' ? 'page_id' : 'database_id';
    const content = input['content'] as string | undefined;
    const r = await call<NPage>(ctx, 'create_page', 'POST', '/pages', {
      parent: { [parentKey]: input['parent_id'] },
      // The title property's id is always "title", whatever its name in the database.
      properties: { title: { title: [{ type: 'text', text: { content: String(input['title']) } }] } },
      ...(content
        ? {
            children: [
              {
                object: 'block',
                type: 'paragraph',
                paragraph: { rich_text: [{ type: 'text', text: { content: content.slice(0, 2000) } }] },
              },
            ],
          }
        : {}),
    });
    return pageOut(r.data);
  },
  query_database: async (input, ctx) => {
    const db = encodeURIComponent(text(input['database_id']));
    const conditions: unknown[] = [];
    if (input['filter_text']) conditions.push({ property: 'title', title: { contains: input['filter_text'] } });
    const wanted = input['filter'] as Parameters<typeof propertyCondition>[0] | undefined;
    if (wanted) {
      // Notion types a filter by the property's type: read the database's properties first.
      const schema = await call<{ properties: Record<string, NProperty> }>(
        ctx,
        'query_database',
        'GET',
        `/databases/${db}`,
        undefined,
        'database',
      );
      conditions.push(propertyCondition(wanted, schema.data.properties));
    }
    const filter = conditions.length > 1 ? { filter: { and: conditions } } : conditions.length === 1 ? { filter: conditions[0] } : {};
    const r = await call<{ results: NPage[] }>(
      ctx,
      'query_database',
      'POST',
      `/databases/${db}/query`,
      {
        page_size: input['limit'] ?? 20,
        sorts: [{ timestamp: 'created_time', direction: 'descending' }],
        ...filter,
      },
      'database',
    );
    const items = r.data.results.map(pageOut);
    return { items, count: items.length };
  },
  search: async (input, ctx) => {
    const r = await call<{ results: NPage[] }>(ctx, 'search', 'POST', '/search', {
      query: input['query'],
      filter: { property: 'object', value: input['kind'] ?? 'page' },
      sort: { direction: 'descending', timestamp: 'last_edited_time' },
      page_size: input['limit'] ?? 10,
    });
    const items = r.data.results.map((p) => ({
      id: p.id,
      object: p.object ?? 'page',
      title: titleOf(p),
      url: p.url,
      last_edited_time: new Date(p.last_edited_time ?? p.created_time).toISOString(),
    }));
    return { items, count: items.length };
  },
  get_page: async (input, ctx) => {
    const id = encodeURIComponent(text(input['page_id']));
    const page = await call<NPage>(ctx, 'get_page', 'GET', `/pages/${id}`, undefined, 'page');
    const blocks: NBlock[] = [];
    let cursor: string | null = null;
    // The page's top-level blocks, 100 a request (Notion's maximum), up to 1000.
    for (let n = 0; n < 10; n += 1) {
      const qs: string = `?page_size=100${cursor ? `&start_cursor=${encodeURIComponent(cursor)}` : ''}`;
      const r = await call<{ results: NBlock[]; has_more?: boolean; next_cursor?: string | null }>(
        ctx,
        'get_page',
        'GET',
        `/blocks/${id}/children${qs}`,
        undefined,
        'page',
      );
      blocks.push(...r.data.results);
      cursor = r.data.has_more ? (r.data.next_cursor ?? null) : null;
      if (!cursor) break;
    }
    return { id: page.data.id, title: titleOf(page.data), url: page.data.url, text: blocksText(blocks) };
  },
  append_to_page: async (input, ctx) => {
    const id = encodeURIComponent(text(input['page_id']));
    const children = paragraphBlocks(text(input['content']));
    // Notion appends at most 100 blocks a request.
    for (let i = 0; i < children.length; i += 100) {
      await call(ctx, 'append_to_page', 'PATCH', `/blocks/${id}/children`, { children: children.slice(i, i + 100) }, 'page', i / 100);
    }
    return { page_id: text(input['page_id']), appended: children.length };
  },
};
