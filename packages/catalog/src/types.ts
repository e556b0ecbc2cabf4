/**
 * The catalog describes tools; the executor implements them and the planner picks
 * them. One entry per tool; each action has input/output schemas (JSON Schema, checked
 * by ajv in the executor and by the LLM planner), the OAuth scopes it needs and its
 * side-effect class.
 */
export type SideEffect = 'read' | 'write' | 'destructive';

export interface ActionDef {
  name: string;
  description: string;
  input: object;
  output: object;
  scopes: readonly string[];
  side_effect: SideEffect;
  /** Words that make the planner pick this action within its tool (verbs mostly). */
  keywords?: readonly string[];
}

export interface ToolDef {
  name: string;
  description: string;
  /** OAuth service the tool acts on behalf of a user with; null when none is needed. */
  service: string | null;
  /** Words that make the planner pick this tool (nouns mostly; a verb alone selects nothing). */
  keywords: readonly string[];
  actions: readonly ActionDef[];
}

export const str = (extra: Record<string, unknown> = {}) => ({ type: 'string', ...extra }) as const;
export const int = (extra: Record<string, unknown> = {}) => ({ type: 'integer', ...extra }) as const;
export const limit = (max = 100, def = 20) =>
  ({ type: 'integer', minimum: 1, maximum: max, default: def, description: 'Maximum number of items' }) as const;
export const dateTime = { type: 'string', format: 'date-time' } as const;
export const email = { type: 'string', format: 'email' } as const;

/** The output of every list/search action: the items and how many there are. */
export function listOf(item: object): object {
  return {
    type: 'object',
    properties: { items: { type: 'array', items: item }, count: { type: 'integer', minimum: 0 } },
    required: ['items', 'count'],
  };
}

/**
 * What the rules planner reads to recognise an action in a clause. Words are canonical English
 * lemmas (the planner maps French, German, Spanish and common typos onto them first).
 */
export interface ActionHints {
  /** Verbs that ask for this action ("close", "shut"); a clause must hold one, or one of `phrases`. */
  verbs: readonly string[];
  /**
   * What it acts on: nouns ("issue", "pull request") or entity kinds (`@repo`, `@number`, `@channel`,
   * `@email`, `@url`, `@user`); one must be in the clause (or in the clause's tool context).
   */
  objects: readonly string[];
  /** Phrases that ask for it on their own ("am i free"). */
  phrases?: readonly string[];
  /** Words that rule it out ("draft" for send_email). */
  not?: readonly string[];
  /**
   * Nouns of things that already exist when the clause says "to the/my/tomorrow's <noun>": a create
   * action does not add to them ("add bob@x.io to tomorrow's standup" is not a new event).
   */
  existing?: readonly string[];
}

export interface ToolHints {
  /** Nouns and names that point at the tool ("github", "repo"). */
  nouns: readonly string[];
  actions: Readonly<Record<string, ActionHints>>;
}

/**
 * What one language says for a tool, as data (`tools/<tool>/language/<lang>.json`): phrases and
 * idioms of that language mapped onto the canonical English words the tool's hints use
 * ("stand up a channel" → "create a channel", "fire off" → "send"). The rules planner replaces
 * them, longest first, in the instruction only (texts to send are cut out before).
 */
export interface ToolLanguage {
  phrases: Readonly<Record<string, string>>;
}
