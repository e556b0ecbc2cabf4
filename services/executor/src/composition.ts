import { QUEUES } from '@tes/contracts';
import { connectDatabase, createBroker, type ServiceContext, type StartedService } from '@tes/service';
import { ensureIndexes, isConnected } from '@tes/store';
import { settingsOf, type Config } from './config.js';
import { consumeStepRuns } from './messaging/step-run.consumer.js';
import { consumeTraceQueries } from './messaging/trace-get.consumer.js';
import { SandboxRepository } from './store/sandbox.repository.js';
import { StepRunRepository } from './store/step-run.repository.js';
import { StepClaimRepository } from './store/step-claim.repository.js';

export const SERVICE = 'executor';

/** Connects, then consumes step runs and trace queries. main.ts adds the ops server and signals. */
export async function startExecutor({ config, logger, metrics }: ServiceContext<Config>): Promise<StartedService> {
  const mongo = await connectDatabase({ config, logger });
  const steps = new StepRunRepository(mongo);
  const claims = new StepClaimRepository(mongo);
  const sandbox = new SandboxRepository(mongo);
  await ensureIndexes(mongo);
  const broker = createBroker({ config, logger, metrics }, SERVICE);
  await broker.connect();
  // Its step results go to the orchestrator's partitions: their queues exist first.
  await broker.declarePartitions(QUEUES.orchestratorPartition);
  await consumeStepRuns(
    broker,
    { steps, claims, sandbox, logger, settings: settingsOf(config) },
    config.PREFETCH,
    (step, outcome, seconds) => metrics.stepDuration.observe({ tool: step.tool, action: step.action, outcome }, seconds),
  );
  await consumeTraceQueries(broker, steps);

  return {
    ready: () => broker.isConnected && isConnected(mongo),
    stop: (timeoutMs) => broker.close(timeoutMs),
    close: () => mongo.close(),
  };
}
