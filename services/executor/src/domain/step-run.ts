import type { StepResult, TraceStep } from '@tes/contracts';

/** One finished step: the trace entry and the result that was sent back. `_id` is the step's idempotency key. */
export interface StepRunDoc {
  _id: string;
  task_id: string;
  account_id: string;
  environment: string;
  step_index: number;
  tool: string;
  action: string;
  result: StepResult;
  trace: TraceStep;
  finished_at: Date;
}

/** The finished steps, as running a step needs them (store/step-run.repository.ts). */
export interface StepRunStore {
  find(id: string): Promise<StepRunDoc | null>;
  /** Records a finished step once; a second record of the same step keeps (and answers) the first. */
  record(doc: StepRunDoc): Promise<StepRunDoc>;
  /** Outputs of a task's completed steps, by step index (for `{{steps.N.output}}` references). */
  outputsOf(taskId: string, accountId: string, environment: string, indexes: number[]): Promise<Map<number, Record<string, unknown>>>;
}
