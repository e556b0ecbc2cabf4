import { findAction } from '@tes/catalog';
import type { ActionImpl, ToolContext } from '../tool.js';
import { callProvider, classifyHttp } from '../../providers/provider-http.js';

/**
 * Notion API (NOTION_API_URL, default https://api.notion.com/v1), version 2022-06-28.
 * Errors are `{object: "error", status, code, message}`; 403 `restricted_resource` is a
 * missing capability. Notion takes no idempotency key.
 */
export const NOTION_VERSION = '2022-06-28';

function call<T>(ctx: ToolContext, action: string, method: 'GET' | 'POST', path: string, body?: unknown) {
  const def = findAction('notion', action);
  return callProvider<T>(ctx, {
    service: 'notion',
    scopes: def?.scopes ?? [],
    method,
    path,
    body,
    write: def?.side_effect !== 'read',
    headers: { 'Notion-Version': NOTION_VERSION, 'Content-Type': 'application/json' },
    accessHint: 'access to the page or database (share it with the integration on the consent screen)',
    classify: classifyHttp,
  });
}

interface NPage {
  id: string;
  url: string;
  created_time: string;
  parent?: { database_id?: string; page_id?: string };
  properties?: Record<string, { type?: string; title?: { plain_text?: string; text?: { content?: string } }[] }>;
}

export function pageOut(p: NPage): Record<string, unknown> {
  const titleProp = Object.values(p.properties ?? {}).find((v) => v.type === 'title' || Array.isArray(v.title));
  const title = (titleProp?.title ?? []).map((t) => t.plain_text ?? t.text?.content ?? '').join('');
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
    const filter = input['filter_text'] ? { filter: { property: 'title', title: { contains: input['filter_text'] } } } : {};
    const r = await call<{ results: NPage[] }>(
      ctx,
      'query_database',
      'POST',
      `/databases/${encodeURIComponent(String(input['database_id']))}/query`,
      {
        page_size: input['limit'] ?? 20,
        sorts: [{ timestamp: 'created_time', direction: 'descending' }],
        ...filter,
      },
    );
    const items = r.data.results.map(pageOut);
    return { items, count: items.length };
  },
};
