import { createHash } from 'node:crypto';
import type { ActionImpl } from '../tool.js';
import { SANDBOX_HOST, sandboxScope } from '../../sandbox/sandbox-scope.js';

/** A simulated Notion workspace: any database or page id exists; pages persist under their parent. */
function uuidFor(key: string): string {
  const h = createHash('sha256').update(key).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

export const notionSandbox: Record<string, ActionImpl> = {
  create_page: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'notion');
    const parent = String(input['parent_id']);
    const id = uuidFor(ctx.step.idempotency_key);
    const doc = await ctx.env.sandbox.createOnce(scope, 'page', parent, ctx.step.idempotency_key, () => ({
      id,
      url: `${SANDBOX_HOST}/notion/${id.replaceAll('-', '')}`,
      title: input['title'],
      parent_id: parent,
      created_time: new Date().toISOString(),
      ...(input['content'] ? { content: input['content'] } : {}),
    }));
    const { content: _content, ...page } = doc.data;
    return page;
  },
  query_database: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'notion');
    const f = (input['filter_text'] as string | undefined)?.toLowerCase();
    const items = (await ctx.env.sandbox.list(scope, 'page', String(input['database_id'])))
      .map((d) => {
        const { content: _content, ...page } = d.data;
        return page;
      })
      .filter((p) => !f || String(p['title']).toLowerCase().includes(f))
      .slice(0, Number(input['limit'] ?? 20));
    return { items, count: items.length };
  },
};
