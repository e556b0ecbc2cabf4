/**
 * The planner: a prompt in, a checked plan or a refusal out. Pure and fast (the rules planner),
 * or over the network (the LLM planner, which never runs inside a partition's turn).
 */
export type { Plan, PlanOutcome, PlannerInfo, Refusal, WorkflowStep } from './types.js';
export { planWithRules, taskToolOf, type RulesOptions } from './rules.js';
export { checkPlan } from './invariants.js';
export * from './llm.js';
