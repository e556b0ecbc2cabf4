import type { ActionImpl } from './tool.js';

/** The `text` tool: no network, no user connection; identical in sandbox and live. */
export const textActions: Record<string, ActionImpl> = {
  echo: async (input) => ({ text: String(input['text']) }),
  uppercase: async (input) => ({ text: String(input['text']).toUpperCase() }),
  lowercase: async (input) => ({ text: String(input['text']).toLowerCase() }),
  count_words: async (input) => ({ words: String(input['text']).split(/\s+/).filter(Boolean).length }),
};
