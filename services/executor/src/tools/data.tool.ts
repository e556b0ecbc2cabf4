import { render } from '@tes/catalog';
import type { ActionImpl } from './tool.js';

/** The `data` tool: small transformations of earlier outputs; identical in sandbox and live. */
export const dataActions: Record<string, ActionImpl> = {
  count: async (input) => ({ count: (input['items'] as unknown[]).length }),
  pluck: async (input) => {
    const field = String(input['field']);
    const values = (input['items'] as unknown[])
      .map((i) => (i && typeof i === 'object' ? (i as Record<string, unknown>)[field] : undefined))
      .filter((v) => v !== undefined);
    return { values, count: values.length };
  },
  join: async (input) => ({ text: (input['values'] as unknown[]).map(render).join((input['separator'] as string | undefined) ?? ', ') }),
};
