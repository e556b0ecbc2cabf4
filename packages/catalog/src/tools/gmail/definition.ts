import { email, limit, listOf, str, type ToolDef } from '../../types.js';

export const gmailMessage = {
  type: 'object',
  properties: {
    id: str(),
    thread_id: str(),
    from: str(),
    to: { type: 'array', items: str() },
    subject: str(),
    snippet: str(),
    date: str(),
  },
  required: ['id', 'thread_id', 'from', 'to', 'subject', 'snippet', 'date'],
} as const;

export const GMAIL_TOOL: ToolDef = {
  name: 'gmail',
  description: 'Gmail: send email from the user’s account and search their mailbox.',
  service: 'gmail',
  keywords: ['gmail', 'email', 'emails', 'mail', 'mails', 'inbox', 'mailbox', 'e-mail'],
  actions: [
    {
      name: 'send_email',
      description: 'Sends a plain-text email.',
      keywords: ['send', 'email', 'mail', 'write', 'reply', 'forward'],
      input: {
        type: 'object',
        properties: {
          to: { type: 'array', items: email, minItems: 1, maxItems: 100 },
          cc: { type: 'array', items: email, maxItems: 100 },
          subject: str({ minLength: 1, maxLength: 998 }),
          body: str({ maxLength: 100000 }),
        },
        required: ['to', 'subject', 'body'],
        additionalProperties: false,
      },
      output: {
        type: 'object',
        properties: { id: str(), thread_id: str(), to: { type: 'array', items: str() }, subject: str() },
        required: ['id', 'thread_id', 'to', 'subject'],
      },
      scopes: ['https://www.googleapis.com/auth/gmail.send'],
      side_effect: 'write',
    },
    {
      name: 'search_email',
      description: 'Searches the mailbox with Gmail query syntax (from:, to:, subject:, words), newest first.',
      keywords: ['search', 'find', 'list', 'show', 'get', 'read', 'check', 'latest', 'last', 'recent', 'unread'],
      input: {
        type: 'object',
        properties: { query: str({ minLength: 1, maxLength: 500 }), limit: limit(100, 10) },
        required: ['query'],
        additionalProperties: false,
      },
      output: listOf(gmailMessage),
      scopes: ['https://www.googleapis.com/auth/gmail.readonly'],
      side_effect: 'read',
    },
  ],
};
