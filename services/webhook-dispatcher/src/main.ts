import { loadConfigOrExit } from '@tes/config';
import { ListenError, closeServer, onShutdown, startOpsServer } from '@tes/http';
import { createLogger } from '@tes/logger';
import { createMetrics, mountMetrics } from '@tes/metrics';
import { KeyRingError } from '@tes/sealing';
import { SERVICE, startDispatcher } from './app.js';
import { configSchema, type Config } from './config.js';

async function main(): Promise<void> {
  const config = loadConfigOrExit<Config>(SERVICE, configSchema);
  const logger = createLogger({ service: SERVICE, level: config.LOG_LEVEL });
  const metrics = createMetrics(SERVICE);
  const dispatcher = await startDispatcher(config, logger, metrics);
  const ops = await startOpsServer({
    port: config.OPS_PORT,
    host: config.OPS_HOST,
    logger,
    ready: () => dispatcher.ready(),
    extend: (app) => mountMetrics(app, metrics.registry),
  });

  onShutdown(
    logger,
    async () => {
      await dispatcher.stop(config.SHUTDOWN_TIMEOUT_MS);
      await closeServer(ops);
    },
    config.SHUTDOWN_TIMEOUT_MS + 5000,
  );
}

main().catch((err: unknown) => {
  // A port that cannot be listened on (`OPS_PORT 8094 is in use (EADDRINUSE)`): one line, no stack.
  // So is a missing or malformed WEBHOOK_SECRET_KEYS.
  if (err instanceof ListenError || err instanceof KeyRingError) process.stderr.write(`${SERVICE}: ${err.message}\n`);
  else process.stderr.write(`${SERVICE}: failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
