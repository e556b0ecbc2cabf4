import { DICTIONARY } from './dictionary.js';
import { ENGLISH, FOREIGN_WORDS, SHORTHAND } from './lexicon.js';

/**
 * The planner's vocabulary (every hint word of the catalog), lemmas, and the typo corrector that
 * brings misspelt words towards it, never a real word into another ("response" is not "respond").
 */

let vocabulary = new Set<string>();
/** A word of the vocabulary (hint words and the extra ones). */
export function isVocabulary(word: string): boolean {
  return vocabulary.has(word);
}
/** The planner's vocabulary: every hint word of the catalog; set once per catalog. */
export function setVocabulary(words: Iterable<string>): void {
  vocabulary = new Set([...words, ...EXTRA_VOCABULARY]);
}

const EXTRA_VOCABULARY = ENGLISH.extra_vocabulary;

/**
 * Words kept as they are: markers of a name ("called" is not a call), and past forms, which tell what
 * happened ("I sent bob an email, find it") and never ask for the action.
 */
const AS_THEY_ARE = new Set(ENGLISH.as_they_are);

/** The vocabulary word a form of it stands for ("closes", "closed", "closing" → close; "issues" stays when it is a word itself). */
export function lemma(word: string): string {
  if (vocabulary.has(word) || AS_THEY_ARE.has(word)) return word;
  // Plurals only: a past form ("posted", "closed") tells what happened, it does not ask for it.
  const candidates = [word.replace(/ies$/, 'y'), word.replace(/es$/, ''), word.replace(/s$/, '')];
  return candidates.find((c) => c !== word && vocabulary.has(c)) ?? word;
}

/**
 * Common English words near the planner's vocabulary that must never be "corrected"
 * ("last" is not a typo of "list", nor "sent" of "send").
 */
const PROTECTED = new Set(ENGLISH.protected);

/** Verbs of requests the catalog cannot do ("lock", "star"): never "corrected" into one it can ("look"). */
let KNOWN_VERBS: ReadonlySet<string> = new Set();
export function setKnownVerbs(verbs: Iterable<string>): void {
  KNOWN_VERBS = new Set(verbs);
}

/** Optimal string alignment distance (Levenshtein with adjacent transpositions), capped at `max + 1`. */
export function editDistance(a: string, b: string, max = 2): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i] as number[];
      const up = d[i - 1] as number[];
      let v = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, ((d[i - 2] as number[])[j - 2] as number) + 1);
      row[j] = v;
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

/** A misspelt vocabulary word corrected ("emial" → email, "scheduel" → schedule); anything else unchanged. */
export function correctWord(word: string): string {
  const short = SHORTHAND[word];
  if (short) return short;
  if (
    word.length < 4 ||
    vocabulary.has(word) ||
    PROTECTED.has(word) ||
    DICTIONARY.has(word) ||
    KNOWN_VERBS.has(word) ||
    FOREIGN_WORDS.has(word) ||
    /[^a-z]/.test(word)
  )
    return word;
  // An inflected word ("named", "posting", "weekly") is a word of its own far more often than a typo.
  if (vocabulary.has(lemma(word))) return word;
  // An inflected word ("named", "posting", "weekly") is a word of its own far more often than a typo:
  // it is corrected only into a word with the same ending ("caled" → "called", never "named" → "names").
  const ending = /(?:ed|ing|ly|er|est|ers|ings)$/.exec(word)?.[0];
  return closest(word, vocabulary, ending) ?? word;
}

/** The one word of `words` within the edit distance a word's length allows; a same-length word wins a tie. */
function closest(word: string, words: Iterable<string>, ending?: string): string | undefined {
  const max = word.length >= 8 ? 2 : 1;
  let best: string | undefined;
  let bestKey = Infinity;
  let tie = false;
  for (const v of words) {
    if (v.includes(' ') || v.length < 3 || (v[0] !== word[0] && v[1] !== word[0])) continue;
    if (ending && !v.endsWith(ending)) continue;
    const dist = editDistance(word, v, max);
    if (dist > max) continue;
    const key = dist * 2 + (v.length === word.length ? 0 : 1);
    if (key < bestKey) {
      best = v;
      bestKey = key;
      tie = false;
    } else if (key === bestKey) tie = true;
  }
  return tie ? undefined : best;
}

/** The words that mark where texts, names and numbers start: corrected before anything is cut out. */
const MARKER_WORDS = ENGLISH.marker_words;
const MARKER_SHORTHAND: Readonly<Record<string, string>> = ENGLISH.marker_shorthand;

/** "snd an email to bob sayin hi" → "… saying hi": misspelt marker words fixed in the raw prompt, case kept elsewhere. */
export function fixMarkers(text: string): string {
  return text.replace(/(?<![\p{L}⟦⟨#@/.])[\p{L}]{3,}(?![\p{L}⟧⟩@/])/gu, (w) => {
    const lower = w.toLowerCase();
    // A word of a language's data ("mensagem", "labelen") is that language's word, not a typo.
    if (MARKER_WORDS.includes(lower) || FOREIGN_WORDS.has(lower)) return w;
    const fixed =
      MARKER_SHORTHAND[lower] ??
      (lower.length >= 4 && !PROTECTED.has(lower) && !vocabulary.has(lower) && !DICTIONARY.has(lower)
        ? closest(lower, MARKER_WORDS)
        : undefined);
    return fixed ?? w;
  });
}
