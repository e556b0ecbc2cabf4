import type { ActionImpl } from '../tool.js';
import { sandboxScope } from '../../sandbox/sandbox-scope.js';

/** A simulated Slack workspace: #general and #random exist; posting to a channel creates it. */
const SEED = ['general', 'random'];

function channelId(name: string): string {
  let h = 0;
  for (const c of name) h = (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0;
  return `C${h.toString(36).toUpperCase().padStart(8, '0')}`;
}

export const slackSandbox: Record<string, ActionImpl> = {
  post_message: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'slack');
    const given = String(input['channel']);
    // A channel id known in this workspace means that channel.
    const names = [...new Set([...SEED, ...(await ctx.env.sandbox.containers(scope, 'message'))])];
    const channel = names.find((n) => channelId(n) === given) ?? given.toLowerCase();
    const doc = await ctx.env.sandbox.createOnce(scope, 'message', channel, ctx.step.idempotency_key, (n) => ({
      channel: channelId(channel),
      ts: `1700000000.${String(n).padStart(6, '0')}`,
      text: input['text'],
    }));
    return doc.data;
  },
  list_channels: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'slack');
    const names = [...new Set([...SEED, ...(await ctx.env.sandbox.containers(scope, 'message'))])].sort();
    const items = names
      .slice(0, Number(input['limit'] ?? 100))
      .map((name) => ({ id: channelId(name), name, is_private: false, num_members: 1 }));
    return { items, count: items.length };
  },
};
