import type { ToolHints } from '../../types.js';

const TELL = [
  'post',
  'send',
  'say',
  'tell',
  'notify',
  'announce',
  'share',
  'write',
  'ping',
  'message',
  'drop',
  'let',
  'inform',
  'broadcast',
  'remind',
  'ask',
  'put',
];

export const SLACK_HINTS: ToolHints = {
  nouns: ['slack', 'channel', 'channels', 'dm', 'direct message', 'workspace', '@channel'],
  actions: {
    // "… then post 'welcome' there": there is the channel named before.
    post_message: { verbs: [...TELL, '^slack'], objects: ['@channel', 'channel', 'there'], not: ['dm', 'direct message', 'privately'] },
    // "let Sarah know on Slack …": a person named with Slack and no channel is a direct message.
    send_direct_message: {
      verbs: [...TELL, 'dm', '^slack'],
      objects: ['@user', 'dm', 'direct message', 'privately', 'on slack'],
      not: ['@channel'],
    },
    list_channels: {
      verbs: ['list', 'show', 'get', 'find', 'what', 'which', 'display', 'see', 'grab', 'pull', 'bring', 'give', 'fetch'],
      objects: ['channels'],
    },
    create_channel: { verbs: ['create', 'make', 'new', 'set', 'start', 'open', 'add'], objects: ['channel'], not: ['invite'] },
    invite_to_channel: {
      verbs: ['invite', 'add'],
      objects: ['@channel', 'channel', '@user', '@email'],
      not: ['meeting', 'event', 'call', 'calendar', 'standup', 'sync', 'review', 'lunch', '1:1', 'interview', 'demo', 'retro', '@time'],
    },
    // "reply in the thread of the latest message in #eng": a thread names the message replied to.
    reply_in_thread: {
      verbs: ['reply', 'respond', 'answer', 'post', 'add', 'write', 'comment'],
      objects: ['thread'],
      not: ['email', 'mail', 'inbox', 'issue', 'pr', 'pull request'],
    },
    search_messages: {
      verbs: ['search', 'find', 'grep', 'dig'],
      objects: ['slack', 'messages', 'message', 'mentions', 'mentioning', 'conversations', '@channel'],
      not: ['email', 'emails', 'mail', 'mails', 'inbox', 'gmail', 'notion', 'repo', 'repos', 'repositories', 'issue', 'issues'],
    },
    list_messages: {
      verbs: ['read', 'show', 'get', 'list', 'fetch', 'what', 'see', 'check', 'catch', 'display', 'look', 'grab', 'pull', 'bring', 'give'],
      objects: ['messages', 'history', 'conversation', 'posts', 'said', 'say', 'going', '@channel'],
      not: ['summary', 'summarize'],
    },
  },
};
