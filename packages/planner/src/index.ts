/**
 * The planner: a prompt in, a checked plan or a refusal out. Pure and fast (the rules planner),
 * or over the network (the LLM planner, which never runs inside a partition's turn).
 */
/** @public The planner's outcome, named by its callers. */
export type { Plan, PlanOutcome, PlannerInfo, Refusal, WorkflowStep } from './types.js';
export { planWithRules } from './rules.js';
export * from './llm.js';
