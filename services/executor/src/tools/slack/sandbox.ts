import { text, type ActionImpl, type ToolContext } from '../tool.js';
import { SANDBOX_HOST, sandboxScope } from '../sandbox-scope.js';
import { slackFailure } from './errors.js';
import { parseSearch } from './sandbox-search.js';

/**
 * A simulated Slack workspace: #general and #random exist; posting to a channel creates it,
 * and so does create_channel. Every person named exists (a handle, a name or an email
 * address stands for one person), so requests can be tried with any names.
 */
const SEED = ['general', 'random'];
/** The connected user, author of what the sandbox posts. */
const ME = 'U0SANDBOXME';

function hash(s: string): string {
  let h = 0;
  for (const c of s) h = (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0;
  return h.toString(36).toUpperCase().padStart(8, '0');
}

const channelId = (name: string) => `C${hash(name)}`;

/** A person's id: an id as is; an email address and its local part (the handle) are the same person. */
function userId(written: string): string {
  const w = written.trim();
  if (/^[UW][A-Z0-9]{2,}$/.test(w)) return w;
  return `U${hash(w.replace(/^@/, '').toLowerCase().replace(/@.*$/, ''))}`;
}

interface Channel {
  id: string;
  name: string;
  is_private: boolean;
}

/** Every channel of the workspace: the seeded ones, those created, and those posted to. */
async function channels(ctx: ToolContext, scope: string): Promise<Channel[]> {
  const created = (await ctx.env.sandbox.list(scope, 'channel', 'channels')).map((d) => d.data as unknown as Channel);
  const byName = new Map(created.map((c) => [c.name, c]));
  for (const name of [...SEED, ...(await ctx.env.sandbox.containers(scope, 'message'))])
    if (!byName.has(name)) byName.set(name, { id: channelId(name), name, is_private: false });
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** The channel a name or an id means, or Slack's channel_not_found. */
async function existing(ctx: ToolContext, scope: string, given: string): Promise<Channel> {
  const name = given.replace(/^#/, '').toLowerCase();
  const hit = (await channels(ctx, scope)).find((c) => c.id === given || c.name === name);
  return hit ?? slackFailure('channel_not_found', `#${name}`);
}

async function post(ctx: ToolContext, scope: string, kind: string, container: string, text: unknown) {
  return ctx.env.sandbox.createOnce(scope, kind, container, ctx.step.idempotency_key, (n) => ({
    channel: kind === 'dm' ? `D${hash(container)}` : channelId(container),
    ts: `1700000000.${String(n).padStart(6, '0')}`,
    text,
  }));
}

export const slackSandbox: Record<string, ActionImpl> = {
  post_message: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'slack');
    const given = String(input['channel']);
    // A channel id known in this workspace means that channel.
    const known = (await channels(ctx, scope)).find((c) => c.id === given);
    const doc = await post(ctx, scope, 'message', known?.name ?? given.toLowerCase(), input['text']);
    return doc.data;
  },
  list_channels: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'slack');
    const items = (await channels(ctx, scope))
      .slice(0, Number(input['limit'] ?? 100))
      .map((c) => ({ id: c.id, name: c.name, is_private: c.is_private, num_members: 1 }));
    return { items, count: items.length };
  },
  send_direct_message: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'slack');
    const user = userId(String(input['user']));
    const doc = await post(ctx, scope, 'dm', user, input['text']);
    return { ...doc.data, user };
  },
  create_channel: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'slack');
    const name = String(input['name']);
    const mine = `${scope}|channel|${ctx.step.idempotency_key}`;
    const taken = (await channels(ctx, scope)).some((c) => c.name === name);
    const ours = (await ctx.env.sandbox.list(scope, 'channel', 'channels')).some((d) => d._id === mine);
    if (taken && !ours) slackFailure('name_taken', `#${name}`);
    const doc = await ctx.env.sandbox.createOnce(scope, 'channel', 'channels', ctx.step.idempotency_key, () => ({
      id: channelId(name),
      name,
      is_private: input['is_private'] === true,
    }));
    return doc.data;
  },
  invite_to_channel: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'slack');
    const channel = await existing(ctx, scope, String(input['channel']));
    const users = [...new Set((input['users'] as string[]).map(userId))];
    const key = ctx.step.idempotency_key;
    // Members invited by another step; a re-run of this step finds its own invitations.
    const others = (await ctx.env.sandbox.list(scope, 'member', channel.name))
      .filter((d) => !String(d._id).startsWith(`${scope}|member|${key}#`))
      .map((d) => String(d.data['user']));
    if (users.some((u) => others.includes(u))) slackFailure('already_in_channel', `#${channel.name}`);
    for (const u of users) await ctx.env.sandbox.createOnce(scope, 'member', channel.name, `${key}#${u}`, () => ({ user: u }));
    return { channel: channel.id, invited: users };
  },
  list_messages: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'slack');
    const channel = await existing(ctx, scope, String(input['channel']));
    const oldest = input['oldest'] ? Date.parse(text(input['oldest'])) : 0;
    // As conversations.history: a thread's replies are not posts of the channel, unless broadcast.
    const items = (await ctx.env.sandbox.list(scope, 'message', channel.name))
      .filter((d) => new Date(d.created_at).getTime() >= oldest && (!d.data['thread_ts'] || d.data['broadcast'] === true))
      .slice(0, Number(input['limit'] ?? 20))
      .map((d) => ({ ts: String(d.data['ts']), user: ME, text: String(d.data['text']), time: new Date(d.created_at).toISOString() }));
    return { items, count: items.length };
  },
  reply_in_thread: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'slack');
    const channel = await existing(ctx, scope, String(input['channel']));
    const given = text(input['thread_ts']);
    // The parent is a post of that channel; a reply's ts means its thread, as in Slack.
    const parent = (await ctx.env.sandbox.list(scope, 'message', channel.name)).find((d) => d.data['ts'] === given);
    if (!parent) return slackFailure('thread_not_found', `#${channel.name}`);
    const threadTs = text(parent.data['thread_ts'], given);
    const broadcast = input['also_send_to_channel'] === true;
    const doc = await ctx.env.sandbox.createOnce(scope, 'message', channel.name, ctx.step.idempotency_key, (n) => ({
      channel: channel.id,
      ts: `1700000000.${String(n).padStart(6, '0')}`,
      text: input['text'],
      thread_ts: threadTs,
      ...(broadcast ? { broadcast } : {}),
    }));
    const d = doc.data;
    return { channel: d['channel'], ts: d['ts'], thread_ts: d['thread_ts'], text: d['text'] };
  },
  search_messages: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'slack');
    const query = parseSearch(text(input['query']), ME);
    const items = (await ctx.env.sandbox.list(scope, 'message'))
      .filter((d) => query.matches({ channel: d.container, text: text(d.data['text']), at: new Date(d.created_at) }))
      .slice(0, Number(input['limit'] ?? 20))
      .map((d) => {
        const ts = text(d.data['ts']);
        const thread = d.data['thread_ts'] ? `?thread_ts=${text(d.data['thread_ts'])}&cid=${text(d.data['channel'])}` : '';
        return {
          ts,
          channel: d.container,
          user: ME,
          text: text(d.data['text']),
          time: new Date(d.created_at).toISOString(),
          permalink: `${SANDBOX_HOST}/slack/archives/${text(d.data['channel'])}/p${ts.replace('.', '')}${thread}`,
        };
      });
    return { items, count: items.length };
  },
};
