import { BUILT_IN_HINTS, BUILT_IN_TOOLS, findTool, type ToolDef } from '@tes/catalog';
import { checkPlan } from './invariants.js';
import { MAX_PLANNED_STEPS } from './rules/limits.js';
import { channelsOf, forEach, ITEM_FIELDS, numberLoop, numbersOf, type Each } from './rules/loops.js';
import { amendNegated, amendsPrevious } from './rules/amend.js';
import { planSource, type Missing } from './rules/sources.js';
import { fillInput } from './rules/fields.js';
import { ACTION_WORDS, customHints, rankIntents, type Intent, type ToolEntry } from './rules/intents.js';
import { englishPhrases, SUPPORTED_LANGUAGES, unsupportedLanguage } from './rules/lexicon.js';
import { forbiddenVerbs, missingInput, noMatch, refuseUpfront, refuseWaiting } from './rules/refusals.js';
import { DELIVERIES, previousData, repetitions, slotsOf, type PlanState, type StepDraft } from './rules/slots.js';
import { POLITE } from './rules/free-text.js';
import { ENTITY, QUOTE, prepare, setClauseVerbs, toClause, type Clause, type Prepared } from './rules/text.js';
import { setKnownVerbs, setVocabulary } from './rules/words.js';
import type { PlanOutcome, Refusal, WorkflowStep } from './types.js';

export interface RulesOptions {
  /** "tomorrow at 3pm" is resolved against this instant; pass the task's created_at. */
  now?: Date;
  /** The built-in catalog followed by the account's custom tools. */
  tools?: readonly ToolDef[];
}

export { MAX_PLANNED_STEPS };

/** The task's tool: the first step's tool that acts on a user's connected service, else the first step's tool. */
export function taskToolOf(steps: readonly WorkflowStep[], tools: readonly ToolDef[] = BUILT_IN_TOOLS): string | undefined {
  return (steps.find((s) => findTool(s.tool, tools)?.service) ?? steps[0])?.tool;
}

/** First words of English phrases that are not verbs: they never start a clause. */
const NOT_VERBS = new Set(
  'the and are was were with what which any all some this that these those them your their our back out off from for into onto over new quick real just also please can could would will'.split(
    ' ',
  ),
);

const catalogs = new WeakMap<readonly ToolDef[], ToolEntry[]>();

/** The catalog whose words the text module reads now: they are rebuilt only when another catalog is planned over. */
let applied: ToolEntry[] | undefined;

function catalogOf(tools: readonly ToolDef[]): ToolEntry[] {
  let entries = catalogs.get(tools);
  if (!entries) {
    entries = tools.map((tool) => ({ tool, hints: BUILT_IN_HINTS[tool.name] ?? customHints(tool) }));
    catalogs.set(tools, entries);
  }
  if (entries === applied) return entries;
  const words = entries.flatMap(({ hints }) => [
    ...hints.nouns,
    ...Object.values(hints.actions).flatMap((a) => [...a.verbs, ...a.objects, ...(a.not ?? [])]),
  ]);
  setVocabulary(words.filter((w) => !w.startsWith('@')));
  const hintVerbs = new Set(
    entries.flatMap(({ hints }) => Object.values(hints.actions).flatMap((a) => a.verbs.map((v) => v.replace(/^\^/, '')))),
  );
  // A phrase of the English data that stands for a verb ("paste its body into" → "append its body to") starts a clause as the verb does.
  const hintNouns = new Set(entries.flatMap(({ hints }) => [...hints.nouns, ...Object.values(hints.actions).flatMap((a) => a.objects)]));
  const verbPhrases = englishPhrases().filter(
    ([phrase, canonical]) => hintVerbs.has(canonical.split(' ')[0] ?? '') && !NOT_VERBS.has(phrase.split(' ')[0] ?? ''),
  );
  const phraseVerbs = verbPhrases.filter(([phrase]) => phrase.includes(' ')).map(([phrase]) => phrase);
  // One word of the data that stands for a verb ("paste", "nudge") starts a clause as a verb does, unless it names a thing.
  const wordVerbs = verbPhrases.filter(([phrase]) => !phrase.includes(' ') && !hintNouns.has(phrase)).map(([phrase]) => phrase);
  // A verb no action has ("pin", "star") starts a clause too, so that it is refused, never dropped.
  setClauseVerbs([...hintVerbs, ...wordVerbs, ...ACTION_WORDS], phraseVerbs);
  setKnownVerbs(ACTION_WORDS);
  applied = entries;
  return entries;
}

function leadingVerb(clause: Clause): string | undefined {
  return clause.words.find((w) => !POLITE.has(w));
}

/** A clause that asks nothing ("it's fixed now", "thanks!"): no action word leads it and it names no service. */
function isChatter(clause: Clause, catalog: readonly ToolEntry[]): boolean {
  const verb = leadingVerb(clause);
  if (verb && ACTION_WORDS.has(verb)) return false;
  if (/[⟨]/.test(clause.raw) && clause.words.some((w) => ACTION_WORDS.has(w))) return false;
  return !catalog.some(({ tool }) => clause.words.includes(tool.name) && tool.service !== null);
}

/** The deterministic planner: pure, no I/O, a few milliseconds at most. */
export function planWithRules(prompt: string, options: RulesOptions = {}): PlanOutcome {
  const tools = options.tools ?? BUILT_IN_TOOLS;
  const catalog = catalogOf(tools);
  const upfront = refuseUpfront(prompt);
  if (upfront) return refused(upfront);
  const prepared = prepare(prompt);
  const foreign = unsupportedLanguage(instructionText(prepared));
  if (foreign) return refused(unreadLanguage(foreign));
  const waiting = refuseWaiting(prepared.segments.flat(), prepared.lang);
  if (waiting) return refused(waiting);
  const state: PlanState = {
    lang: prepared.lang,
    now: options.now ?? new Date(),
    quotes: prepared.quotes,
    entities: prepared.entities,
    steps: [],
    usedQuotes: new Set(),
    derived: [],
  };
  const allCanon = prepared.segments
    .flat()
    .map((c) => c.canon)
    .join(' . ');
  const forbidden = forbiddenVerbs(allCanon, prompt);
  const missing: Planning['missing'] = [];
  const planning: Planning = { prepared, state, catalog, forbidden, missing, asked: new Set() };

  const clauses = prepared.segments.flat();
  if (clauses.length > 0 && clauses.every((c) => c.stated || isNegated(c))) return refused(statedOnly(prompt));
  for (const clause of clauses) {
    if (isNegated(clause)) {
      amendNegated(clause, state);
      continue;
    }
    // "We won't fix it": a statement asks nothing, but may say a detail of the step before (the reason).
    if (clause.stated) {
      amendsPrevious(clause, prepared, state, missing);
      continue;
    }
    const result = planClause(clause, planning);
    if (result) return refused(result);
    if (state.steps.length > MAX_PLANNED_STEPS) break;
  }
  if (state.steps.length === 0) return refused(noMatch('Nothing in the prompt matches an action of the catalog'));
  if (missing.length > 0) return refused(missingInput(missing));
  const steps: WorkflowStep[] = state.steps.slice(0, MAX_PLANNED_STEPS + 1);
  const broken = checkPlan(prompt, steps, tools);
  if (broken) return refused(broken);
  const planner = state.derived.length > 0 ? { name: 'rules' as const, derived: state.derived } : { name: 'rules' as const };
  return { ok: true, plan: { tool: taskToolOf(steps, tools) ?? steps[0]?.tool ?? '', steps, planner } };
}

/** The instruction's own words: quotes and entities (a message may be in any language) left out. */
function instructionText(prepared: Prepared): string {
  return prepared.segments
    .flat()
    .map((c) => c.raw.replace(QUOTE, ' ').replace(ENTITY, ' '))
    .join(' ');
}

function unreadLanguage(language: string): Refusal {
  return {
    code: 'unsupported_request',
    message: `The request seems to be written in ${language}, which the planner does not read.`,
    suggestion: `Write the request in ${SUPPORTED_LANGUAGES}; the texts to send (in quotes) may be in any language.`,
  };
}

/** A prompt that only says what the user will do ("I'll merge it after CI"). */
function statedOnly(prompt: string): Refusal {
  return {
    code: 'unsupported_request',
    message: `"${prompt.slice(0, 200)}" says what you will do; it does not ask the service to do anything.`,
    suggestion: 'Ask for the action itself, e.g. "Merge PR 4 in acme/api"',
  };
}

function refused(refusal: Refusal): PlanOutcome {
  return { ok: false, refusal: { ...refusal, planner: { name: 'rules' } } };
}

function isNegated(clause: Clause): boolean {
  return /^(?:but\s+|and\s+)?(?:don'?t|do not|dont|never|no need to|without|not yet|ne\s|nicht|no\s)/.test(clause.canon.trim());
}

function unmaskRaw(clause: Clause, prepared: Prepared): string {
  return clause.raw
    .replace(QUOTE, (_m, i: string) => `"${prepared.quotes[Number(i)]?.text ?? ''}"`)
    .replace(ENTITY, (_m, i: string) => {
      const e = prepared.entities[Number(i)];
      if (!e) return '';
      return e.kind === 'channel' ? `#${e.value}` : e.kind === 'user' ? `@${e.value}` : e.kind === 'number' ? `#${e.value}` : e.value;
    });
}

/** What planning one prompt carries from clause to clause. */
interface Planning {
  prepared: Prepared;
  state: PlanState;
  catalog: readonly ToolEntry[];
  /** Verbs the prompt forbids ("don't send it yet"). */
  forbidden: ReadonlySet<string>;
  /** Required inputs nothing filled, for the refusal. */
  missing: Missing[];
  /** The writes planned so far: one asked twice in other words is planned once. */
  asked: Set<string>;
}

function planClause(clause: Clause, p: Planning): Refusal | undefined {
  const { prepared, state, catalog, forbidden, missing } = p;
  if (amendsPrevious(clause, prepared, state, missing)) return undefined;
  const each = forEach(clause, prepared, state);
  if (each) return planEach(each, p);
  const loop = numberLoop(clause);
  // "for each failing test": a loop over something no listing gives; never one step in its place.
  if (!loop && /\b(?:for|to|on|in)\s+(?:each|every)\b(?!\s+(?:of\s+)?(?:them|those|these|⟨)\b)(?!\s+(?:of\s+)?⟨)/.test(clause.canon))
    return {
      code: 'unsupported_request',
      message: `"${unmaskRaw(clause, prepared)}" goes "for each" over something the service cannot list.`,
      suggestion:
        "Name the items (e.g. 'for each of acme/api and acme/web, …') or a listing of issues, pull requests or channels (e.g. 'for each of the last 5 issues in acme/api, …')",
    };
  const hasQuote = /⟦\d+⟧/.test(clause.raw) || loop !== undefined;
  const intents = rankIntents(
    loop ? { ...clause, words: [...clause.words, 'it'] } : clause,
    prepared.entities,
    catalog,
    hasQuote,
    forbidden,
    state.steps[state.steps.length - 1]?.tool,
  );
  if (intents.length === 0) {
    if (isChatter(clause, catalog)) return undefined;
    const verb = leadingVerb(clause);
    const said = unmaskRaw(clause, prepared);
    if (verb && forbidden.has(verb)) return undefined;
    return noMatch(
      `"${said}" is not an action the service can plan${verb && ACTION_WORDS.has(verb) ? ` (nothing in the catalog can ${verb} that)` : ''}`,
    );
  }
  const best = intents[0] as Intent;
  const rivals = intents.filter((i) => i.score === best.score && (i.action.name !== best.action.name || i.tool.name !== best.tool.name));
  if (rivals.some((r) => r.action.side_effect !== best.action.side_effect || r.action.side_effect !== 'read')) {
    const names = [best, ...rivals].map((i) => `${i.tool.name}.${i.action.name}`);
    return {
      code: 'unsupported_request',
      message: `"${unmaskRaw(clause, prepared)}" could mean ${names.join(' or ')}; the planner does not guess between actions.`,
      suggestion: 'Name the service and the action explicitly, e.g. "post to the Slack channel #eng" or "email bob@example.com"',
    };
  }
  const key = `${best.tool.name}.${best.action.name}`;
  const add = (step: StepDraft): number => {
    state.steps.push(step);
    return state.steps.length - 1;
  };
  // "Find the Notion page X and post its text …": the page found is read before its text is sent.
  const before = previousData(state);
  if (
    before?.step.tool === 'notion' &&
    before.step.action === 'search' &&
    /\b(?:its|the)\s+(?:text|content|contents|body)\b/.test(clause.canon)
  )
    add({ tool: 'notion', action: 'get_page', input: { page_id: `{{steps.${before.index}.output.items.0.id}}` } });
  // "Post the open issues of acme/api to #eng": the listing is planned first, the delivery refers to it.
  if (DELIVERIES.has(key) || key === 'notion.create_page') planSource(clause, best, state, catalog, add, missing);
  const times = loop ? loop.to - loop.from + 1 : repetitions(clause);
  const channels = key === 'slack.post_message' ? channelsOf(clause, state) : [];
  // "comment 'dup' on issues 4 and 5": one step per number named.
  const numbered = ['issue_number', 'pull_number'].find((f) => f in ((best.action.input as { properties?: object }).properties ?? {}));
  const numbers = numbered && best.action.side_effect !== 'read' ? numbersOf(clause, state) : [];
  const copies = Math.max(1, channels.length, numbers.length);
  for (let n = 0; n < Math.min(times, MAX_PLANNED_STEPS + 1); n++) {
    for (let c = 0; c < copies; c++) {
      const before = new Set(state.usedQuotes);
      const slots = slotsOf(clause, state);
      const filled = fillInput(best.tool, best.action, slots, add);
      if (loop) filled.input['text'] = String(loop.from + n);
      if (channels.length > 1) filled.input['channel'] = channels[c];
      if (numbers.length > 1 && numbered) {
        filled.input[numbered] = numbers[c];
        filled.missing = filled.missing.filter((f) => f !== numbered);
      }
      const index = add({ tool: best.tool.name, action: best.action.name, input: filled.input });
      for (const field of filled.missing) missing.push({ step: index, tool: best.tool.name, action: best.action.name, field });
      // A repeated or copied step reads the same quotes again.
      if (n + 1 < times || c + 1 < copies) state.usedQuotes = before;
      if (state.steps.length > MAX_PLANNED_STEPS) return undefined;
    }
  }
  state.sourced = false;
  // The same write asked twice in other words is done once ("a step repeated that was asked once").
  if (times === 1 && copies === 1 && best.action.side_effect !== 'read') {
    const last = state.steps[state.steps.length - 1] as StepDraft;
    const fingerprint = JSON.stringify(last);
    if (p.asked.has(fingerprint)) state.steps.pop();
    p.asked.add(fingerprint);
  }
  return undefined;
}

function planEach(each: Each, p: Planning): Refusal | undefined {
  const { prepared, state } = p;
  const quotes = new Set(state.usedQuotes);
  if (each.kind === 'items') {
    for (const id of each.items) {
      const e = prepared.entities[id];
      const prep = e?.kind === 'repo' ? 'in' : 'to';
      state.usedQuotes = new Set(quotes);
      const refusal = planClause(toClause(`${each.body} ${prep} ⟨${id}⟩`, prepared.lang), p);
      if (refusal) return refusal;
    }
    return undefined;
  }
  if (each.list) {
    const refusal = planClause(toClause(each.list, prepared.lang), p);
    if (refusal) return refusal;
  }
  const list = previousData(state);
  const field = list ? ITEM_FIELDS[`${list.step.tool}.${list.step.action}`] : undefined;
  if (!list || !field)
    return {
      code: 'unsupported_request',
      message: '"For each" goes over issues, pull requests or channels that a listing finds; nothing before it lists those.',
      suggestion: 'Name the listing, e.g. \'For each of the last 5 issues in acme/api, add the label "triage"\'',
    };
  list.step.input['limit'] = each.count;
  // The body acts on "the issue" / "the channel" the loop gives it.
  const body = toClause(`${each.body} ${field === 'name' ? 'to the channel' : 'on the issue'}`, prepared.lang);
  for (let i = 0; i < each.count; i++) {
    state.item = { step: list.index, index: i, field };
    state.usedQuotes = new Set(quotes);
    const refusal = planClause(body, p);
    delete state.item;
    if (refusal) return refusal;
  }
  return undefined;
}
