import { loadConfigOrExit } from '@tes/config';
import { ListenError, closeServer, onShutdown, startOpsServer } from '@tes/http';
import { createLogger } from '@tes/logger';
import { createMetrics, mountMetrics } from '@tes/metrics';
import { Broker } from '@tes/messaging';
import { connectMongo, ensureIndexes, isConnected } from '@tes/store';
import { configSchema, settingsOf, type Config } from './config.js';
import { consumeStepRuns } from './messaging/step-run.consumer.js';
import { consumeTraceQueries } from './messaging/trace-get.consumer.js';
import { SandboxRepository } from './sandbox/sandbox.repository.js';
import { StepRunRepository } from './store/step-run.repository.js';
import { StepClaimRepository } from './store/step-claim.repository.js';

const SERVICE = 'executor';

async function main(): Promise<void> {
  const config = loadConfigOrExit<Config>(SERVICE, configSchema);
  const logger = createLogger({ service: SERVICE, level: config.LOG_LEVEL });
  const mongo = await connectMongo({ url: config.MONGO_URL, dbName: config.MONGO_DB, logger });
  const steps = new StepRunRepository(mongo);
  const claims = new StepClaimRepository(mongo);
  const sandbox = new SandboxRepository(mongo);
  await ensureIndexes(mongo);
  const metrics = createMetrics(SERVICE);
  const broker = new Broker({
    url: config.AMQP_URL,
    source: SERVICE,
    logger,
    namespace: config.AMQP_NAMESPACE,
    onConsume: (queue, lag) => metrics.queueConsumeLag.observe({ queue }, lag),
  });
  await broker.connect();
  await consumeStepRuns(
    broker,
    { steps, claims, sandbox, logger, settings: settingsOf(config) },
    config.PREFETCH,
    (step, outcome, seconds) => metrics.stepDuration.observe({ tool: step.tool, action: step.action, outcome }, seconds),
  );
  await consumeTraceQueries(broker, steps);
  const ops = await startOpsServer({
    port: config.OPS_PORT,
    host: config.OPS_HOST,
    logger,
    ready: () => broker.isConnected && isConnected(mongo),
    extend: (app) => mountMetrics(app, metrics.registry),
  });

  onShutdown(
    logger,
    async () => {
      await broker.close(config.SHUTDOWN_TIMEOUT_MS);
      await closeServer(ops);
      await mongo.close();
    },
    config.SHUTDOWN_TIMEOUT_MS + 5000,
  );
}

main().catch((err: unknown) => {
  // A port that cannot be listened on (`OPS_PORT 8091 is in use (EADDRINUSE)`): one line, no stack.
  if (err instanceof ListenError) process.stderr.write(`${SERVICE}: ${err.message}\n`);
  else process.stderr.write(`${SERVICE}: failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
