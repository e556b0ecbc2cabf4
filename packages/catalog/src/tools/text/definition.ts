import { int, str, type ToolDef } from '../../types.js';

const textInput = {
  type: 'object',
  properties: { text: { type: 'string', maxLength: 10_000 } },
  required: ['text'],
  additionalProperties: false,
} as const;
const textOutput = { type: 'object', properties: { text: str() }, required: ['text'] } as const;

export const TEXT_TOOL: ToolDef = {
  name: 'text',
  description: 'Text utilities that need no connected account: echo, change case, count words.',
  service: null,
  keywords: ['text', 'echo', 'repeat', 'uppercase', 'upper', 'lowercase', 'lower', 'words', 'word', 'say', 'shout', 'string'],
  actions: [
    {
      name: 'echo',
      description: 'Returns the text unchanged.',
      keywords: ['echo', 'repeat', 'say', 'print'],
      input: textInput,
      output: textOutput,
      scopes: [],
      side_effect: 'read',
    },
    {
      name: 'uppercase',
      description: 'Returns the text in upper case.',
      keywords: ['uppercase', 'upper', 'capitalize', 'shout', 'caps'],
      input: textInput,
      output: textOutput,
      scopes: [],
      side_effect: 'read',
    },
    {
      name: 'lowercase',
      description: 'Returns the text in lower case.',
      keywords: ['lowercase', 'lower'],
      input: textInput,
      output: textOutput,
      scopes: [],
      side_effect: 'read',
    },
    {
      name: 'count_words',
      description: 'Counts the words of the text.',
      keywords: ['count', 'words', 'word', 'length'],
      input: textInput,
      output: { type: 'object', properties: { words: int() }, required: ['words'] },
      scopes: [],
      side_effect: 'read',
    },
  ],
};
