import { maskEntities, maskQuotes } from './masks.js';
import { correctWord, fixMarkers, isVocabulary, lemma } from './words.js';
import {
  BODY_MARKERS,
  INTENTION,
  ENGLISH,
  SUBJECT_MARKERS,
  TITLE_MARKERS,
  detectLanguage,
  translate,
  wordsOf,
  type Lang,
} from './lexicon.js';

/**
 * Text preparation for the rules planner: quotes and entities are masked first, so nothing inside
 * them is read as an instruction; the texts a user wants sent ("saying …", "with subject …", "titled
 * …", "…: text") are cut out as quotes too; what is left is split into clauses and each clause is
 * brought to canonical English (translated, shorthand expanded, typos of known words corrected).
 */

export type EntityKind = 'url' | 'email' | 'repo' | 'number' | 'channel' | 'user' | 'uuid' | 'time';
export interface Entity {
  kind: EntityKind;
  value: string;
  /** For `number`: what the prompt called it ("pr", "issue", or "" for a bare #12). */
  noun?: string;
}

export type QuoteRole = 'quoted' | 'body' | 'subject' | 'title' | 'colon';
export interface Quote {
  text: string;
  role: QuoteRole;
}

export interface Prepared {
  lang: Lang;
  quotes: Quote[];
  entities: Entity[];
  /** The prompt's top-level segments, each split into clauses. */
  segments: Clause[][];
}

export interface Clause {
  /** Original case, quotes as ⟦n⟧, entities as ⟨k⟩ (k = index in `entities`). */
  raw: string;
  /** Canonical English, lowercase, same tokens. */
  canon: string;
  /** Canonical words (lemmas), tokens excluded. */
  words: string[];
  /** Canonical text with lemmas, one space between words, for phrase tests. */
  phrase: string;
  /** The clause states what the user will do ("I'll merge it after CI"): it asks nothing. */
  stated?: boolean;
}

export const QUOTE = /⟦(\d+)⟧/g;
export const ENTITY = /⟨(\d+)⟩/g;

const escapeAll = (words: readonly string[]) =>
  [...words]
    .sort((a, b) => b.length - a.length)
    .map((w) => escapeRegExp(w).replace(/ /g, '\\s+'))
    .join('|');

const segmentSplits = new Map<Lang, RegExp>();
/**
 * Strong separators between top-level steps, in English and the prompt's language: ";", new lines,
 * sentence ends, and its words for "then" (one word only after a comma or "and": "après" is also "after").
 */
function segmentSplit(lang: Lang): RegExp {
  let re = segmentSplits.get(lang);
  if (!re) {
    const words = wordsOf(lang, 'sequence_words');
    const phrases = words.filter((w) => w.includes(' ') || ENGLISH.sequence_words?.includes(w));
    const single = words.filter((w) => !phrases.includes(w));
    const and = escapeAll(wordsOf(lang, 'and_words'));
    const loose = single.length ? `|(?:,|\\s+(?:${and}))\\s+(?:${escapeAll(single)})\\b,?` : '';
    // "…, see you then": a "then" that ends the prompt separates nothing.
    re = new RegExp(
      `\\s*(?:;|\\n+|,?\\s+(?:${escapeAll(phrases)})\\b(?=[\\s,]*[\\p{L}\\p{N}⟦⟨#@])(?![\\s,]*$),?${loose}|(?<=[.!?])\\s+(?=[\\p{Lu}⟦⟨¿¡]))\\s*`,
      'iu',
    );
    segmentSplits.set(lang, re);
  }
  return re;
}

export function prepare(prompt: string): Prepared {
  const quotes: Quote[] = [];
  const entities: Entity[] = [];
  const normal = prompt
    .normalize('NFC')
    .replace(/[\u00a0\u2009\u202f]/g, ' ')
    .replace(/[ \t]+/g, ' ');
  let masked = fixMarkers(maskQuotes(normal, quotes)).replace(/\b(squash|rebase)(?:\s+and|\s*&)\s+merge\b/gi, 'merge with $1');
  // "Append the following to page X:\n\nline 1\n\nline 2": the lines after an instruction ending in ':' are its text.
  const block = /^([^\n:]{2,300}):[ \t]*\n+([\s\S]+)$/u.exec(masked);
  if (block?.[1] && block[2]?.trim()) {
    quotes.push({ text: block[2].trim(), role: 'colon' });
    masked = `${block[1]}: ⟦${quotes.length - 1}⟧`;
  }
  // The language of the words, not of addresses and links ("ops@acme.io" holds Italian "io").
  const words = masked
    .replace(/\S+@\S+|https?:\/\/\S+|[#@]\S+|\b[\w.-]+\/[\w.-]+\b/gu, ' ')
    .toLowerCase()
    .split(/[^\p{L}]+/u);
  const lang = detectLanguage(words);
  const segments: Clause[][] = [];
  for (const seg of masked.split(segmentSplit(lang))) {
    const cleaned = cleanEdges(seg);
    if (!cleaned) continue;
    const cut = cutFreeTexts(cleaned, quotes);
    const withEntities = maskEntities(cut, entities);
    const clauses = splitClauses(withEntities, lang)
      .map((raw) => toClause(raw, lang))
      .filter((c) => c.raw.length > 0);
    if (clauses.length > 0) segments.push(clauses);
  }
  return { lang, quotes, entities, segments };
}

function cleanEdges(s: string): string {
  return (
    s
      .trim()
      // A trailing "?" or "!" stays: it belongs to a message ("are you joining the retro?").
      .replace(/^[,.:!?\s-]+|[,.\s]+$/gu, '')
      .trim()
  );
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const BODY_RE = new RegExp(
  `(^|[\\s,])(${[...BODY_MARKERS]
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
    .join('|')})(?=[\\s:])[:\\s]+`,
  'iu',
);
const SUBJECT_RE = new RegExp(
  `(^|[\\s,])(${[...SUBJECT_MARKERS]
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
    .join('|')})(?=[\\s:])[:\\s]+`,
  'iu',
);
const TITLE_RE = new RegExp(
  `(^|[\\s,])(${[...TITLE_MARKERS]
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
    .join('|')})(?=[\\s:])[:\\s]+`,
  'iu',
);

/**
 * Cuts out the unquoted texts of a segment: after a body marker up to the end of the segment (or the
 * next ", and <verb>"), a subject or title up to a body marker or a comma, and after a colon that
 * follows an instruction ("Email bob@x.io: running late"). Each becomes a quote with its role.
 */
function cutFreeTexts(segment: string, quotes: Quote[]): string {
  let out = segment;
  const take = (re: RegExp, role: QuoteRole, endAtComma: boolean): void => {
    const m = re.exec(out);
    if (!m || m.index === undefined) return;
    const start = m.index + m[0].length;
    let rest = out.slice(start);
    if (/^⟦\d+⟧/.test(rest.trim())) return; // already quoted
    // "with the text of Notion page X": where the text comes from, not the text itself.
    if (
      role === 'body' &&
      /^(?:of|from)\s+(?:the\s+|my\s+|this\s+|that\s+)?(?:notion|page|issue|pr|pull|email|message|doc|file|url|https?:)/i.test(rest.trim())
    )
      return;
    let end = rest.length;
    const body = role !== 'body' ? BODY_RE.exec(rest) : null;
    if (body) end = Math.min(end, body.index);
    if (endAtComma) {
      const stop =
        /,|\s+(?=(?:on|at|from|by)\s+(?:\d|the\s+\d|monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|december|noon|midnight|next|this)|(?:tomorrow|today|tonight|next\s+(?:week|monday|tuesday|wednesday|thursday|friday)|every\s)\b)|\s+(?:with\s+(?:the\s+|a\s+)?(?:labels?|body|description|text|message|content)|labell?ed|tagged|assigned)\b|\s+(?:and|et|und|y)\s+(?=(?:send|post|email|create|add|invite|schedule|then|label|tag|assign|body|text|message|share|tell|notify|ping|dm|comment|close|reply|forward|announce|let|paste|log|put|drop|move|cancel|open|file|merge|mention|link|invite|also)\b)|\s+(?:in|on|to|for|at|under|into|inside|dans|sur|à|im|in|an|en|para)\s+(?=[\p{L}\p{N}_.-]+\/[\p{L}\p{N}_.-]+|#|@|[\p{L}\p{N}._%+-]+@|(?:the\s+|my\s+|our\s+)?(?:[\p{L}\p{N}_-]+\s+){0,3}?(?:notion\s+|slack\s+)?(?:page|database|db|channel|repo|repository|calendar)\b|(?:the\s+)?[A-Za-z0-9][\w-]*\s+(?:org|organization|organisation)\b|[0-9a-f]{8})/iu.exec(
          rest,
        );
      if (stop) end = Math.min(end, stop.index);
    } else {
      const stop =
        /,?\s+(?:and|also)\s+(?=(?:post|send|email|create|add|invite|schedule|close|comment|label|merge|reply|share|tell|notify|dm)\b)|,?\s+(?:but\s+)?(?:don't|dont|do not|never)\s+(?:send|post|publish|share|merge)\b/iu.exec(
          rest,
        );
      if (stop) end = Math.min(end, stop.index);
    }
    rest = rest.slice(0, end);
    let text = rest.trim().replace(/[\s,;]+$/u, '');
    // "Can you reply … saying we accept the quote?": the "?" asks the request, the message is not a question.
    if (
      role === 'body' &&
      /^\s*(?:please\s+)?(?:can|could|would|will)\s+you\b/i.test(segment) &&
      !/^(?:are|is|am|do|does|did|can|could|will|would|who|what|when|where|why|how|should|shall|have|has|any)\b/i.test(text)
    )
      text = text.replace(/\s*\?$/u, '');
    // A text that holds a quote already ("subject can be 'Q1'") is not cut again.
    if (!text || text.includes('⟦')) return;
    quotes.push({ text: stripFinalStop(role === 'body' ? text.replace(/^(?:that|que|dass|qu['’])\s*/iu, '') : text), role });
    out = `${out.slice(0, start)}⟦${quotes.length - 1}⟧${out.slice(start + end)}`;
  };
  take(SUBJECT_RE, 'subject', true);
  take(TITLE_RE, 'title', true);
  take(BODY_RE, 'body', false);
  // "Email bob@x.io: running late" / "Create an issue in acme/api: Login fails" / "#general: lunch is here"
  const colon = /^([^:⟦]{2,80}?)(?::|\s[—–-])\s+(?!\/\/)(.+)$/su.exec(out);
  if (colon?.[1] && colon[2] && !colon[2].includes('⟦') && isColonText(colon[1], colon[2].trim())) {
    quotes.push({ text: stripFinalStop(colon[2].trim()), role: 'colon' });
    out = `${colon[1]}: ⟦${quotes.length - 1}⟧`;
  }
  return out;
}

/**
 * "Email bob@x.io: running late", "slack #ops: disk is full": the text after the colon is what to send
 * when an instruction or a target comes before it, and it is not itself an instruction ("note: post …"),
 * a field's value ("board: acme, column: api"), a time ("at 10:30") or a header ("Accept: application/json").
 */
function isColonText(before: string, after: string): boolean {
  if (!/[#@/]|\b[0-9a-f]{16,}\b/i.test(before) && !CLAUSE_VERB_ANY.test(before)) return false;
  // "open an issue on acme/web: search page 500s": after an instruction that needs a text, the text may start like a verb.
  const needsText =
    /\b(?:issue|bug|ticket|e-?mail|mail|message|note|comment|post|reply|dm|title|subject|page|task|announcement|reminder)\b/i.test(before);
  if (INSTRUCTION_START.test(after) && !(needsText && CLAUSE_VERB_ANY.test(before) && !/[#@]|https?:\/\/|⟨/.test(after))) return false;
  // A field's value ("board: acme, column: api"), not "LGTM, I'll merge after CI".
  if (/^[^\s,]+\s*,\s*[\p{L}\p{N} _-]+:/u.test(after)) return false;
  // One word is a message after a verb of saying ("comment on PR 5: LGTM"), a value elsewhere ("board: acme").
  if (
    /^[^\s,]+$/u.test(after) &&
    !/\b(?:comment|reply|respond|post|say|send|tell|message|dm|email|mail|note|write|answer|ping)\b/i.test(before)
  )
    return false;
  if (/\b\d{1,2}$/.test(before) && /^\d{2}\b/.test(after)) return false;
  return !/\bheaders?\s+[\w-]+$/i.test(before);
}

function stripFinalStop(s: string): string {
  return s.replace(/[.]+$/u, '').trim();
}

/** Verbs (canonical and in the lexicons) that start a new clause after "and" or a comma. */
const CLAUSE_VERBS = ENGLISH.clause_verbs;
/** The fixed list only: "…: call the bank" is a text, "note: post it to #eng" an instruction. */
const INSTRUCTION_START = verbStart(CLAUSE_VERBS.filter((v) => !ENGLISH.not_instruction_starts.includes(v)));
let CLAUSE_VERB_ANY = verbAny(CLAUSE_VERBS);
let CLAUSE_SPLIT = clauseSplit(CLAUSE_VERBS);
let clauseVerbs: readonly string[] = CLAUSE_VERBS;
/** The clause split of each language ("and" is "e" in Portuguese), made once per catalog. */
const clauseSplits = new Map<Lang, RegExp>();
function clauseSplitOf(lang: Lang): RegExp {
  if (lang === 'en') return CLAUSE_SPLIT;
  let re = clauseSplits.get(lang);
  if (!re) {
    re = clauseSplit(clauseVerbs, lang);
    clauseSplits.set(lang, re);
  }
  return re;
}

function verbStart(verbs: readonly string[]): RegExp {
  return new RegExp(`^\\s*(?:please\\s+)?(?:${verbs.map(escapeRegExp).join('|')})\\b`, 'iu');
}
function verbAny(verbs: readonly string[]): RegExp {
  return new RegExp(`\\b(?:${escapeAll(verbs)})\\b`, 'iu');
}
function clauseSplit(verbs: readonly string[], lang: Lang = 'en'): RegExp {
  const and = escapeAll(wordsOf(lang, 'and_words'));
  return new RegExp(
    `\\s*(?:,\\s*(?:${and})|,|\\s+(?:${and}))\\s+(?=(?:please\\s+|just\\s+|only\\s+|instead\\s+|rather\\s+)?(?:${escapeAll(verbs)})\\b)(?!(?:label|tag)(?:s|ged|led|ed)?\\s+(?:as\\s+)?⟦)`,
    'iu',
  );
}

/** Hint words that are verbs of questions or adjectives more often than the start of a new request. */
const NOT_CLAUSE_STARTS = new Set(ENGLISH.not_clause_starts);

/** Every verb of the catalog's hints starts a clause too ("grab X, then …"), besides the list above. */
export function setClauseVerbs(verbs: Iterable<string>, phrases: Iterable<string> = []): void {
  const all = [
    ...new Set([...CLAUSE_VERBS, ...[...verbs].filter((v) => /^[a-z][a-z-]{2,}$/.test(v) && !NOT_CLAUSE_STARTS.has(v))]),
    // Whole phrases of the language data that stand for a verb ("log the link on", "just give me the").
    ...[...phrases].map((p) => p.replace(/\s+/g, ' ')),
  ];
  CLAUSE_VERB_ANY = verbAny(all);
  CLAUSE_SPLIT = clauseSplit(all);
  clauseVerbs = all;
  clauseSplits.clear();
}

function splitClauses(segment: string, lang: Lang): string[] {
  // A loop's body is one clause with its head: "For each number from 1 to 3, echo it".
  if (new RegExp(`^(?:${escapeAll(wordsOf(lang, 'for_each'))})\\b`, 'iu').test(segment)) return [segment];
  const parts = segment
    .split(clauseSplitOf(lang))
    .map(cleanEdges)
    .filter((s) => s.length > 0);
  // "the crash in acme/mobile issue 19 is back, reopen it": a part without a verb is context for the next one.
  const out: string[] = [];
  for (const part of parts) {
    const prev = out[out.length - 1];
    if (prev !== undefined && !CLAUSE_VERB_ANY.test(prev) && !/[⟦]/.test(prev)) out[out.length - 1] = `${prev}, ${part}`;
    else out.push(part);
  }
  return out;
}

const PASSIVE: Readonly<Record<string, string>> = ENGLISH.passive;

export function toClause(raw: string, lang: Lang): Clause {
  const lower = raw
    .toLowerCase()
    .replace(/[’`]/g, "'")
    .replace(/\b(what|that|there|it|who|where|how|here)'s\b/g, '$1 is')
    .replace(/\b(i)'m\b/g, '$1 am')
    .replace(/\b(\w+)'(re|ve|ll|d)\b/g, (_m, w: string, t: string) => `${w} ${{ re: 'are', ve: 'have', ll: 'will', d: 'would' }[t] ?? t}`)
    .replace(/\b(do|does|did|is|are|was|were|can|could|would|should|have|has)n't\b/g, '$1 not')
    .replace(/\bwon't\b/g, 'will not')
    .replace(
      /\b(?:can|could|should|must|may|needs? to) be (closed|merged|reopened|labell?ed|deleted|archived)\b/g,
      (_m, v: string) => PASSIVE[v] ?? v,
    )
    .replace(/\b(squash|rebase)(?:\s+and|\s*&)\s+merge\b/g, 'merge with $1')
    .replace(/\b(upper|lower) case\b/g, '$1case')
    .replace(/\bcan't\b/g, 'cannot')
    .trim();
  // "LGTM, I'll merge after CI": what the user will do is not asked of the service.
  const intention = INTENTION.exec(lower);
  if (intention?.index === 0) return { raw, canon: '', words: [], phrase: '', stated: true };
  const instruction = intention ? lower.slice(0, intention.index).trim() : lower;
  const translated = translate(instruction, lang)
    // "would you mind opening an issue": the request is the verb after "mind".
    .replace(/\b(mind|about|try|go ahead and|start)\s+([a-z]+?)(?:e)?ing\b/g, (m, lead: string, stem: string) => {
      const verb = [stem, `${stem}e`, stem.replace(/(.)\1$/, '$1')].find((v) => isVocabulary(v));
      return verb ? `${lead} ${verb}` : m;
    })
    .replace(/\bopen\b(.*?)\s*\bagain\b/, 'reopen$1');
  const canon = translated
    .split(/(\s+)/)
    .map((t) => (/^\s+$/.test(t) ? t : correctToken(t)))
    .join('');
  const words = tokens(canon).map(lemma);
  return { raw, canon, words, phrase: words.join(' ') };
}

/** The words of a canonical text (no quote or entity tokens, no punctuation). */
export function tokens(canon: string): string[] {
  return canon
    .replace(QUOTE, ' ')
    .replace(ENTITY, ' ')
    .split(/[^\p{L}\p{N}'’:-]+/u)
    .map((w) => w.replace(/^[-':]+|[-':]+$/g, ''))
    .filter((w) => w.length > 0);
}

function correctToken(token: string): string {
  const m = /^([\p{P}¿¡]*)([\p{L}\p{N}'/-]+?)([\p{P}]*)$/u.exec(token);
  if (!m) return token;
  const [, pre = '', word = '', post = ''] = m;
  return `${pre}${correctWord(word)}${post}`;
}
