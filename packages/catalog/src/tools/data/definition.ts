import { int, str, type ToolDef } from '../../types.js';

const items = { type: 'array', maxItems: 10_000 } as const;

export const DATA_TOOL: ToolDef = {
  name: 'data',
  description: 'Data utilities over earlier steps’ outputs: count items, pluck a field, join values.',
  service: null,
  keywords: ['data', 'pluck', 'join', 'total', 'field', 'values', 'tally'],
  actions: [
    {
      name: 'count',
      description: 'Counts the items of an array.',
      keywords: ['count', 'total', 'tally', 'many', 'number'],
      input: { type: 'object', properties: { items }, required: ['items'], additionalProperties: false },
      output: { type: 'object', properties: { count: int() }, required: ['count'] },
      scopes: [],
      side_effect: 'read',
    },
    {
      name: 'pluck',
      description: 'Takes one field of every item (items without it are left out).',
      keywords: ['pluck', 'extract', 'field', 'collect'],
      input: {
        type: 'object',
        properties: { items, field: str({ minLength: 1, maxLength: 100 }) },
        required: ['items', 'field'],
        additionalProperties: false,
      },
      output: { type: 'object', properties: { values: { type: 'array' }, count: int() }, required: ['values', 'count'] },
      scopes: [],
      side_effect: 'read',
    },
    {
      name: 'join',
      description: 'Joins values into one text (objects are shown by their title, name or summary).',
      keywords: ['join', 'combine', 'concatenate', 'merge'],
      input: {
        type: 'object',
        properties: { values: items, separator: str({ maxLength: 20, default: ', ' }) },
        required: ['values'],
        additionalProperties: false,
      },
      output: { type: 'object', properties: { text: str() }, required: ['text'] },
      scopes: [],
      side_effect: 'read',
    },
  ],
};
