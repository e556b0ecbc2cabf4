/**
 * The languages the rules planner reads, as data: `../language/<lang>.json` (the language's own
 * words: frequent words that tell it apart, markers of texts, subjects and titles, and general words
 * mapped onto canonical English) and each tool's `language/<lang>.json` in the catalog (its verbs,
 * nouns and idioms). Only instructions are translated; the texts a user wants sent are cut out
 * before, untouched. Longer phrases are replaced first. Dates and times are not here: chrono-node
 * parses them with its own locale of the language.
 */
import { BUILT_IN_LANGUAGES } from '@tes/catalog';
import { DICTIONARY } from './dictionary.js';
import de from '../language/de.json' with { type: 'json' };
import en from '../language/en.json' with { type: 'json' };
import es from '../language/es.json' with { type: 'json' };
import fr from '../language/fr.json' with { type: 'json' };
import it from '../language/it.json' with { type: 'json' };
import nl from '../language/nl.json' with { type: 'json' };
import pt from '../language/pt.json' with { type: 'json' };
import UNSUPPORTED from '../language/unsupported.json' with { type: 'json' };

interface LanguageData {
  /** Frequent words of the language, rare in the others: the language with most hits wins. */
  markers: readonly string[];
  /** Markers after which the text to send starts ("saying", "pour dire que"). */
  body_markers: readonly string[];
  /** Markers after which a subject starts. */
  subject_markers: readonly string[];
  /** Markers after which a title or name starts. */
  title_markers: readonly string[];
  /**
   * How the language states what the user will do ("I'll merge after CI", "je vais …"): a statement,
   * not a request. From there to the end of the clause nothing is an instruction.
   */
  intentions?: readonly string[];
  /** Words that separate steps ("then", "puis", "e depois"); one word splits only after a comma or "and". */
  sequence_words?: readonly string[];
  /** "and" before a new verb starts a new clause ("… and post it to #eng"). */
  and_words?: readonly string[];
  /** "for each …" heads a loop. */
  for_each?: readonly string[];
  /** "if", "unless", "si", "wenn": a step that depends on a condition. */
  conditions?: readonly string[];
  /** Weekdays and "every <weekday>" in the language → English. */
  weekdays?: Readonly<Record<string, string>>;
  /** General phrases and words → canonical English (lowercase). */
  words: Readonly<Record<string, string>>;
}

interface EnglishData extends LanguageData {
  /** Chat shorthand and frequent misspellings whose edit distance is too far or too risky. */
  shorthand: Readonly<Record<string, string>>;
  /** English words that are also words of another language's data: they never decide the language. */
  shared_with_other_languages: readonly string[];
  /** Verbs that start a new clause after "and" or a comma (besides every hint verb). */
  clause_verbs: readonly string[];
  /** Clause verbs that do not make a text after a colon an instruction ("…: call the bank" is a text). */
  not_instruction_starts: readonly string[];
  /** Hint words that are verbs of questions or adjectives more often than the start of a new request. */
  not_clause_starts: readonly string[];
  /** "can be closed" → "close". */
  passive: Readonly<Record<string, string>>;
  /** Words the typo corrector knows besides the hints' words. */
  extra_vocabulary: readonly string[];
  /** Words kept as they are: markers of a name, and past forms, which never ask for the action. */
  as_they_are: readonly string[];
  /** Common words near the vocabulary that must never be "corrected" ("last" is not "list"). */
  protected: readonly string[];
  /** The words that mark where texts, names and numbers start: corrected before anything is cut out. */
  marker_words: readonly string[];
  marker_shorthand: Readonly<Record<string, string>>;
}

export const ENGLISH: EnglishData = en;
const LANGUAGES = { en: ENGLISH, fr, de, es, pt, it, nl } satisfies Record<string, LanguageData>;
export type Lang = keyof typeof LANGUAGES;
const FOREIGN = (Object.keys(LANGUAGES) as Lang[]).filter((l): l is Exclude<Lang, 'en'> => l !== 'en');

/** A language's whole table: its general words, then every tool's phrases of that language. */
const TABLES = Object.fromEntries(
  (Object.keys(LANGUAGES) as Lang[]).map((lang) => [
    lang,
    Object.assign({}, LANGUAGES[lang].words, ...Object.values(BUILT_IN_LANGUAGES).map((tool) => tool[lang]?.phrases ?? {})) as Record<
      string,
      string
    >,
  ]),
) as Record<Lang, Record<string, string>>;

const all = (key: 'body_markers' | 'subject_markers' | 'title_markers'): readonly string[] =>
  Object.values(LANGUAGES).flatMap((l) => l[key]);
export const BODY_MARKERS = all('body_markers');
export const SUBJECT_MARKERS = all('subject_markers');
export const TITLE_MARKERS = all('title_markers');
export const SHORTHAND = ENGLISH.shorthand;

const COMMON_ENGLISH = new Set(ENGLISH.shared_with_other_languages);
const ENGLISH_MARKERS = new Set(ENGLISH.markers);
const MARKER_SETS = Object.fromEntries(FOREIGN.map((l) => [l, new Set(LANGUAGES[l].markers)])) as Record<Exclude<Lang, 'en'>, Set<string>>;

/** The words of a language's table that are not English words too (so "page" or "message" decide nothing). */
const OWN_WORDS = Object.fromEntries(
  FOREIGN.map((lang) => [
    lang,
    new Set(
      Object.entries(TABLES[lang])
        // A common English word ("a", "come") decides nothing either.
        .filter(([k, v]) => !k.includes(' ') && k !== v && !COMMON_ENGLISH.has(k) && !DICTIONARY.has(k))
        .map(([k]) => k),
    ),
  ]),
) as Record<Exclude<Lang, 'en'>, Set<string>>;

export function detectLanguage(words: readonly string[]): Lang {
  let best: Lang = 'en';
  let bestHits = 0;
  const english = words.filter((w) => ENGLISH_MARKERS.has(w)).length;
  for (const lang of FOREIGN) {
    const set = MARKER_SETS[lang];
    const own = OWN_WORDS[lang];
    // Frequent words count once; the table's own words (verbs and nouns of the language) twice.
    const hits = words.filter((w) => set.has(w)).length + 2 * words.filter((w) => own.has(w)).length;
    if (hits >= 2 && hits > bestHits && hits > english) {
      best = lang;
      bestHits = hits;
    }
  }
  return best;
}

/** From a statement of what the user will do to the end of the clause ("…, I'll merge after CI passes"). */
export const INTENTION = new RegExp(
  `(?:^|(?<=[\\s,;:.!?(—–-]))(?:${Object.values(LANGUAGES)
    .flatMap((l: LanguageData) => l.intentions ?? [])
    .sort((a, b) => b.length - a.length)
    .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('|')})(?=\\s|$)[\\s\\S]*$`,
  'iu',
);

/** Phrase list of a language, longest first, for left-to-right replacement. */
const PHRASES = Object.fromEntries(
  (Object.keys(TABLES) as Lang[]).map((lang) => [lang, Object.keys(TABLES[lang]).sort((a, b) => b.length - a.length)]),
) as Record<Lang, string[]>;

const patterns = new Map<string, RegExp>();
function phrasePattern(phrase: string): RegExp {
  let re = patterns.get(phrase);
  if (!re) {
    const escaped = phrase.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    re = new RegExp(`(?<=[\\s(,;:¿¡])${escaped}(?=[\\s),;:.!?])`, 'gu');
    patterns.set(phrase, re);
  }
  return re;
}

function replacePhrases(text: string, lang: Lang): string {
  const table = TABLES[lang];
  let out = ` ${text} `;
  for (const phrase of PHRASES[lang]) {
    if (!out.includes(phrase)) continue;
    out = out.replace(phrasePattern(phrase), table[phrase] ?? phrase);
  }
  return out.trim();
}

/** Translates an instruction (lowercase, quotes masked) of `lang` into canonical English words, idioms included. */
export function translate(text: string, lang: Lang): string {
  const english = lang === 'en' ? text : replacePhrases(text, lang);
  return PHRASES.en.length ? replacePhrases(english, 'en') : english;
}

/** Every word of the tables (they are not typos). */
export const FOREIGN_WORDS: ReadonlySet<string> = new Set(
  Object.values(TABLES).flatMap((t) => Object.keys(t).flatMap((k) => k.split(/\s+/))),
);

/**
 * How many words at the start of `words` a phrase of the tables stands for ("nudge", "fire off an
 * email to"): they are the instruction, never part of the message that follows.
 */
export function leadingPhraseLength(words: readonly string[], lang: Lang): number {
  const text = ` ${words.join(' ').toLowerCase()} `;
  for (const table of lang === 'en' ? [PHRASES.en] : [PHRASES[lang], PHRASES.en]) {
    const phrase = table.find((p) => text.startsWith(` ${p} `));
    if (phrase) return phrase.split(/\s+/).length;
  }
  return 0;
}

/** English's words of a kind, then the language's own (one list, for patterns). */
export function wordsOf(lang: Lang, key: 'sequence_words' | 'and_words' | 'for_each' | 'conditions'): readonly string[] {
  return [...new Set([...(ENGLISH[key] ?? []), ...(lang === 'en' ? [] : (LANGUAGES[lang][key] ?? []))])];
}

const SCRIPTS = Object.entries(UNSUPPORTED.scripts).map(([name, pattern]) => [name, new RegExp(pattern, 'u')] as const);
const LATIN = Object.entries(UNSUPPORTED.latin).map(([name, words]) => [name, new Set(words)] as const);
/** Letters a Latin-script language has and the seven read here do not ("ł", "ř", "ğ"): a word with one counts twice. */
const LETTERS: Readonly<Record<string, RegExp>> = Object.fromEntries(
  Object.entries(UNSUPPORTED.letters).map(([name, pattern]) => [name, new RegExp(pattern, 'u')]),
);
/** English words the data knows: frequent words, the protected ones, every canonical word the tables map to. */
const ENGLISH_WORDS: ReadonlySet<string> = new Set([
  ...ENGLISH.markers,
  ...ENGLISH.protected,
  ...ENGLISH.extra_vocabulary,
  ...ENGLISH.clause_verbs,
  ...ENGLISH.shared_with_other_languages,
  ...Object.values(TABLES).flatMap((t) => Object.values(t).flatMap((v) => v.split(/\s+/))),
  ...Object.keys(TABLES.en).flatMap((k) => k.split(/\s+/)),
]);
const SUPPORTED = 'English, French, German, Spanish, Portuguese, Italian and Dutch';

/**
 * The language of an instruction the planner does not read (quotes and entities taken out first:
 * a message may be in any language), named for the refusal; undefined for the seven it reads.
 * Another script decides at once; a Latin-script language needs more of its frequent words than
 * any supported language has.
 */
export function unsupportedLanguage(instruction: string): string | undefined {
  for (const [name, re] of SCRIPTS) if (re.test(instruction)) return name;
  const words = instruction
    .toLowerCase()
    .split(/[^\p{L}]+/u)
    .filter(Boolean);
  if (words.length < 3) return undefined;
  const own = (set: ReadonlySet<string>) => words.filter((w) => set.has(w)).length;
  // Short words ("i", "do", "on") are words of too many languages to tell one.
  const telling = (set: ReadonlySet<string>) => words.filter((w) => set.has(w) && (w.length >= 3 || /[^a-z]/.test(w))).length;
  const supported = Math.max(
    own(ENGLISH_WORDS),
    ...FOREIGN.map((l) => own(MARKER_SETS[l]) + 2 * own(OWN_WORDS[l])),
    words.filter((w) => Object.values(TABLES).some((t) => w in t)).length,
  );
  let best: string | undefined;
  let bestHits = 1;
  for (const [name, set] of LATIN) {
    const letters = LETTERS[name];
    const hits = telling(set) + (letters ? 2 * words.filter((w) => letters.test(w)).length : 0);
    if (hits > bestHits && hits > supported) [best, bestHits] = [name, hits];
  }
  return best;
}

/** The refusal's words for a language the planner does not read. */
export const SUPPORTED_LANGUAGES = SUPPORTED;

/** English phrases of the tables with their canonical words ("paste into" → "append to"). */
export function englishPhrases(): [string, string][] {
  return Object.entries(TABLES.en);
}
