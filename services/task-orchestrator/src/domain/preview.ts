import { findAction, hasReference, type ToolDef } from '@tes/catalog';
import type { WorkflowStep } from './task.js';

/** One step of a test-mode preview: what it would do, its side-effect class and the required inputs it lacks. */
export interface PreviewStep {
  tool: string;
  action: string;
  side_effect: string;
  input: Record<string, unknown>;
  missing: string[];
}

/**
 * A test task's result: the plan, step by step, as it would run (nothing runs), and the harmless
 * values the planner derived rather than read (`derived`, empty when none).
 */
export function previewOf(
  tool: string,
  steps: readonly WorkflowStep[],
  tools: readonly ToolDef[],
  derived: readonly string[] = [],
): { tool: string; steps: PreviewStep[]; derived: string[] } {
  return {
    tool,
    derived: [...derived],
    steps: steps.map((s) => ({
      tool: s.tool,
      action: s.action,
      side_effect: findAction(s.tool, s.action, tools)?.side_effect ?? 'read',
      input: s.input,
      missing: missingInputs(s, tools),
    })),
  };
}

/**
 * The required inputs of a step's action that its input leaves out or empty. A reference to an
 * earlier step's output counts as filled (its value is known when the step runs).
 */
export function missingInputs(step: WorkflowStep, tools: readonly ToolDef[]): string[] {
  const schema = findAction(step.tool, step.action, tools)?.input as { required?: unknown } | undefined;
  const required = Array.isArray(schema?.required) ? (schema.required as unknown[]).filter((r): r is string => typeof r === 'string') : [];
  return required.filter((field) => {
    const v = step.input[field];
    if (hasReference(v)) return false;
    return v === undefined || v === null || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.length === 0);
  });
}
