import { int, limit, listOf, str, type ToolDef } from '../../types.js';

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
          channel: str({ minLength: 1, maxLength: 80, pattern: '^[^#\\s][^\\s]*$' }),
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
  ],
};
