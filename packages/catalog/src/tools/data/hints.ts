import type { ToolHints } from '../../types.js';

export const DATA_HINTS: ToolHints = {
  nouns: ['data'],
  actions: {
    count: { verbs: ['count', 'how', 'total'], objects: ['them', 'results', 'items', 'those', 'these'], not: ['words', 'word'] },
    pluck: {
      verbs: ['pluck', 'extract', 'take', 'pick', 'list', 'get', 'show', 'keep'],
      objects: ['field', 'fields', 'property', 'each', 'every'],
      not: ['@url', 'join', 'combine'],
    },
    join: { verbs: ['join', 'combine', 'concatenate', 'merge'], objects: ['values', 'them', 'results', 'items', 'names', 'titles'] },
  },
};
