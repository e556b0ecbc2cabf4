import { BUILT_IN_HINTS, findAction, findReferences, hasReference, withoutReferencedFields, type ToolDef } from '@tes/catalog';
import { compile, compileDynamic, describeErrors } from '@tes/contracts';
import { customHints, entityKinds, hasTerm, usedAsVerb } from './rules/intents.js';
import { forbiddenVerbs, refuseSchedule, refuseUpfront, refuseWaiting } from './rules/refusals.js';
import { prepare } from './rules/text.js';
import type { Refusal, WorkflowStep } from './types.js';

/**
 * The checks every plan passes, whichever planner made it: every action exists and its input is
 * valid against its JSON Schema, references point only at earlier steps, and every step with a side
 * effect was asked for: the prompt holds one of the action's verbs and names what it acts on, the
 * prompt does not forbid it ("don't send it yet"), and the same write is not planned twice unless
 * the prompt asks for a repetition. Answers the refusal when the plan must not run.
 */
export function checkPlan(prompt: string, steps: readonly WorkflowStep[], tools: readonly ToolDef[]): Refusal | undefined {
  if (steps.length === 0) return refuse('no_matching_tool', 'The plan has no step', 'Say what to do and with which service');
  // What the request itself rules out (a trigger, text aimed at the planner, another service …), whoever plans it.
  const upfront = refuseUpfront(prompt);
  if (upfront) return upfront;
  const scheduled = refuseSchedule(
    prompt,
    steps.map((s) => s.tool),
  );
  if (scheduled) return scheduled;
  const said = normalize(prompt);
  const prepared = prepare(prompt);
  const clauses = prepared.segments.flat();
  const waiting = refuseWaiting(clauses, prepared.lang);
  if (waiting) return waiting;
  const forbidden = forbiddenVerbs(clauses.map((c) => c.canon).join(' . '), prompt);
  const repeats = /\b(?:times|twice|thrice|again|each|every|all|both|fois|mal|veces|chaque|jede[nr]?|cada)\b|\d+\s*x\b/i.test(prompt);
  const seen = new Set<string>();
  for (const [i, step] of steps.entries()) {
    const where = `step ${i} (${step.tool}.${step.action})`;
    const def = findAction(step.tool, step.action, tools);
    if (!def) return refuse('no_matching_tool', `${where} is not an action of the catalog`, 'Ask for something the catalog offers');
    for (const r of findReferences(step.input)) {
      if (r.step >= i)
        return refuse(
          'unsupported_request',
          `${where} refers to step ${r.step}, which does not run before it`,
          'Say the steps in the order they must run',
        );
    }
    const { schema, input } = withoutReferencedFields(def.input, step.input);
    const check = schema === def.input ? compile(schema) : compileDynamic(schema);
    if (!check(structuredClone(input))) {
      return refuse(
        'missing_input',
        `${where}: ${describeErrors(check.errors, 'input')}`,
        'Say the missing or invalid value in the prompt',
      );
    }
    if (def.side_effect === 'read') continue;
    const tool = tools.find((t) => t.name === step.tool);
    const hints = (tool && BUILT_IN_HINTS[tool.name]?.actions[def.name]) ?? (tool ? customHints(tool).actions[def.name] : undefined);
    if (!hints) continue;
    const toolsBefore = new Set(steps.slice(0, i).map((s) => s.tool));
    const asked = clauses.some((clause) => {
      const kinds = entityKinds(clause, prepared.entities);
      const quote = /⟦\d+⟧/.test(clause.raw);
      const has = (t: string) => hasTerm(clause, kinds, t, quote);
      const first = clause.words.find((w) => w !== 'please');
      const verb =
        hints.verbs.some((v) => (v.startsWith('^') ? first === v.slice(1) : !forbidden.has(v) && usedAsVerb(clause.words, v))) ||
        (hints.phrases?.some((p) => ` ${clause.phrase} `.includes(` ${p} `)) ?? false);
      // "… and close it": "it" is what an earlier step of the same tool acted on.
      // What it acts on may come from an earlier step ("for each of the channels, post …").
      const fromStep = findReferences(step.input).length > 0 && /\b(?:each|every|them|it|all)\b/.test(clause.canon);
      // "… and reply 'paid'": a short clause led by the verb acts on what a step of the same tool found.
      const onBefore = toolsBefore.has(step.tool) && (/\b(?:it|them|this|that)\b/.test(clause.canon) || clause.words.length <= 2);
      const phrase = hints.phrases?.some((p) => ` ${clause.phrase} `.includes(` ${p} `)) ?? false;
      const object = hints.objects.some(has) || fromStep || onBefore || phrase;
      return verb && object && !(hints.not ?? []).some(has);
    });
    if (!asked)
      return refuse(
        'unsupported_request',
        `${where} would ${def.side_effect === 'destructive' ? 'irreversibly change' : 'change'} something the request does not ask for`,
        'Say explicitly what should be created, sent or changed',
      );
    // Where a write lands (a channel, a recipient, a repository, a page …) is named in the request or found by an earlier step.
    for (const field of TARGET_FIELDS) {
      const value = step.input[field];
      for (const v of Array.isArray(value) ? value : [value]) {
        if (v === undefined || v === null || hasReference(v)) continue;
        if (!said.includes(normalize(String(v))))
          return refuse(
            'unsupported_request',
            `${where} would act on ${field} "${String(v)}", which the request does not name`,
            'Name every channel, person, repository and page to act on in the request',
          );
      }
    }
    const fingerprint = JSON.stringify([step.tool, step.action, step.input]);
    if (seen.has(fingerprint) && !repeats)
      return refuse(
        'unsupported_request',
        `${where} repeats an earlier step that the request asks for once`,
        'Ask once for each thing to do',
      );
    seen.add(fingerprint);
  }
  return undefined;
}

/** The inputs that say where a write lands. */
const TARGET_FIELDS = [
  'channel',
  'to',
  'cc',
  'user',
  'users',
  'attendees',
  'owner',
  'repo',
  'org',
  'name',
  'page_id',
  'parent_id',
  'database_id',
  'issue_number',
  'pull_number',
  'message_id',
  'url',
  'calendar_id',
];

/** Lower case, letters and digits only: "#Eng-Standup" and "eng standup" compare equal, as do a UUID with and without dashes. */
function normalize(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
}

function refuse(code: Refusal['code'], message: string, suggestion: string): Refusal {
  return { code, message, suggestion };
}
