import { ref } from '@tes/catalog';
import { BODY_MARKERS } from '../lexicon.js';
import { QUOTE } from '../text.js';
import { pointsBack, previousData, outputRef, referenceFor, takeQuote, type Slots, type StepDraft } from '../slots.js';
import { leftoverText } from '../free-text.js';

/** Notes a value derived rather than read, for the next step planned ("subject: … (from the message)"). */
export function derive(s: Slots, field: string, value: unknown, from: string): void {
  if (value === undefined || value === null || value === '') return;
  s.state.derived.push(`step ${s.state.steps.length} ${field}: ${JSON.stringify(value)} (${from})`);
}

/** Sets an input field when the action has it and the value is not empty. */
export type Put = (field: string, value: unknown) => void;
/** Plans a step before the one being filled (a lookup) and answers its index. */
export type Add = (step: StepDraft) => number;
/** What each field of one action comes from. */
export type Fill = (s: Slots, put: Put, add: Add) => void;

export function textOrBack(s: Slots, roles: readonly string[], verbs: readonly string[], { leftover = true } = {}): string | undefined {
  const quoted = takeQuote(s, roles);
  if (quoted !== undefined) return quoted;
  // "the same message": what the step before said.
  const last = s.state.steps[s.state.steps.length - 1];
  if (last && /\bthe same (?:message|text|thing|note)\b/.test(s.clause.canon) && typeof last.input['text'] === 'string')
    return last.input['text'];
  const prev = previousData(s.state);
  if (prev && (pointsBack(s.clause) || !leftover || s.state.sourced)) return referenceFor(s.clause, prev.index, prev.step);
  if (!leftover) return undefined;
  const rest = leftoverText(s, verbs);
  // "post today's weather to #random": a description of something to fetch, not a message.
  if (rest && isDescription(rest)) return prev ? referenceFor(s.clause, prev.index, prev.step) : undefined;
  if (rest) return rest;
  return prev ? referenceFor(s.clause, prev.index, prev.step) : undefined;
}

export function backRef(s: Slots, field?: string): string | undefined {
  const prev = previousData(s.state);
  if (!prev) return undefined;
  const key = `${prev.step.tool}.${prev.step.action}`;
  // A fetched JSON document: its parsed value is the list to count or pluck.
  if (key === 'http.fetch' || key === 'http.post') return ref(prev.index, 'json');
  const r = outputRef(prev.index, prev.step);
  if (field === 'items' && !r.includes('.items') && key !== 'data.pluck') return undefined;
  return r;
}

/** A noun phrase with no verb that starts with a determiner ("the agenda", "today's weather"): what to send, not the text. */
export function isDescription(text: string): boolean {
  // A link in it is what to send ("the weekly report link https://x.io/r").
  if (/https?:\/\//i.test(text)) return false;
  return (
    (/^(?:the|a|an|my|our|your|their|his|her|its|today's|tomorrow's|yesterday's|this|that|these|those|some|every|each|all|everyone)\b/i.test(
      text,
    ) ||
      /\b(?:of|to|in|on|for|with|about)$/i.test(text)) &&
    !/\b(?:is|are|was|were|will|has|have|had|can|should|must|need|needs|going|done|ready|live|down|up|out|back|over|broke|went|\w+ed|\w+n't)\b|\d/i.test(
      text,
    )
  );
}

/** Text after "about …" (or another pattern), up to a target or the end: "an issue about the login bug in acme/api" → "the login bug". */
export function aboutText(s: Slots, pattern = /\b(?:about|for|regarding|re)\s+(.+)$/i): string | undefined {
  const raw = s.clause.raw.replace(QUOTE, ' ');
  const m = pattern.exec(raw);
  if (!m?.[1]) return undefined;
  const text = m[1]
    .replace(/\s*\b(?:in|on|to|at|for)\s+(?:the\s+)?⟨\d+⟩.*$/i, '')
    .replace(/⟨\d+⟩/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[.,;!?]+$/, '');
  return text.length >= 2 ? capitalize(text) : undefined;
}

export function capitalize(t: string): string {
  return t.charAt(0).toUpperCase() + t.slice(1);
}

const escape = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** What stands between a recipient and the message: "letting her know that", "that", "about", a body marker. */
const LEAD_IN = new RegExp(
  `^[\\s,:;-]*(?:(?:and\\s+)?(?:letting|let|telling|tell|to\\s+let|to\\s+tell)\\s+(?:him|her|them|me|us|everyone|everybody|people|the\\s+team|[\\p{L}]+)\\s+know(?:\\s+that)?|(?:and\\s+)?(?:tell|telling)\\s+(?:him|her|them)(?:\\s+that)?|${[
    ...BODY_MARKERS,
  ]
    .sort((a, b) => b.length - a.length)
    .map(escape)
    .join('|')}|that|about|abt|regarding|re:|re|to say)(?=[\\s:])[:\\s]*`,
  'iu',
);

/**
 * The message a clause says in its own words after its last recipient or target, when nothing
 * marks it ("email jo@x.io letting her know the contract is signed" → "the contract is signed"):
 * the user's words, never made up. Undefined when what is left is not a message (empty, a date,
 * a single word, another instruction).
 */
export function messageAfterTarget(s: Slots): string | undefined {
  const raw = s.clause.raw.replace(QUOTE, ' ');
  // Who it goes to (an address, a handle, a channel) ends the instruction; a link or a number after it is part of the message.
  const targets = [...raw.matchAll(/⟨(\d+)⟩/g)].filter((m) =>
    ['email', 'user', 'channel'].includes(s.state.entities[Number(m[1])]?.kind ?? ''),
  );
  const last = targets[targets.length - 1];
  if (!last || last.index === undefined) return undefined;
  const after = raw
    .slice(last.index + last[0].length)
    .replace(/⟨(\d+)⟩/g, (_m, i: string) => s.state.entities[Number(i)]?.value ?? ' ')
    // What is left of a field said in quotes ("with subject 'Docs'") is not the message.
    .replace(
      /\s*,?\s*(?:and\s+)?(?:with\s+)?(?:the\s+)?(?:subject(?:\s+line)?|title|body|text|message)\s*:?\s*(?=$|,|\s+(?:and|with)\b)/giu,
      ' ',
    )
    // ", don't send it yet": an instruction about the step, not its message.
    .replace(/,?\s+(?:but\s+)?(?:don't|dont|do not|never)\s.*$/iu, '');
  const led = LEAD_IN.test(after);
  const text = after
    .replace(LEAD_IN, '')
    .replace(/\s+/g, ' ')
    .replace(/^[\s,:;-]+|[\s,;]+$/g, '')
    .replace(/\s+(?:asap|please|pls|plz|thanks|thx|ty)$/i, '');
  let dateless = text;
  for (const span of s.when?.spans ?? []) dateless = dateless.replace(span, ' ');
  // "send bob@x.io the report": a description of something to send, not its words.
  if (dateless.trim().split(/\s+/).length < 2 || /⟨|⟦/.test(text) || (!led && isDescription(text))) return undefined;
  return text;
}
