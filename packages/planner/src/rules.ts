import { BUILT_IN_TOOLS, findTool, type ToolDef } from '@tes/catalog';
import { planWorkflowDetailed, selectTool } from './legacy/planner.js';
import type { PlanOutcome, WorkflowStep } from './types.js';

export interface RulesOptions {
  /** "tomorrow at 3pm" is resolved against this instant; pass the task's created_at. */
  now?: Date;
  /** The built-in catalog followed by the account's custom tools. */
  tools?: readonly ToolDef[];
}

/** The task's tool: the first step's tool that acts on a user's connected service, else the first step's tool. */
export function taskToolOf(steps: readonly WorkflowStep[], tools: readonly ToolDef[] = BUILT_IN_TOOLS): string | undefined {
  return (steps.find((s) => findTool(s.tool, tools)?.service) ?? steps[0])?.tool;
}

/** The deterministic planner (transitional: the legacy keyword planner behind the new interface). */
export function planWithRules(prompt: string, options: RulesOptions = {}): PlanOutcome {
  const tools = options.tools ?? BUILT_IN_TOOLS;
  const tool = selectTool(prompt, tools);
  const refuse = (message: string) =>
    ({
      ok: false,
      refusal: {
        code: 'no_matching_tool',
        message,
        suggestion: 'Name the service and the action, for example: Create an issue titled "Login fails" in acme/api',
      },
    }) as const;
  if (!tool) return refuse('No tool matches the prompt');
  const { steps, problems } = planWorkflowDetailed(prompt, tool, { now: options.now ?? new Date(), tools });
  if (steps.length === 0) return refuse('No workflow could be generated for the prompt');
  if (problems.length > 0)
    return {
      ok: false,
      refusal: { code: 'missing_input', message: problems.join('; '), suggestion: 'Say the missing values in the prompt', missing: problems },
    };
  return { ok: true, plan: { tool: taskToolOf(steps, tools) ?? tool.name, steps, planner: { name: 'rules' } } };
}
