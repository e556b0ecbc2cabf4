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

/** A calendar day, YYYY-MM-DD (Gmail's after:/before: take whole days). */
const day = { type: 'string', format: 'date' } as const;
const subject = str({ minLength: 1, maxLength: 998 });
const body = str({ maxLength: 100000 });
const sentOut = {
  type: 'object',
  properties: { id: str(), thread_id: str(), to: { type: 'array', items: str() }, subject: str() },
  required: ['id', 'thread_id', 'to', 'subject'],
} as const;

const GMAIL = 'https://www.googleapis.com/auth/gmail';

export const GMAIL_TOOL: ToolDef = {
  name: 'gmail',
  description: 'Gmail: send, draft and reply to email from the user’s account and search their mailbox.',
  service: 'gmail',
  keywords: ['gmail', 'email', 'emails', 'mail', 'mails', 'inbox', 'mailbox', 'e-mail'],
  actions: [
    {
      name: 'send_email',
      description: 'Sends a plain-text email.',
      keywords: ['send', 'email', 'mail', 'write', 'forward'],
      input: {
        type: 'object',
        properties: {
          to: { type: 'array', items: email, minItems: 1, maxItems: 100 },
          cc: { type: 'array', items: email, maxItems: 100 },
          subject,
          body,
        },
        required: ['to', 'subject', 'body'],
        additionalProperties: false,
      },
      output: sentOut,
      scopes: [`${GMAIL}.send`],
      side_effect: 'write',
    },
    {
      name: 'search_email',
      description:
        'Searches the mailbox with Gmail query syntax (from:, to:, subject:, words) and/or a date range (after: inclusive, before: exclusive), newest first.',
      keywords: ['search', 'find', 'list', 'show', 'get', 'read', 'check', 'latest', 'last', 'recent', 'unread'],
      input: {
        type: 'object',
        properties: {
          query: str({ minLength: 1, maxLength: 500 }),
          after: day,
          before: day,
          limit: limit(100, 10),
        },
        anyOf: [{ required: ['query'] }, { required: ['after'] }, { required: ['before'] }],
        additionalProperties: false,
      },
      output: listOf(gmailMessage),
      scopes: [`${GMAIL}.readonly`],
      side_effect: 'read',
    },
    {
      name: 'create_draft',
      description: 'Saves a plain-text draft in the user’s Drafts; sends nothing.',
      keywords: ['draft', 'drafts', 'prepare', 'compose'],
      input: {
        type: 'object',
        properties: {
          to: { type: 'array', items: email, maxItems: 100 },
          cc: { type: 'array', items: email, maxItems: 100 },
          subject,
          body,
        },
        required: ['subject', 'body'],
        additionalProperties: false,
      },
      output: {
        type: 'object',
        properties: { id: str(), message_id: str(), to: { type: 'array', items: str() }, subject: str() },
        required: ['id', 'message_id', 'to', 'subject'],
      },
      scopes: [`${GMAIL}.compose`],
      side_effect: 'write',
    },
    {
      name: 'reply_to_email',
      description:
        'Replies in the thread of a message (its id, as search_email answers it): to its sender, or with reply_all to everyone on it.',
      keywords: ['reply', 'respond', 'answer'],
      input: {
        type: 'object',
        properties: {
          message_id: str({ minLength: 1, maxLength: 200 }),
          body,
          reply_all: { type: 'boolean', default: false },
        },
        required: ['message_id', 'body'],
        additionalProperties: false,
      },
      output: sentOut,
      // send, plus reading the original's headers (the vault's default Gmail scope).
      scopes: [`${GMAIL}.send`, `${GMAIL}.readonly`],
      side_effect: 'write',
    },
    {
      name: 'forward_email',
      description:
        'Forwards a message (its id, as search_email answers it) to new recipients, with an optional note above it; its attachments go along.',
      keywords: ['forward', 'fwd', 'pass', 'share'],
      input: {
        type: 'object',
        properties: {
          message_id: str({ minLength: 1, maxLength: 200 }),
          to: { type: 'array', items: email, minItems: 1, maxItems: 100 },
          cc: { type: 'array', items: email, maxItems: 100 },
          note: str({ maxLength: 100000, description: 'Text above the forwarded message' }),
        },
        required: ['message_id', 'to'],
        additionalProperties: false,
      },
      output: sentOut,
      // send, plus reading the original (the vault's default Gmail scope).
      scopes: [`${GMAIL}.send`, `${GMAIL}.readonly`],
      side_effect: 'write',
    },
  ],
};
