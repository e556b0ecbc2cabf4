/** One step of a workflow: a catalog action and its input (which may hold {{steps.N.output…}} references). */
export interface WorkflowStep {
  tool: string;
  action: string;
  input: Record<string, unknown>;
}

/** Which planner made a plan; recorded with the task and shown in its trace. */
export interface PlannerInfo {
  name: 'rules' | 'llm';
  /** The model, when the LLM planner made the plan. */
  model?: string;
  /** Why the LLM planner was configured but its plan was not used. */
  fallback_reason?: string;
  /**
   * Harmless values the planner derived rather than read in the request ("step 0 subject: \"The
   * deck is ready\" (from the message)"), shown in the test-mode preview. Never where a write
   * lands or what it says.
   */
  derived?: string[];
}

/** A plan that passed the checks: the task's tool is the first step's tool that acts on a user's service, else the first step's. */
export interface Plan {
  tool: string;
  steps: WorkflowStep[];
  planner: PlannerInfo;
}

/**
 * Why a prompt is not planned. Every refusal says what would make the request clear.
 * - no_matching_tool: nothing the catalog does was recognised;
 * - missing_input: the action is clear but a required input is not in the prompt (`missing` names it);
 * - unsupported_request: understood, but not something the service does now (a trigger on a future
 *   event, a summary without a model, an ambiguous or contradictory request).
 */
export interface Refusal {
  code: 'no_matching_tool' | 'missing_input' | 'unsupported_request';
  message: string;
  suggestion: string;
  /** For missing_input: "step 1 (gmail.send_email): subject". */
  missing?: string[];
  planner?: PlannerInfo;
}

export type PlanOutcome = { ok: true; plan: Plan } | { ok: false; refusal: Refusal };
