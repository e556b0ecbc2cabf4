import { createHash } from 'node:crypto';
import { text, type ActionImpl, type ToolContext } from '../tool.js';
import { SANDBOX_HOST, sandboxScope } from '../sandbox-scope.js';
import { paragraphBlocks } from './content.js';

/**
 * A simulated Notion workspace: any database or page id exists; pages persist under their
 * parent, text appended to a page persists with it. Sandbox pages have a title and text,
 * no other properties.
 */
function uuidFor(key: string): string {
  const h = createHash('sha256').update(key).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

const urlOf = (id: string) => `${SANDBOX_HOST}/notion/${id.replaceAll('-', '')}`;
/** Ids with or without dashes name the same object. */
const sameId = (a: string, b: string) => a.replaceAll('-', '').toLowerCase() === b.replaceAll('-', '').toLowerCase();

/** The page as create_page answered it: what the sandbox keeps besides is left out. */
function pageOf(data: Record<string, unknown>): Record<string, unknown> {
  const { content: _content, parent_type: _type, ...page } = data;
  return page;
}

async function allPages(ctx: ToolContext, scope: string) {
  return ctx.env.sandbox.list(scope, 'page');
}

/** Only a page's title can match a filter: sandbox pages have no other property. */
function matches(
  page: Record<string, unknown>,
  f: { property: string; equals?: string | number; contains?: string; checkbox?: boolean } | undefined,
): boolean {
  if (!f) return true;
  const title = String(page['title']).toLowerCase();
  if (/^(name|title)$/i.test(f.property)) {
    if (f.contains !== undefined) return title.includes(f.contains.toLowerCase());
    return f.equals !== undefined && title === String(f.equals).toLowerCase();
  }
  // An unset checkbox is unchecked; any other property is empty.
  return f.checkbox === false;
}

export const notionSandbox: Record<string, ActionImpl> = {
  create_page: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'notion');
    const parent = String(input['parent_id']);
    const id = uuidFor(ctx.step.idempotency_key);
    const doc = await ctx.env.sandbox.createOnce(scope, 'page', parent, ctx.step.idempotency_key, () => ({
      id,
      url: urlOf(id),
      title: input['title'],
      parent_id: parent,
      created_time: new Date().toISOString(),
      parent_type: input['parent_type'] ?? 'database',
      ...(input['content'] ? { content: input['content'] } : {}),
    }));
    return pageOf(doc.data);
  },
  query_database: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'notion');
    const f = (input['filter_text'] as string | undefined)?.toLowerCase();
    const items = (await ctx.env.sandbox.list(scope, 'page', String(input['database_id'])))
      .map((d) => pageOf(d.data))
      .filter((p) => !f || String(p['title']).toLowerCase().includes(f))
      .filter((p) => matches(p, input['filter'] as Parameters<typeof matches>[1]))
      .slice(0, Number(input['limit'] ?? 20));
    return { items, count: items.length };
  },
  search: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'notion');
    const q = text(input['query']).toLowerCase();
    const pages = await allPages(ctx, scope);
    const found =
      input['kind'] === 'database'
        ? // The sandbox knows a database by the pages created in it; its title is its id.
          [...new Map(pages.filter((d) => d.data['parent_type'] !== 'page').map((d) => [d.container, d])).values()].map((d) => ({
            id: d.container,
            object: 'database',
            title: d.container,
            url: urlOf(d.container),
            last_edited_time: new Date(d.created_at).toISOString(),
          }))
        : pages.map((d) => ({
            id: String(d.data['id']),
            object: 'page',
            title: String(d.data['title']),
            url: String(d.data['url']),
            last_edited_time: new Date(d.created_at).toISOString(),
          }));
    const items = found.filter((p) => p.title.toLowerCase().includes(q)).slice(0, Number(input['limit'] ?? 10));
    return { items, count: items.length };
  },
  get_page: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'notion');
    const id = text(input['page_id']);
    const page = (await allPages(ctx, scope)).find((d) => sameId(String(d.data['id']), id));
    const appended = (await ctx.env.sandbox.list(scope, 'paragraphs', id.replaceAll('-', '').toLowerCase())).reverse();
    const lines = [
      ...(page?.data['content'] ? [text(page.data['content'])] : []),
      ...appended.flatMap((d) => d.data['paragraphs'] as string[]),
    ];
    return {
      id: page ? String(page.data['id']) : id,
      // A page the sandbox did not create exists too, untitled.
      title: page ? String(page.data['title']) : 'Untitled',
      url: page ? String(page.data['url']) : urlOf(id),
      text: lines.join('\n'),
    };
  },
  append_to_page: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'notion');
    const id = text(input['page_id']);
    const paragraphs = paragraphBlocks(text(input['content'])).map((b) =>
      (b['paragraph'] as { rich_text: { text: { content: string } }[] }).rich_text.map((t) => t.text.content).join(''),
    );
    await ctx.env.sandbox.createOnce(scope, 'paragraphs', id.replaceAll('-', '').toLowerCase(), ctx.step.idempotency_key, () => ({
      paragraphs,
    }));
    return { page_id: id, appended: paragraphs.length };
  },
};
