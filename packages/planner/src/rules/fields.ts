import type { ActionDef, ToolDef } from '@tes/catalog';
import { countOf, entitiesOf, takeQuote, type Slots, type StepDraft } from './slots.js';
import { CALENDAR_FILLS } from './fill/calendar.js';
import { CALENDAR_CHANGE_FILLS } from './fill/calendar-changes.js';
import type { Fill } from './fill/common.js';
import { GENERIC_FILLS } from './fill/generic.js';
import { GITHUB_FILLS } from './fill/github.js';
import { GMAIL_FILLS } from './fill/gmail.js';
import { MESSAGE_FILLS } from './fill/messages.js';
import { NOTION_FILLS } from './fill/notion.js';
import { SLACK_FILLS } from './fill/slack.js';

/**
 * Fills an action's input from a clause, field by field. Lookups the action needs first (a Notion
 * page named by its title, the email a reply answers) are planned as steps before it, and the field
 * refers to their output. Fields nothing fills are reported missing, in the user's words.
 */

export interface Filled {
  input: Record<string, unknown>;
  missing: string[];
}

interface Schema {
  properties?: Record<string, { type?: string; enum?: string[]; format?: string; items?: { format?: string } }>;
  required?: string[];
}

type Add = (step: StepDraft) => number;

export function fillInput(tool: ToolDef, action: ActionDef, s: Slots, add: Add): Filled {
  const schema = action.input as Schema;
  const props = schema.properties ?? {};
  const input: Record<string, unknown> = {};
  const key = `${tool.name}.${action.name}`;
  const put = (field: string, value: unknown) => {
    if (value !== undefined && value !== null && value !== '' && field in props) input[field] = value;
  };
  const BUILT_IN = SPECIFIC[key];
  if (BUILT_IN) BUILT_IN(s, put, add);
  else if (tool.service !== null || !GENERIC_TOOLS.has(tool.name)) fillGeneric(schema, s, put);
  // Shared fields.
  if ('owner' in props && !('owner' in input)) {
    const repo = entitiesOf(s, 'repo')[0]?.value ?? s.state.repo;
    if (repo) {
      const [owner, name] = repo.split('/');
      put('owner', owner);
      put('repo', name);
      s.state.repo = repo;
    }
  }
  if ('limit' in props && !('limit' in input)) put('limit', countOf(s));
  const unfilled = (schema.required ?? []).filter((f) => !(f in input));
  // A subject is derived from the message: with no message, the message alone is what is missing.
  const missing = unfilled.includes('body') ? unfilled.filter((f) => f !== 'subject') : unfilled;
  return { input, missing };
}

const GENERIC_TOOLS = new Set(['text', 'data', 'http']);

type Put = (field: string, value: unknown) => void;

/** Per built-in action: what each of its fields comes from. */
/** Per built-in action: what each of its fields comes from. */
const SPECIFIC: Record<string, Fill> = {
  ...GITHUB_FILLS,
  ...SLACK_FILLS,
  ...GMAIL_FILLS,
  ...MESSAGE_FILLS,
  ...CALENDAR_FILLS,
  ...CALENDAR_CHANGE_FILLS,
  ...NOTION_FILLS,
  ...GENERIC_FILLS,
};

/** Custom tools: `field "value"`, `field: value`, `field=value`, an email for an email field, an enum value, then quotes in order. */
function fillGeneric(schema: Schema, s: Slots, put: Put): void {
  const props = schema.properties ?? {};
  const raw = s.clause.raw;
  const filled = new Set<string>();
  const set = (f: string, v: unknown) => {
    put(f, v);
    filled.add(f);
  };
  for (const [field, def] of Object.entries(props)) {
    const name = field.replace(/_/g, '[ _]');
    const q = new RegExp(`\\b${name}\\s*(?:[:=]|is|of)?\\s*⟦(\\d+)⟧`, 'i').exec(raw);
    if (q?.[1]) {
      s.state.usedQuotes.add(Number(q[1]));
      set(field, coerce(s.state.quotes[Number(q[1])]?.text ?? '', def.type));
      continue;
    }
    const kv = new RegExp(`\\b${name}\\s*[:=]\\s*([^\\s,;]+)`, 'i').exec(
      raw.replace(/⟨(\d+)⟩/g, (_m, i: string) => s.state.entities[Number(i)]?.value ?? ''),
    );
    if (kv?.[1]) {
      set(field, coerce(kv[1], def.type));
      continue;
    }
    if (def.format === 'email' || def.items?.format === 'email') {
      const e = entitiesOf(s, 'email').map((x) => x.value);
      if (e.length > 0) set(field, def.type === 'array' ? e : e[0]);
      continue;
    }
    if (def.enum) {
      const v = def.enum.find((x) => new RegExp(`\\b${x}\\b`, 'i').test(s.clause.canon));
      if (v) set(field, v);
      continue;
    }
    if (/^(?:limit|count|max)$/.test(field)) set(field, countOf(s));
    if (def.format === 'uri' || /url$/.test(field)) set(field, entitiesOf(s, 'url')[0]?.value);
  }
  for (const field of schema.required ?? []) {
    if (filled.has(field) || props[field]?.type !== 'string') continue;
    const q = takeQuote(s, ['quoted', 'title', 'body', 'colon', 'subject']);
    if (q !== undefined) set(field, q);
  }
}

function coerce(v: string, type: string | undefined): unknown {
  if (type === 'integer' || type === 'number') {
    const n = Number(v);
    return Number.isFinite(n) ? n : v;
  }
  if (type === 'boolean') return /^(?:true|yes|1)$/i.test(v);
  return v;
}
