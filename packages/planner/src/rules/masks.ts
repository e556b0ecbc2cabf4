import { isZone } from './time.js';
import type { Entity, EntityKind, Quote } from './text.js';

/** Quotes and entities masked first, so nothing inside them is read as an instruction. */
const QUOTE_PATTERNS: RegExp[] = [
  /"([^"]*)"/g,
  /“([^”]*)”/g,
  /„([^“”]*)[“”]/g,
  /«\s*([^»]*?)\s*»/g,
  /`([^`]+)`/g,
  /(^|[\s(:=,[])['‘]([^'’]+)['’](?=$|[\s.,;:!?)\]])/g,
];

export function maskQuotes(prompt: string, quotes: Quote[]): string {
  // A JSON object ("POST {"ok": true} to …") is one quoted text, its own quotes included.
  let text = prompt.replace(/\{[^{}]{0,2000}\}/g, (json) => {
    try {
      JSON.parse(json);
    } catch {
      return json;
    }
    quotes.push({ text: json, role: 'quoted' });
    return `⟦${quotes.length - 1}⟧`;
  });
  for (const re of QUOTE_PATTERNS) {
    const single = re.source.startsWith('(^|');
    text = text.replace(re, (...m: string[]) => {
      const lead = single ? (m[1] ?? '') : '';
      quotes.push({ text: single ? (m[2] ?? '') : (m[1] ?? ''), role: 'quoted' });
      return `${lead}⟦${quotes.length - 1}⟧`;
    });
  }
  return text;
}

const ENTITY_PATTERNS: { kind: EntityKind; re: RegExp }[] = [
  // A Notion link names a page or database by the 32 hex digits at its end.
  { kind: 'uuid', re: /\bhttps?:\/\/(?:www\.)?notion\.(?:so|site)\/\S*?([0-9a-f]{32})\b\S*/gi },
  { kind: 'url', re: /\bhttps?:\/\/[^\s⟦⟧"'<>]+[^\s⟦⟧"'<>.,;:!?)]/gi },
  { kind: 'email', re: /[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}/gu },
  { kind: 'uuid', re: /\b[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\b/gi },
  { kind: 'repo', re: /(?<![\w./@-])([A-Za-z0-9][A-Za-z0-9_.-]*)\/([A-Za-z0-9_.-]*[A-Za-z_-][A-Za-z0-9_.-]*)(?![\w/])/g },
  {
    kind: 'number',
    re: /(?:\b(pull requests?|prs?|mr|merge request|issues?|tickets?|bugs?|problème|incidencia|problema)\s*(?:number|no\.?|nr\.?|n°|num(?:ber|éro)?)?\s*#?\s*|#)(\d{1,9})\b/giu,
  },
  // "close 19 on hollow/site": a bare number right after a verb that acts on an issue or a pull request.
  {
    kind: 'number',
    re: /(?<=\b(?:close|reopen|merge|label|tag|assign|comment on|squash-merge|approve|triage)\s+)()(\d{1,7})\b(?=\s+(?:on|in|of|at|from)\b)/giu,
  },
  { kind: 'channel', re: /(?<![\p{L}\p{N}&])#([\p{L}\p{N}][\p{L}\p{N}_.-]*[\p{L}\p{N}_]|[\p{L}\p{N}])/gu },
  { kind: 'user', re: /(?<![\p{L}\p{N}._%+-])@([\p{L}\p{N}][\p{L}\p{N}._-]*[\p{L}\p{N}_]|[\p{L}\p{N}])/gu },
  // Slack ids: users U…/W…, channels C…/G… (upper case letters and digits).
  { kind: 'user', re: /\b([UW][A-Z0-9]{8,11})\b/g },
  { kind: 'channel', re: /\b([CG][A-Z0-9]{8,11})\b/g },
];

export function maskEntities(text: string, entities: Entity[]): string {
  // A GitHub issue or pull request link is its repository and its number.
  let out = text.replace(
    /\bhttps?:\/\/(?:www\.)?github\.com\/([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)\/(issues|pull)\/(\d+)\S*/gi,
    (_m, o: string, r: string, kind: string, n: string) => {
      entities.push({ kind: 'repo', value: `${o}/${r}` });
      entities.push({ kind: 'number', value: n, noun: kind === 'pull' ? 'pr' : 'issue' });
      return `⟨${entities.length - 2}⟩ ${kind === 'pull' ? 'pr' : 'issue'} ⟨${entities.length - 1}⟩`;
    },
  );
  for (const { kind, re } of ENTITY_PATTERNS) {
    out = out.replace(re, (...m: unknown[]) => {
      const all = m[0] as string;
      let value = all;
      let noun: string | undefined;
      if (kind === 'repo') {
        value = `${m[1] as string}/${m[2] as string}`;
        // application/json, text/html: media types, not repositories
        if (/^(?:application|text|image|audio|video|multipart|font|model)$/i.test(m[1] as string)) return all;
        if (isZone(value)) return all; // Europe/Berlin is a time zone, not a repository
      }
      if (kind === 'number') {
        noun = ((m[1] as string | undefined) ?? '').toLowerCase().replace(/(?<=\w)s$/, '');
        value = m[2] as string;
      }
      if (kind === 'channel' || kind === 'user' || (kind === 'uuid' && typeof m[1] === 'string')) value = m[1] as string;
      entities.push({ kind, value, ...(noun !== undefined ? { noun } : {}) });
      // The noun as written ("issues 4, 5 and 6" keeps its plural for the numbers after it).
      const lead = kind === 'number' && noun ? `${((m[1] as string | undefined) ?? noun).toLowerCase()} ` : '';
      return `${lead}⟨${entities.length - 1}⟩`;
    });
  }
  return out;
}
