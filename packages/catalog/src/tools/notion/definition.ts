import { dateTime, limit, listOf, str, type ToolDef } from '../../types.js';

export const notionPage = {
  type: 'object',
  properties: { id: str(), url: str(), title: str(), parent_id: str(), created_time: dateTime },
  required: ['id', 'url', 'title', 'created_time'],
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
      description: 'Lists the pages of a database whose title contains `filter_text` (all when absent), newest first.',
      keywords: ['query', 'list', 'find', 'search', 'show', 'get', 'which', 'what'],
      input: {
        type: 'object',
        properties: { database_id: notionId, filter_text: str({ maxLength: 200 }), limit: limit(100, 20) },
        required: ['database_id'],
        additionalProperties: false,
      },
      output: listOf(notionPage),
      scopes: [],
      side_effect: 'read',
    },
  ],
};
