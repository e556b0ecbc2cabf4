import type { ToolHints } from '../../types.js';

export const TEXT_HINTS: ToolHints = {
  nouns: ['text'],
  actions: {
    echo: { verbs: ['echo', 'repeat', 'print'], objects: [], not: ['slack', '@channel', '@email', '@user', 'uppercase', 'lowercase'] },
    uppercase: { verbs: ['uppercase', 'upper', 'capitalize', 'shout', 'caps'], objects: [], not: ['@channel', '@email', '@user'] },
    lowercase: { verbs: ['lowercase', 'lower'], objects: [], not: ['@channel', '@email', '@user'] },
    count_words: { verbs: ['count', 'how'], objects: ['words', 'word'] },
  },
};
