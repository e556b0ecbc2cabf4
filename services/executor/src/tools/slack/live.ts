import { text, type ActionImpl } from '../tool.js';
import { notFound } from './errors.js';
import { channelId, slack, tsToIso, userIds } from './client.js';

/** Slack's live actions (Slack Web API, through client.ts). */
export const slackLive: Record<string, ActionImpl> = {
  post_message: async (input, ctx) => {
    const r = await slack<{ channel: string; ts: string; message?: { text?: string } }>(ctx, 'post_message', 'POST', '/chat.postMessage', {
      body: { channel: input['channel'], text: input['text'] },
      subject: `#${String(input['channel'])}`,
    });
    return { channel: r.channel, ts: r.ts, text: r.message?.text ?? String(input['text']) };
  },
  list_channels: async (input, ctx) => {
    const r = await slack<{ channels: { id: string; name: string; is_private?: boolean; num_members?: number }[] }>(
      ctx,
      'list_channels',
      'GET',
      '/conversations.list',
      {
        params: { limit: input['limit'] ?? 100, exclude_archived: true, types: 'public_channel,private_channel' },
      },
    );
    const items = r.channels.map((c) => ({ id: c.id, name: c.name, is_private: c.is_private ?? false, num_members: c.num_members ?? 0 }));
    return { items, count: items.length };
  },
  send_direct_message: async (input, ctx) => {
    const written = String(input['user']);
    const [user] = await userIds(ctx, 'send_direct_message', [written]);
    if (!user) return notFound('user', `"${written}"`);
    // conversations.open answers the existing DM with that person, or opens one.
    const open = await slack<{ channel: { id: string } }>(ctx, 'send_direct_message', 'POST', '/conversations.open', {
      body: { users: user },
      subject: `"${written}"`,
    });
    const r = await slack<{ channel: string; ts: string; message?: { text?: string } }>(
      ctx,
      'send_direct_message',
      'POST',
      '/chat.postMessage',
      {
        body: { channel: open.channel.id, text: input['text'] },
        subject: `"${written}"`,
      },
    );
    return { channel: r.channel, ts: r.ts, text: r.message?.text ?? String(input['text']), user };
  },
  create_channel: async (input, ctx) => {
    const name = String(input['name']);
    const r = await slack<{ channel: { id: string; name: string; is_private?: boolean } }>(
      ctx,
      'create_channel',
      'POST',
      '/conversations.create',
      {
        body: { name, is_private: input['is_private'] === true },
        subject: `#${name}`,
      },
    );
    return { id: r.channel.id, name: r.channel.name, is_private: r.channel.is_private ?? input['is_private'] === true };
  },
  invite_to_channel: async (input, ctx) => {
    const written = String(input['channel']);
    const channel = await channelId(ctx, 'invite_to_channel', written);
    const users = await userIds(ctx, 'invite_to_channel', input['users'] as string[]);
    const r = await slack<{ channel: { id: string } }>(ctx, 'invite_to_channel', 'POST', '/conversations.invite', {
      body: { channel, users: users.join(',') },
      subject: `#${written.replace(/^#/, '')}`,
    });
    return { channel: r.channel.id, invited: users };
  },
  list_messages: async (input, ctx) => {
    const written = String(input['channel']);
    const channel = await channelId(ctx, 'list_messages', written);
    const oldest = input['oldest'] ? (Date.parse(text(input['oldest'])) / 1000).toFixed(6) : undefined;
    const r = await slack<{ messages: { ts: string; user?: string; bot_id?: string; username?: string; text?: string }[] }>(
      ctx,
      'list_messages',
      'GET',
      '/conversations.history',
      { params: { channel, limit: input['limit'] ?? 20, ...(oldest ? { oldest } : {}) }, subject: `#${written.replace(/^#/, '')}` },
    );
    // Slack answers newest first.
    const items = r.messages.map((m) => ({
      ts: m.ts,
      user: m.user ?? m.bot_id ?? m.username ?? '',
      text: m.text ?? '',
      time: tsToIso(m.ts),
    }));
    return { items, count: items.length };
  },
  // chat.postMessage with thread_ts: the reply goes in the parent's thread (reply_broadcast: shown in the channel too).
  reply_in_thread: async (input, ctx) => {
    const written = String(input['channel']);
    const channel = await channelId(ctx, 'reply_in_thread', written);
    const threadTs = text(input['thread_ts']);
    const r = await slack<{ channel: string; ts: string; message?: { text?: string; thread_ts?: string } }>(
      ctx,
      'reply_in_thread',
      'POST',
      '/chat.postMessage',
      {
        body: {
          channel,
          text: input['text'],
          thread_ts: threadTs,
          ...(input['also_send_to_channel'] === true ? { reply_broadcast: true } : {}),
        },
        subject: `#${written.replace(/^#/, '')}`,
      },
    );
    return { channel: r.channel, ts: r.ts, thread_ts: r.message?.thread_ts ?? threadTs, text: r.message?.text ?? String(input['text']) };
  },
  // search.messages takes only a user token (scope search:read); newest first, as the other reads.
  search_messages: async (input, ctx) => {
    const r = await slack<{ messages?: { matches?: SearchMatch[] } }>(ctx, 'search_messages', 'GET', '/search.messages', {
      params: { query: input['query'], count: input['limit'] ?? 20, sort: 'timestamp', sort_dir: 'desc' },
    });
    const items = (r.messages?.matches ?? []).map((m) => ({
      ts: m.ts,
      channel: m.channel?.name ?? m.channel?.id ?? '',
      user: m.user ?? m.username ?? '',
      text: m.text ?? '',
      time: tsToIso(m.ts),
      permalink: m.permalink ?? '',
    }));
    return { items, count: items.length };
  },
};

/** One hit of search.messages (`messages.matches[]`). */
interface SearchMatch {
  ts: string;
  text?: string;
  user?: string;
  username?: string;
  permalink?: string;
  channel?: { id: string; name?: string };
}
