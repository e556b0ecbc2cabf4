import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CorpusEntry } from './score.js';

/** The categories every request belongs to (the table's rows, in this order). */
export const CATEGORIES = [
  'github',
  'slack',
  'calendar',
  'gmail',
  'notion',
  'http-text-data',
  'multi',
  'other-language',
  'typos',
  'refuse',
] as const;

/**
 * Reads every `*.jsonl` file of `dir` (one labeled request a line) and checks the labels' shape,
 * so that a typo in the corpus fails loudly instead of scoring as a planner miss.
 */
export function loadCorpus(dir: string): CorpusEntry[] {
  const entries: CorpusEntry[] = [];
  const ids = new Set<string>();
  const prompts = new Set<string>();
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()) {
    const lines = readFileSync(join(dir, file), 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (!line.trim()) return;
      const where = `${file}:${i + 1}`;
      let e: CorpusEntry;
      try {
        e = JSON.parse(line) as CorpusEntry;
      } catch (err) {
        throw new Error(`${where}: not JSON (${(err as Error).message})`);
      }
      const problem = checkEntry(e);
      if (problem) throw new Error(`${where}: ${problem}`);
      if (ids.has(e.id)) throw new Error(`${where}: duplicate id ${e.id}`);
      // The scripted model finds its answer by the prompt, so prompts are unique too.
      if (prompts.has(e.prompt)) throw new Error(`${where}: duplicate prompt`);
      ids.add(e.id);
      prompts.add(e.prompt);
      entries.push(e);
    });
  }
  return entries;
}

function checkEntry(e: CorpusEntry): string | undefined {
  if (typeof e.id !== 'string' || !e.id) return 'no id';
  if (!(CATEGORIES as readonly string[]).includes(e.category)) return `unknown category ${String(e.category)}`;
  if (typeof e.lang !== 'string' || typeof e.prompt !== 'string' || !e.prompt) return 'no lang or prompt';
  const x = e.expect as Record<string, unknown> | undefined;
  if (!x) return 'no expect';
  if ('refuse' in x) return x['refuse'] === true ? undefined : 'expect.refuse must be true';
  const alts = 'any_of' in x ? (x['any_of'] as { steps?: unknown }[]) : [x as { steps?: unknown }];
  for (const alt of alts) {
    if (!Array.isArray(alt.steps) || alt.steps.length === 0) return 'expect without steps';
    for (const s of alt.steps as { action?: unknown }[]) {
      if (typeof s.action !== 'string' || !/^[a-z_]+\.[a-z_]+$/.test(s.action)) return `bad action ${JSON.stringify(s.action)}`;
    }
  }
  return undefined;
}
