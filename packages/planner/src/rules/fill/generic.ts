import { entitiesOf, outputRef, previousData, quoteAfter, takeQuote, type Slots } from '../slots.js';
import { QUOTE } from '../text.js';
import { backRef, textOrBack, type Fill } from './common.js';

/** Per action: what each of its fields comes from. */
export const GENERIC_FILLS: Record<string, Fill> = {
  'text.echo': (s, put) => put('text', textOrBack(s, ['body', 'colon', 'title'], ['echo', 'repeat', 'say', 'print', 'return', 'output'])),
  'text.uppercase': (s, put) =>
    put('text', textOrBack(s, ['body', 'colon', 'title'], ['uppercase', 'upper', 'capitalize', 'shout', 'caps'])),
  'text.lowercase': (s, put) => put('text', textOrBack(s, ['body', 'colon', 'title'], ['lowercase', 'lower'])),
  'text.count_words': (s, put) => put('text', textOrBack(s, ['body', 'colon', 'title'], ['count', 'words', 'the', 'in', 'how', 'many'])),
  'data.count': (s, put) => put('items', backRef(s, 'items')),
  'data.pluck': (s, put) => {
    put('items', backRef(s, 'items'));
    const named =
      /\b(?:their|its|the|each)\s+([a-z_]+)\s+(?:field|property|attribute|column)\b/i.exec(s.clause.raw) ??
      /\b(?:field|property)\s+([a-z_]+)\b/i.exec(s.clause.raw) ??
      /\b(?:the\s+)?([a-z_]+)\s+(?:of each|of every|from each|of them|of all)\b/i.exec(s.clause.raw);
    put('field', takeQuote(s, ['quoted']) ?? named?.[1]);
  },
  'data.join': (s, put) => {
    put('values', backRef(s, 'values'));
    const named = /\b(?:with|by|using)\s+(?:a\s+)?(commas?|semicolons?|new ?lines?|line breaks?|spaces?|pipes?|slashes?|dashes?)\b/i.exec(
      s.clause.raw,
    )?.[1];
    const SEPARATORS: Record<string, string> = {
      comma: ', ',
      semicolon: '; ',
      newline: '\n',
      'new line': '\n',
      'line break': '\n',
      space: ' ',
      pipe: ' | ',
      slash: ' / ',
      dash: ' - ',
    };
    put('separator', quoteAfter(s, /\b(?:with|by|using)/) ?? (named ? SEPARATORS[named.toLowerCase().replace(/s$/, '')] : undefined));
  },
  'http.fetch': (s, put) => {
    put('url', entitiesOf(s, 'url')[0]?.value);
    put('headers', headersOf(s));
  },
  'http.post': (s, put) => {
    put('url', entitiesOf(s, 'url')[0]?.value);
    const body = takeQuote(s, ['quoted', 'body', 'colon']);
    if (body !== undefined) {
      try {
        const json: unknown = JSON.parse(body);
        if (json && typeof json === 'object') put('json', json);
      } catch {
        put('json', { text: body });
      }
    } else {
      const prev = previousData(s.state);
      if (prev) put('json', { data: outputRef(prev.index, prev.step) });
    }
  },
};

/** "with the header Accept: application/json", "header X-Token=abc". */
function headersOf(s: Slots): Record<string, string> | undefined {
  const text = s.clause.raw.replace(QUOTE, (_m, i: string) => s.state.quotes[Number(i)]?.text ?? '');
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/\bheaders?\s+([A-Za-z][\w-]*)\s*[:=]\s*([^\s,;]+)/g)) if (m[1] && m[2]) out[m[1]] = m[2];
  // "with an Accept: application/json header"
  for (const m of text.matchAll(/\b(?:with\s+)?(?:an?|the)\s+([A-Za-z][\w-]*)\s*:\s*([^\s,;]+)\s+header\b/g))
    if (m[1] && m[2]) out[m[1]] = m[2];
  return Object.keys(out).length > 0 ? out : undefined;
}
