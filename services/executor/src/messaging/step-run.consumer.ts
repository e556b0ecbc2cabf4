import { QUEUES, type StepRun } from '@tes/contracts';
import type { Broker } from '@tes/messaging';
import { runStep, type RunStepDeps } from '../domain/run-step.use-case.js';

/** step.run → run (at most once) → step.result to the task's orchestrator partition. */
export async function consumeStepRuns(
  broker: Broker,
  deps: Omit<RunStepDeps, 'broker'>,
  prefetch: number,
  onStep?: (step: StepRun, outcome: string, seconds: number) => void,
): Promise<void> {
  await broker.consume(
    QUEUES.executorSteps,
    async (delivery) => {
      const step = delivery.data;
      const logger = deps.logger.child({
        task_id: step.task_id,
        step_index: step.step_index,
        correlation_id: delivery.envelope.correlation_id,
      });
      const result = await runStep(step, { ...deps, logger, broker, correlationId: delivery.envelope.correlation_id });
      if (!result) return; // another executor holds the step; it will answer
      logger.info('step finished', { tool: step.tool, action: step.action, outcome: result.outcome, duration_ms: result.duration_ms });
      onStep?.(step, result.outcome, result.duration_ms / 1000);
      await broker.publish('step.result', result, {
        partitionKey: step.account_id,
        // Same id on every resend of a recorded result: the orchestrator drops duplicates.
        // A needs_authorization answer is not recorded; a later run of the step may answer otherwise.
        messageId:
          result.outcome === 'needs_authorization' ? `auth_${step.idempotency_key}_${Date.now()}` : `result_${step.idempotency_key}`,
        ...(delivery.envelope.correlation_id ? { correlationId: delivery.envelope.correlation_id } : {}),
      });
    },
    { prefetch },
  );
}
