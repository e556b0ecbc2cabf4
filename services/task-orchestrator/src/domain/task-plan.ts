import { findTool, type ToolDef } from '@tes/catalog';
import type { TaskCreate, TaskReply, ToolView } from '@tes/contracts';
import { planWithRules, type Plan, type PlanOutcome, type Refusal } from '@tes/planner';
import { catalogWith } from './custom-tools.js';
import { missingInputs } from './preview.js';
import { errorReply, refusalReply } from './task-replies.js';
import type { Task, WorkflowStep } from './task.js';

/** A create's plan and its task's tool, or the answer refusing it. */
export type CreatePlan = { ok: true; plan: Plan; tool: ToolDef } | { ok: false; reply: TaskReply };

/**
 * Plans a create (pure): the plan comes with the command (made by the LLM planner outside the
 * partition, messaging/planner.consumer.ts) or from the rules planner, and is checked against the
 * account's catalog (its built-in and custom tools). A refusal is the answer (422 at the gateway).
 */
export function planCreate(cmd: TaskCreate, custom: readonly ToolView[]): CreatePlan {
  const catalog = catalogWith(custom);
  const outcome = cmd.plan ? givenPlan(cmd.plan, catalog) : planWithRules(cmd.prompt, { now: new Date(cmd.created_at), tools: catalog });
  if (!outcome.ok) return { ok: false, reply: refusalReply(outcome.refusal) };
  const missing = missingOf(outcome.plan.steps, catalog);
  if (missing.length > 0) return { ok: false, reply: refusalReply(missingRefusal(missing)) };
  const tool = findTool(outcome.plan.tool, catalog);
  if (!tool) return { ok: false, reply: refusalReply(noTool(`The plan's tool ${outcome.plan.tool} is not in the catalog`)) };
  if (tool.service && !cmd.user_id) {
    return {
      ok: false,
      reply: errorReply('invalid_request', `user_id is required: tool ${tool.name} acts on a user's ${tool.service} account`),
    };
  }
  return { ok: true, plan: outcome.plan, tool };
}

/** The rules planner's plan for a task stored without one, checked like a create's (pure). */
export function planStored(task: Task, custom: readonly ToolView[]): PlanOutcome {
  const catalog = catalogWith(custom);
  const outcome = planWithRules(task.prompt, { now: new Date(task.created_at), tools: catalog });
  if (!outcome.ok) return outcome;
  const missing = missingOf(outcome.plan.steps, catalog);
  return missing.length > 0 ? { ok: false, refusal: missingRefusal(missing) } : outcome;
}

/** A plan made outside the partition (the LLM planner): its tools must still be in the account's catalog. */
function givenPlan(plan: NonNullable<TaskCreate['plan']>, catalog: readonly ToolDef[]): PlanOutcome {
  const gone = plan.steps.find((s) => !findTool(s.tool, catalog));
  if (gone)
    return { ok: false, refusal: { ...noTool(`The tool ${gone.tool} was removed while the task was planned`), planner: plan.planner } };
  return { ok: true, plan: { tool: plan.tool, steps: plan.steps, planner: plan.planner } };
}

function missingOf(steps: readonly WorkflowStep[], catalog: readonly ToolDef[]): string[] {
  return steps.flatMap((s, i) => missingInputs(s, catalog).map((field) => `step ${i + 1} (${s.tool}.${s.action}): ${field}`));
}

function missingRefusal(missing: string[]): Refusal {
  return {
    code: 'missing_input',
    message: `The request does not say: ${missing.join('; ')}`,
    suggestion: 'Say the missing values in the prompt, for example the subject of an email in quotes',
    missing,
  };
}

function noTool(message: string): Refusal {
  return {
    code: 'no_matching_tool',
    message,
    suggestion: 'Name the service and the action, for example: Create an issue titled "Login fails" in acme/api',
  };
}
