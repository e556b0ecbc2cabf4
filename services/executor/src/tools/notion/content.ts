import { ToolError } from '../tool.js';

/**
 * Notion's content formats, shared by the live adapter and the sandbox: blocks to plain
 * text, text to paragraph blocks, and a database filter typed by the property's type.
 */
export interface NBlock {
  type: string;
  [type: string]: unknown;
}

interface RichText {
  plain_text?: string;
  text?: { content?: string };
}

/** Notion's limit on one rich text object's content. */
const TEXT_MAX = 2000;

const PREFIX: Record<string, (b: Record<string, unknown>) => string> = {
  bulleted_list_item: () => '- ',
  numbered_list_item: () => '1. ',
  to_do: (b) => (b['checked'] ? '[x] ' : '[ ] '),
  quote: () => '> ',
};

/** One line per block that holds text; blocks without text (dividers, images) are left out. */
export function blocksText(blocks: readonly NBlock[]): string {
  const lines: string[] = [];
  for (const block of blocks) {
    const body = (block[block.type] ?? {}) as Record<string, unknown>;
    if (block.type === 'child_page' || block.type === 'child_database') {
      lines.push(typeof body['title'] === 'string' ? body['title'] : '');
      continue;
    }
    const rich = body['rich_text'];
    if (!Array.isArray(rich)) continue;
    const line = (rich as RichText[]).map((t) => t.plain_text ?? t.text?.content ?? '').join('');
    lines.push(`${PREFIX[block.type]?.(body) ?? ''}${line}`);
  }
  return lines.join('\n');
}

/** Paragraphs split on blank lines; a long paragraph is cut in rich texts of 2000 characters. */
export function paragraphBlocks(content: string): NBlock[] {
  return content
    .split(/\r?\n\s*\r?\n/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => {
      const chunks: { type: 'text'; text: { content: string } }[] = [];
      for (let i = 0; i < p.length; i += TEXT_MAX) chunks.push({ type: 'text', text: { content: p.slice(i, i + TEXT_MAX) } });
      return { object: 'block', type: 'paragraph', paragraph: { rich_text: chunks } };
    });
}

export interface NProperty {
  id?: string;
  name?: string;
  type: string;
}

interface Wanted {
  property: string;
  equals?: string | number;
  contains?: string;
  checkbox?: boolean;
}

const TEXTUAL = new Set(['title', 'rich_text', 'url', 'email', 'phone_number']);

/** The Notion filter for one condition, by the type of the property it names. */
export function propertyCondition(w: Wanted, properties: Record<string, NProperty>): Record<string, unknown> {
  const names = Object.keys(properties);
  const name = names.find((n) => n === w.property) ?? names.find((n) => n.toLowerCase() === w.property.trim().toLowerCase());
  const prop = name !== undefined ? properties[name] : undefined;
  if (name === undefined || !prop) {
    throw new ToolError(
      'step_failed',
      `The Notion database has no property "${w.property}"; it has ${names.map((n) => `"${n}"`).join(', ') || 'none'}`,
      false,
      'Filter on one of the database’s properties, named as in Notion',
    );
  }
  const value = w.equals ?? w.contains;
  const cannot = (how: string): never => {
    throw new ToolError(
      'step_failed',
      `The Notion property "${name}" is a ${prop.type} property: it cannot be filtered with ${how}`,
      false,
      prop.type === 'checkbox' ? `Say whether "${name}" should be checked or not` : `Compare "${name}" with a value`,
    );
  };
  const condition = (cond: Record<string, unknown>) => ({ property: name, [prop.type]: cond });

  if (prop.type === 'checkbox') {
    const said = String(value).toLowerCase();
    const checked = w.checkbox ?? (said === 'true' ? true : said === 'false' ? false : undefined);
    return checked === undefined ? cannot(`"${String(value)}"`) : condition({ equals: checked });
  }
  if (w.checkbox !== undefined || value === undefined) return cannot('checked / not checked');
  if (TEXTUAL.has(prop.type)) return condition(w.contains !== undefined ? { contains: w.contains } : { equals: String(value) });
  if (prop.type === 'select' || prop.type === 'status') return condition({ equals: String(value) });
  if (prop.type === 'multi_select') return condition({ contains: String(value) });
  if (prop.type === 'number') {
    const n = Number(value);
    return Number.isFinite(n) ? condition({ equals: n }) : cannot(`"${String(value)}" (not a number)`);
  }
  return cannot('equals or contains');
}
