import type { ToolDef } from '@tes/catalog';
import type { Refusal, WorkflowStep } from './types.js';

/**
 * The checks every plan passes, whichever planner made it: a plan may only do what the prompt
 * asked. Answers the refusal when the plan must not run, undefined when it may.
 * (Transitional placeholder: the checks land with the new rules planner.)
 */
export function checkPlan(prompt: string, steps: readonly WorkflowStep[], tools: readonly ToolDef[]): Refusal | undefined {
  void prompt;
  void tools;
  if (steps.length === 0)
    return { code: 'no_matching_tool', message: 'The plan has no step', suggestion: 'Say what to do and with which service' };
  return undefined;
}
