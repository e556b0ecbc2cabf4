import { leadingPhraseLength } from './lexicon.js';
import type { Slots } from './slots.js';
import { QUOTE } from './text.js';

/** The unquoted text a clause carries, in the user's own words, and what is never part of it. */

// ---- free text ----

const FILLER = new Set([
  'please',
  'a',
  'an',
  'the',
  'message',
  'msg',
  'note',
  'quick',
  'short',
  'to',
  'in',
  'on',
  'into',
  'channel',
  'for',
  'me',
  'my',
  'our',
  'slack',
  'saying',
  'that',
  'and',
  'can',
  'you',
  'could',
  'would',
  'kindly',
  'just',
  'also',
  'with',
  'text',
]);

/**
 * The unquoted text a clause carries after its verb and before its target ("post happy friday to
 * #random" → "happy friday"), in the user's own words and case; undefined when nothing is left.
 */
export function leftoverText(s: Slots, verbs: readonly string[]): string | undefined {
  let raw = s.clause.raw.replace(QUOTE, ' ').trim();
  // An idiom of the language data ("nudge", "shoot a dm to") is the instruction, not the message.
  const head = raw.split(/\s+/);
  let polite = 0;
  while (polite < head.length && POLITE.has((head[polite] ?? '').toLowerCase().replace(/[,:]$/, ''))) polite++;
  const idiom = leadingPhraseLength(head.slice(polite), s.state.lang);
  if (idiom > 0) raw = head.slice(polite + idiom).join(' ');
  // Drop the target: a preposition with an entity ("to #eng", "in the #ops channel").
  raw = raw.replace(
    /\s*\b(?:to|in|on|into|at|for|dans|sur|à|au|an|im|en|a|al|para)\s+(?:the\s+|le\s+|la\s+|den\s+|el\s+)?(?:slack\s+)?⟨(\d+)⟩(?:\s+(?:slack\s+)?channel)?/giu,
    (m, i: string) => {
      const kind = s.state.entities[Number(i)]?.kind;
      return kind === 'channel' || kind === 'user' || kind === 'email' ? ' ' : m;
    },
  );
  // Who or where it goes is not the message; a number, link or repository in it is ("review PR 5").
  raw = raw.replace(/⟨(\d+)⟩/g, (_m, i: string) => {
    const e = s.state.entities[Number(i)];
    return !e || e.kind === 'channel' || e.kind === 'user' ? ' ' : e.value;
  });
  const words = raw.split(/\s+/).filter(Boolean);
  // The words of politeness, then the verb, then "a message", then "that" / "know that".
  while (words.length > 0 && POLITE.has((words[0] ?? '').toLowerCase().replace(/[,:]$/, ''))) words.shift();
  while (words.length > 0) {
    const w = (words[0] ?? '').toLowerCase().replace(/[,:]$/, '');
    if (verbs.includes(w) || VERBISH.test(w)) words.shift();
    else break;
  }
  if (/^(?:everyone|everybody|people|the team|them|all)$/i.test(words[0] ?? '') && /\bknow\b/i.test(words.join(' '))) words.shift();
  const lead = /^(?:(?:a|an|the|this|my|our)\s+)?(?:quick\s+|short\s+)?(?:message|note|msg|text|reminder|dm)\b\s*/i.exec(words.join(' '));
  if (lead) words.splice(0, lead[0].trim().split(/\s+/).length);
  while (words.length > 0 && /^(?:know|that|saying|to|in|on|for|que|dass|:)$/i.test((words[0] ?? '').replace(/[,:]$/, ''))) words.shift();
  while (words.length > 0 && FILLER.has((words[words.length - 1] ?? '').toLowerCase())) words.pop();
  // "(let) Sarah know on Slack that …": the message is what follows "that".
  const text = words
    .join(' ')
    .replace(/^(?:[\p{L}@.-]+\s+)?know\b.*?\bthat\s+/iu, '')
    // "let the team in #dev know the release is delayed": who is told is not the message.
    .replace(
      /^(?:let\s+)?(?:the\s+)?(?:team|everyone|everybody|people|folks|all|them|him|her|us|channel|group|[\p{L}@.-]+)\s+know\s+(?:that\s+)?/iu,
      '',
    )
    .replace(/^[,:\s-]+|[,\s]+$/g, '');
  return text.length > 0 ? text : undefined;
}
/** Words of politeness and filler before a request's verb ("could you please …", "I'd like to …"). */
export const POLITE: ReadonlySet<string> = new Set([
  'please',
  'can',
  'could',
  'would',
  'you',
  'kindly',
  'just',
  'also',
  'quickly',
  'go',
  'ahead',
  'and',
  'let',
  'hey',
  'hi',
  'hello',
  'i',
  'need',
  'want',
  'like',
  "i'd",
  'id',
  'to',
  'now',
  'then',
  'ok',
  'okay',
  'so',
]);
const VERBISH =
  /^(?:ask|post|send|say|tell|notify|announce|share|write|ping|message|drop|let|inform|broadcast|remind|alert|warn|update|echo|repeat|print|uppercase|lowercase|shout|dm|envoie|publie|poste|dis|sende|schicke|poste|sag|envía|manda|publica|di|dile)$/i;

/** A subject made from a body: its first sentence, at most 60 characters. */
export function subjectFrom(body: string): string {
  const first = (body.split(/(?<=[.!?])\s|\n/)[0] ?? body).trim();
  return first.length <= 60 ? first.replace(/[.!]+$/, '') : `${first.slice(0, 57).replace(/\s+\S*$/, '')}…`;
}
