import { dateTime, int, limit, listOf, str, type ToolDef } from '../../types.js';

export const notionPage = {
  type: 'object',
  properties: { id: str(), url: str(), title: str(), parent_id: str(), created_time: dateTime },
  required: ['id', 'url', 'title', 'created_time'],
} as const;

/** One condition on a database property; the live adapter types it by the property's type. */
const propertyFilter = {
  type: 'object',
  description: 'A condition on one property: equals (text, select, status, number), contains (text, multi-select) or checkbox',
  properties: {
    property: str({ minLength: 1, maxLength: 200, description: 'Property name as shown in the database' }),
    equals: { type: ['string', 'number'] },
    contains: str({ minLength: 1, maxLength: 200 }),
    checkbox: { type: 'boolean' },
  },
  required: ['property'],
  minProperties: 2,
  maxProperties: 2,
  additionalProperties: false,
} as const;

const notionId = str({ minLength: 1, maxLength: 100, description: 'Notion id (UUID with or without dashes)' });

export const NOTION_TOOL: ToolDef = {
  name: 'notion',
  description: 'Notion pages and databases shared with the integration.',
  service: 'notion',
  keywords: ['notion', 'page', 'pages', 'database', 'databases', 'wiki', 'note', 'notes', 'doc'],
  actions: [
    {
      name: 'create_page',
      description: 'Creates a page under a database or a page, with an optional paragraph of content.',
      keywords: ['create', 'add', 'new', 'write', 'make', 'save', 'record', 'log'],
      input: {
        type: 'object',
        properties: {
          parent_id: notionId,
          parent_type: str({ enum: ['database', 'page'], default: 'database', description: 'What parent_id names' }),
          title: str({ minLength: 1, maxLength: 2000 }),
          content: str({ maxLength: 100000 }),
        },
        required: ['parent_id', 'title'],
        additionalProperties: false,
      },
      output: notionPage,
      // Notion OAuth has no scopes: the integration's capabilities (insert/read content) and the
      // pages the user shares on the consent screen decide.
      scopes: [],
      side_effect: 'write',
    },
    {
      name: 'query_database',
      description:
        'Lists the pages of a database whose title contains `filter_text` and that match `filter` (all when absent), newest first.',
      keywords: ['query', 'list', 'find', 'search', 'show', 'get', 'which', 'what'],
      input: {
        type: 'object',
        properties: { database_id: notionId, filter_text: str({ maxLength: 200 }), filter: propertyFilter, limit: limit(100, 20) },
        required: ['database_id'],
        additionalProperties: false,
      },
      output: listOf(notionPage),
      scopes: [],
      side_effect: 'read',
    },
    {
      name: 'search',
      description: 'Finds pages (or databases) shared with the integration whose title matches the query, most recently edited first.',
      keywords: ['search', 'find', 'look', 'locate', 'which', 'where'],
      input: {
        type: 'object',
        properties: {
          query: str({ minLength: 1, maxLength: 200 }),
          kind: str({ enum: ['page', 'database'], default: 'page' }),
          limit: limit(100, 10),
        },
        required: ['query'],
        additionalProperties: false,
      },
      output: listOf({
        type: 'object',
        properties: { id: str(), object: str({ enum: ['page', 'database'] }), title: str(), url: str(), last_edited_time: dateTime },
        required: ['id', 'object', 'title', 'url', 'last_edited_time'],
      }),
      scopes: [],
      side_effect: 'read',
    },
    {
      name: 'get_page',
      description: 'Reads a page: its title and its content as plain text.',
      keywords: ['get', 'read', 'open', 'show', 'fetch', 'view'],
      input: { type: 'object', properties: { page_id: notionId }, required: ['page_id'], additionalProperties: false },
      output: {
        type: 'object',
        properties: { id: str(), title: str(), url: str(), text: str({ description: 'The page’s blocks as plain text, one per line' }) },
        required: ['id', 'title', 'url', 'text'],
      },
      scopes: [],
      side_effect: 'read',
    },
    {
      name: 'append_to_page',
      description: 'Adds text at the end of a page; blank lines separate paragraphs.',
      keywords: ['append', 'add', 'write', 'update', 'extend'],
      input: {
        type: 'object',
        properties: { page_id: notionId, content: str({ minLength: 1, maxLength: 100000 }) },
        required: ['page_id', 'content'],
        additionalProperties: false,
      },
      output: {
        type: 'object',
        properties: { page_id: str(), appended: int({ minimum: 0, description: 'Paragraphs added' }) },
        required: ['page_id', 'appended'],
      },
      scopes: [],
      side_effect: 'write',
    },
  ],
};
