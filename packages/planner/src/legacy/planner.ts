import { BUILT_IN_TOOLS, findAction, findTool, hasReference, type ToolDef } from '@tes/catalog';
import { WORKFLOW_MAX_STEPS } from '@tes/contracts';
import type { WorkflowStep } from '../types.js';
import {
  LISTINGS,
  buildInput,
  chooseAction,
  chooseTool,
  remember,
  type BuiltStep,
  type ItemRef,
  type PlanContext,
  type PrevStep,
} from './planner-actions.js';
import { DEFAULT_LOOP_COUNT, parseLoop, substitute } from './planner-loops.js';
import { entities, mask, splitActions, splitSegments, unmask } from './planner-text.js';

/**
 * The embedded deterministic planner: pure functions, no I/O. Selection is a keyword
 * score over the catalog (fast: it runs before the create answer); the workflow is
 * generated afterwards. The prompt forms it understands are listed in docs/engine.md.
 */

/**
 * Planning stops here: far beyond the 50-step limit (so the task fails with
 * workflow_depth_exceeded all the same), and a 10,000-character prompt of loops cannot make
 * the orchestrator build millions of steps.
 */
export const MAX_PLANNED_STEPS = 1000;

export interface PlanOptions {
  /** "tomorrow at 3pm" is resolved against this instant (UTC); pass the task's created_at. */
  now?: Date;
  tools?: readonly ToolDef[];
}

export interface PlanResult {
  steps: WorkflowStep[];
  /** What the planner could not fill in ("github.create_issue: owner is missing"); the steps then fail at run time with that message. */
  problems: string[];
}

/**
 * The task's tool: the first tool in the prompt that acts on a user's connected service
 * (so that `user_id` is checked for it), else the first tool at all; undefined when no
 * tool matches.
 */
export function selectTool(prompt: string, tools: readonly ToolDef[] = BUILT_IN_TOOLS): ToolDef | undefined {
  const { text } = mask(prompt);
  let first: ToolDef | undefined;
  let seen = 0;
  for (const clause of selectionClauses(text)) {
    // Each clause is at least one step: past the workflow limit the task fails anyway.
    if (++seen > WORKFLOW_MAX_STEPS + 1) break;
    const tool = chooseTool(clause, tools)?.tool;
    if (!tool) continue;
    if (tool.service) return tool;
    first ??= tool;
  }
  return first;
}

/** The clauses in prompt order, lazily: selection usually stops at the first one. */
function* selectionClauses(masked: string): Generator<string> {
  for (const segment of splitSegments(masked)) {
    const loop = parseLoop(segment);
    if (loop?.kind === 'listing') yield* [`list ${loop.head}`, loop.body];
    else if (loop?.kind === 'previous') yield loop.body;
    else if (loop) yield substitute(loop.body, loop.items[0] ?? '');
    else for (const c of splitActions(segment)) yield* splitDelivery(c);
  }
}

export function planWorkflow(prompt: string, tool?: ToolDef, now: Date = new Date()): WorkflowStep[] {
  return planWorkflowDetailed(prompt, tool, { now }).steps;
}

export function planWorkflowDetailed(prompt: string, tool?: ToolDef, options: PlanOptions = {}): PlanResult {
  const tools = options.tools ?? BUILT_IN_TOOLS;
  const { text, quotes } = mask(prompt);
  const ctx: PlanContext = { now: options.now ?? new Date() };
  const steps: BuiltStep[] = [];
  const problems: string[] = [];
  let lastTool: ToolDef | undefined;

  /** What "it"/"them" means: the latest step that produced data (a message posted or an email sent is skipped). */
  const prevStep = (): PrevStep | undefined => {
    for (let i = steps.length - 1; i >= 0; i--) {
      const s = steps[i];
      if (s && !DELIVERIES.has(`${s.tool}.${s.action}`)) return { index: i, tool: s.tool, action: s.action };
    }
    const last = steps[steps.length - 1];
    return last ? { index: steps.length - 1, tool: last.tool, action: last.action } : undefined;
  };

  let truncated = false;
  const add = (
    clause: string,
    extra: { prev?: PrevStep | undefined; item?: ItemRef; fallback?: ToolDef | undefined } = {},
  ): BuiltStep | undefined => {
    if (steps.length >= MAX_PLANNED_STEPS) {
      truncated = true;
      return undefined;
    }
    const chosen = chooseTool(clause, tools)?.tool ?? extra.fallback ?? lastTool ?? tool;
    if (!chosen) {
      problems.push(`no tool matches "${unmask(clause, quotes)}"`);
      return undefined;
    }
    const action = chooseAction(chosen, clause);
    const input = buildInput({
      tool: chosen,
      action,
      masked: clause,
      quotes,
      ctx,
      prev: 'prev' in extra ? extra.prev : prevStep(),
      item: extra.item,
    });
    const step = { tool: chosen.name, action, input };
    steps.push(step);
    remember(ctx, step);
    lastTool = chosen;
    problems.push(...missingFields(step, steps.length - 1, tools));
    return step;
  };

  for (const segment of splitSegments(text)) {
    const loop = parseLoop(segment);
    if (!loop) {
      for (const clause of splitActions(segment)) for (const part of splitDelivery(clause)) add(part);
      continue;
    }
    if (loop.kind === 'items') {
      const before = prevStep();
      const bodyTool = chooseTool(substitute(loop.body, loop.items[0] ?? ''), tools)?.tool;
      for (const item of loop.items) add(substitute(loop.body, item), { prev: before, fallback: bodyTool });
      continue;
    }
    const list = loop.kind === 'listing' ? add(`list ${loop.head}`) : steps[steps.length - 1];
    if (!list) {
      if (loop.kind === 'previous') problems.push(`"each of them" has nothing before it to go over`);
      continue;
    }
    const listing = LISTINGS[`${list.tool}.${list.action}`];
    if (!listing) {
      problems.push(`"for each" does not go over something that can be listed (step ${steps.length - 1} is ${list.tool}.${list.action})`);
      continue;
    }
    const given = typeof list.input['limit'] === 'number' ? list.input['limit'] : undefined;
    const count = loop.kind === 'listing' && loop.explicitCount ? loop.count : (given ?? DEFAULT_LOOP_COUNT);
    list.input['limit'] = count;
    const listIndex = steps.length - 1;
    const prev = { index: listIndex, tool: list.tool, action: list.action };
    const bodyTool = chooseTool(loop.body, tools)?.tool ?? findTool(list.tool, tools);
    for (let i = 0; i < count; i++) add(loop.body, { prev, item: { step: listIndex, index: i, kind: listing.kind }, fallback: bodyTool });
  }
  if (truncated) problems.push(`the prompt expands to more than ${MAX_PLANNED_STEPS} steps; planning stopped there`);
  return { steps, problems };
}

/** Required input fields the planner could not fill (fields holding a reference count as filled). */
function missingFields(step: BuiltStep, index: number, tools: readonly ToolDef[]): string[] {
  const def = findAction(step.tool, step.action, tools);
  const required = ((def?.input as { required?: string[] } | undefined)?.required ?? []).filter(
    (f) => !(f in step.input) || (hasReference(step.input[f]) ? false : step.input[f] === undefined),
  );
  return required.map((f) => `step ${index} (${step.tool}.${step.action}): ${f} is missing`);
}

const DELIVERIES = new Set(['slack.post_message', 'gmail.send_email', 'github.comment_on_issue', 'github.add_labels']);
const DELIVERY = /^(post|send|share|email|mail|forward|message)\s+(.+)$/i;
const SOURCES: { re: RegExp; verb: string }[] = [
  { re: /\b(?:open\s+|closed\s+|latest\s+|recent\s+|new\s+)?issues\b/i, verb: 'list' },
  { re: /\b(?:events|meetings|agenda|appointments|calendar)\b/i, verb: 'list' },
  { re: /\bchannels\b/i, verb: 'list' },
  { re: /\b(?:emails|messages|mails|inbox)\b/i, verb: 'search' },
  { re: /\bpages\b|\bdatabase\b/i, verb: 'query' },
];

/**
 * "Post the open issues of acme/api to #eng", "Email my events for tomorrow to bob@x.io":
 * one clause that names something to list and where to deliver it becomes two steps.
 */
export function splitDelivery(clause: string): string[] {
  const m = DELIVERY.exec(clause);
  if (!m?.[1] || !m[2]) return [clause];
  const e = entities(clause);
  const target = e.channels.length
    ? /\s+(?:to|in|on|into)\s+(?:the\s+)?#[\w-]+(?:\s+channel)?/i
    : e.emails.length
      ? /\s+(?:to|for)\s+[\w.%+-]+@[\w.-]+\.[a-z]{2,}/i
      : undefined;
  if (!target) return [clause];
  const rest = m[2];
  const source = SOURCES.find((s) => s.re.test(rest));
  if (!source || /^(?:a|an|the\s+message|the\s+text|message|⟦)/i.test(rest.trim())) return [clause];
  // Channels delivered to Slack, or emails delivered by email, are not a source of another tool.
  if ((e.channels.length && /\bchannels\b/i.test(rest)) || (!e.channels.length && /\b(?:emails|mails|inbox)\b/i.test(rest)))
    return [clause];
  const targetText = target.exec(rest)?.[0] ?? '';
  const saying = /\s+(?:saying|with\s+(?:the\s+)?(?:message|text|note|subject))\s+⟦\d+⟧/i.exec(rest)?.[0] ?? '';
  const what = rest.replace(targetText, ' ').replace(saying, ' ').replace(/\s+/g, ' ').trim();
  return [`${source.verb} ${what}`, `${m[1]} them${targetText}${saying}`];
}

/** The first quoted passage ("…", '…', “…”), if any. */
export function quoted(text: string): string | undefined {
  const m = /"([^"]+)"|'([^']+)'|“([^”]+)”/.exec(text);
  return m ? (m[1] ?? m[2] ?? m[3]) : undefined;
}
