import { QUEUES } from '@tes/contracts';
import type { Broker } from '@tes/messaging';
import type { StepRunRepository } from '../store/step-run.repository.js';

/** trace.get → the spec 2.3 trace, in execution order. */
export async function consumeTraceQueries(broker: Broker, steps: StepRunRepository): Promise<void> {
  await broker.consume(
    QUEUES.executorQueries,
    async (delivery) => {
      const q = delivery.data;
      const runs = await steps.traceOf(q.task_id, q.account_id, q.environment);
      const trace = {
        task_id: q.task_id,
        steps: runs.map((r) => r.trace),
        total_duration_ms: runs.reduce((sum, r) => sum + r.trace.duration_ms, 0),
      };
      await delivery.reply({ ok: true, trace });
    },
    { prefetch: 32 },
  );
}
