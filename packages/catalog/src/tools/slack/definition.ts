import { dateTime, int, limit, listOf, str, type ToolDef } from '../../types.js';

const channel = str({ minLength: 1, maxLength: 80, pattern: '^[^#\\s][^\\s]*$', description: 'Channel name without "#", or channel id' });
const user = str({ minLength: 1, maxLength: 254, description: 'Slack user id, @handle or name, or email address' });

export const slackChannel = {
  type: 'object',
  properties: { id: str(), name: str(), is_private: { type: 'boolean' }, num_members: int() },
  required: ['id', 'name', 'is_private', 'num_members'],
} as const;

export const SLACK_TOOL: ToolDef = {
  name: 'slack',
  description: 'Slack messages and channels of the user’s workspace.',
  service: 'slack',
  keywords: ['slack', 'channel', 'channels', 'message', 'dm', 'workspace'],
  actions: [
    {
      name: 'post_message',
      description: 'Posts a message to a channel (name without "#", or channel id).',
      keywords: ['post', 'send', 'say', 'tell', 'notify', 'announce', 'share', 'message', 'write', 'ping'],
      input: {
        type: 'object',
        properties: {
          channel,
          text: str({ minLength: 1, maxLength: 40000 }),
        },
        required: ['channel', 'text'],
        additionalProperties: false,
      },
      output: {
        type: 'object',
        properties: { channel: str(), ts: str(), text: str() },
        required: ['channel', 'ts', 'text'],
      },
      scopes: ['chat:write'],
      side_effect: 'write',
    },
    {
      name: 'list_channels',
      description: 'Lists the channels of the workspace.',
      keywords: ['list', 'show', 'find', 'get', 'which', 'what'],
      input: { type: 'object', properties: { limit: limit(1000, 100) }, additionalProperties: false },
      output: listOf(slackChannel),
      scopes: ['channels:read'],
      side_effect: 'read',
    },
    {
      name: 'send_direct_message',
      description: 'Sends a direct message to one person (user id, @handle, name or email).',
      keywords: ['dm', 'message', 'send', 'tell', 'ping', 'write'],
      input: {
        type: 'object',
        properties: { user, text: str({ minLength: 1, maxLength: 40000 }) },
        required: ['user', 'text'],
        additionalProperties: false,
      },
      output: {
        type: 'object',
        properties: { channel: str(), ts: str(), text: str(), user: str({ description: 'The recipient’s user id' }) },
        required: ['channel', 'ts', 'text', 'user'],
      },
      // users:read(.email) to find the person, im:write to open the conversation.
      scopes: ['chat:write', 'im:write', 'users:read', 'users:read.email'],
      side_effect: 'write',
    },
    {
      name: 'create_channel',
      description: 'Creates a channel (lowercase name without "#"), public unless is_private.',
      keywords: ['create', 'new', 'make', 'open', 'start'],
      input: {
        type: 'object',
        properties: {
          name: str({ minLength: 1, maxLength: 80, pattern: '^[^\\sA-Z#.,]+$', description: 'Lowercase, no spaces, "#", dots or commas' }),
          is_private: { type: 'boolean', default: false },
        },
        required: ['name'],
        additionalProperties: false,
      },
      output: {
        type: 'object',
        properties: { id: str(), name: str(), is_private: { type: 'boolean' } },
        required: ['id', 'name', 'is_private'],
      },
      scopes: ['channels:manage', 'groups:write'],
      side_effect: 'write',
    },
    {
      name: 'invite_to_channel',
      description: 'Invites people (user ids, @handles, names or emails) to a channel.',
      keywords: ['invite', 'add'],
      input: {
        type: 'object',
        properties: { channel, users: { type: 'array', items: user, minItems: 1, maxItems: 100 } },
        required: ['channel', 'users'],
        additionalProperties: false,
      },
      output: {
        type: 'object',
        properties: { channel: str({ description: 'Channel id' }), invited: { type: 'array', items: str({ description: 'User id' }) } },
        required: ['channel', 'invited'],
      },
      scopes: ['channels:manage', 'groups:write', 'channels:read', 'groups:read', 'users:read', 'users:read.email'],
      side_effect: 'write',
    },
    {
      name: 'list_messages',
      description: 'Reads the recent messages of a channel, newest first, optionally since a date-time.',
      keywords: ['read', 'list', 'show', 'get', 'fetch', 'check', 'latest', 'recent'],
      input: {
        type: 'object',
        properties: { channel, limit: limit(200, 20), oldest: { ...dateTime, description: 'Only messages after this ISO 8601 date-time' } },
        required: ['channel'],
        additionalProperties: false,
      },
      output: listOf({
        type: 'object',
        properties: { ts: str(), user: str(), text: str(), time: dateTime },
        required: ['ts', 'user', 'text', 'time'],
      }),
      scopes: ['channels:history', 'groups:history', 'channels:read', 'groups:read'],
      side_effect: 'read',
    },
    {
      name: 'reply_in_thread',
      description:
        'Replies in the thread of a channel message (its ts, as list_messages answers it); with also_send_to_channel the reply is shown in the channel too.',
      keywords: ['reply', 'respond', 'answer', 'thread'],
      input: {
        type: 'object',
        properties: {
          channel,
          thread_ts: str({ pattern: '^[0-9]{1,12}\\.[0-9]{1,9}$', description: 'The parent message’s ts ("1710000000.000100")' }),
          text: str({ minLength: 1, maxLength: 40000 }),
          also_send_to_channel: { type: 'boolean', default: false, description: 'Slack’s reply_broadcast' },
        },
        required: ['channel', 'thread_ts', 'text'],
        additionalProperties: false,
      },
      output: {
        type: 'object',
        properties: { channel: str({ description: 'Channel id' }), ts: str(), thread_ts: str(), text: str() },
        required: ['channel', 'ts', 'thread_ts', 'text'],
      },
      // channels:read / groups:read to find a channel by name.
      scopes: ['chat:write', 'channels:read', 'groups:read'],
      side_effect: 'write',
    },
    {
      name: 'search_messages',
      description:
        'Searches the messages of the workspace with Slack search syntax (words, in:#channel, from:@user, after:/before: dates), newest first.',
      keywords: ['search', 'find', 'look', 'lookup', 'where', 'mention', 'mentions'],
      input: {
        type: 'object',
        properties: { query: str({ minLength: 1, maxLength: 500 }), limit: limit(100, 20) },
        required: ['query'],
        additionalProperties: false,
      },
      output: listOf({
        type: 'object',
        properties: {
          ts: str(),
          channel: str({ description: 'Channel name' }),
          user: str(),
          text: str(),
          time: dateTime,
          permalink: str(),
        },
        required: ['ts', 'channel', 'user', 'text', 'time', 'permalink'],
      }),
      // A user-token scope: Slack grants it only to the user, never to the app's bot.
      scopes: ['search:read'],
      side_effect: 'read',
    },
  ],
};
