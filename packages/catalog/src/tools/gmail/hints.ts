import type { ToolHints } from '../../types.js';

export const GMAIL_HINTS: ToolHints = {
  nouns: ['gmail', 'email', 'emails', 'mail', 'mails', 'inbox', 'mailbox', 'e-mail', 'draft', 'drafts', '@email'],
  actions: {
    send_email: {
      verbs: ['send', 'email', 'mail', 'shoot', 'drop'],
      objects: ['email', 'mail', 'message', 'note', '@email'],
      // A #channel, a DM or Slack named: the message is not an email.
      not: [
        'draft',
        'drafts',
        'compose',
        'prepare',
        'reply',
        'respond',
        '@channel',
        'channel',
        'dm',
        'direct message',
        'privately',
        'slack',
      ],
    },
    create_draft: {
      verbs: ['draft', 'compose', 'prepare', 'write', 'create', 'save', 'start'],
      objects: ['email', 'mail', 'message', 'draft', 'note', '@email', 'reply'],
      not: ['@channel', 'slack', 'dm', 'direct message'],
    },
    reply_to_email: {
      verbs: ['reply', 'respond', 'answer', 'write'],
      phrases: ['reply all', 'reply-all', 'reply to all'],
      objects: ['email', 'mail', 'message', 'thread', '@email'],
      // A #channel or Slack named: a thread of Slack, not an email.
      not: ['draft', 'comment', 'issue', 'pr', 'pull request', '@channel', 'slack'],
    },
    forward_email: {
      verbs: ['forward', 'fwd', 'pass', 'relay'],
      objects: ['email', 'mail', 'message', 'thread', 'invoice', 'receipt', '@email'],
      not: ['draft', '@channel', 'slack', 'dm', 'issue', 'pr', 'pull request'],
    },
    search_email: {
      verbs: [
        'search',
        'find',
        'list',
        'show',
        'get',
        'check',
        'read',
        'look',
        'any',
        'what',
        'which',
        'fetch',
        'see',
        'display',
        'pull',
        'grab',
        'bring',
        'give',
      ],
      objects: ['emails', 'email', 'mail', 'mails', 'messages', 'inbox', 'mailbox', 'unread', 'gmail'],
      not: ['draft', 'field', 'fields', '@channel'],
    },
  },
};
