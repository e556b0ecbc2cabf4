import type { ToolHints } from '../../types.js';

export const NOTION_HINTS: ToolHints = {
  nouns: ['notion', 'page', 'pages', 'database', 'wiki', 'doc', 'note', 'notes', 'db'],
  actions: {
    create_page: {
      verbs: ['create', 'add', 'new', 'write', 'make', 'save', 'record', 'log', 'jot', 'note', 'start'],
      objects: ['page', 'note', 'doc', 'entry', 'notion', 'database', 'db', '@uuid'],
      // "Add 'Ship v2' to the page 'Q3 goals'" appends; it does not create a page.
      not: [
        'append',
        'to the page',
        'to page',
        'to the notion page',
        'to notion page',
        'to my page',
        'to my notion page',
        'to the doc',
        'to the wiki',
      ],
    },
    query_database: {
      verbs: [
        'query',
        'list',
        'show',
        'get',
        'find',
        'fetch',
        'what',
        'which',
        'display',
        'read',
        'filter',
        'see',
        'grab',
        'pull',
        'bring',
        'give',
      ],
      objects: ['database', 'db', 'entries', 'rows', 'items', 'table', 'tasks', 'records'],
    },
    search: {
      verbs: ['search', 'find', 'look', 'locate', 'list', 'show'],
      objects: ['notion', 'page', 'pages', 'doc', 'docs', 'notes', 'wiki', 'database', 'databases'],
      not: ['@uuid', 'entries', 'rows', 'where', 'whose'],
    },
    get_page: {
      verbs: ['get', 'read', 'show', 'open', 'fetch', 'display', 'see', 'what', 'grab', 'pull', 'bring', 'give'],
      objects: ['page', 'doc', 'note', 'contents', 'content', '@uuid'],
      not: ['database', 'db'],
    },
    append_to_page: {
      verbs: ['append', 'add', 'write', 'put', 'insert', 'attach', 'include'],
      objects: ['page', 'doc', 'note', 'notes', 'wiki', '@uuid'],
      not: ['database', 'db'],
    },
  },
};
