import { ConfigError, loadConfigOrExit, type EnvSchema } from '@tes/config';
import { ListenError, closeServer, onShutdown, startOpsServer } from '@tes/http';
import { createLogger, type Logger } from '@tes/logger';
import { createMetrics, mountMetrics, type Metrics } from '@tes/metrics';

/** The settings every service has (`commonEnv` of @tes/config) that the skeleton reads. */
export interface ServiceConfig {
  OPS_PORT: number;
  OPS_HOST: string;
  LOG_LEVEL: string;
  SHUTDOWN_TIMEOUT_MS: number;
}

/** What a service's composition starts from. */
export interface ServiceContext<C> {
  config: C;
  logger: Logger;
  metrics: Metrics;
}

/** A started service, as its composition returns it. */
export interface StartedService {
  /** GET /readyz: connected to its dependencies and taking work. */
  ready(): boolean;
  /** On SIGTERM or SIGINT: stop taking work, let what is in flight finish within `timeoutMs` (SHUTDOWN_TIMEOUT_MS). */
  stop(timeoutMs: number): Promise<void>;
  /** Once the ops server has closed: release what had to stay open until then (the database). */
  close?(): Promise<void>;
}

type ErrorClass = abstract new (...args: never[]) => Error;

export interface ServiceDefinition<C extends ServiceConfig> {
  /** Names the logger, the metrics and the start-up error lines. */
  name: string;
  configSchema: EnvSchema;
  /** The service's composition: connects, wires and starts it (src/composition.ts). */
  start: (context: ServiceContext<C>) => Promise<StartedService>;
  /**
   * Start-up errors whose message says what to fix (a malformed key ring): printed as one line,
   * without a stack, like a ConfigError or a port that cannot be listened on (ListenError).
   */
  knownErrors?: readonly ErrorClass[];
}

/**
 * A service's whole main.ts: parses the configuration (exits 1 naming every bad variable), creates
 * the logger and the metrics, starts the service, then the ops server (/healthz, /readyz,
 * /metrics on OPS_PORT), and stops it all on SIGTERM or SIGINT: the service, the ops server, what
 * the service closes last; exit 0, or 1 past SHUTDOWN_TIMEOUT_MS + 5 s. A start that fails exits 1
 * with `<name>: <message>` for a known error, `<name>: failed to start: <stack>` otherwise.
 */
export async function runService<C extends ServiceConfig>(definition: ServiceDefinition<C>): Promise<void> {
  try {
    await start(definition);
  } catch (err) {
    const known = [ConfigError, ListenError, ...(definition.knownErrors ?? [])].some((type) => err instanceof type);
    const text = known ? (err as Error).message : `failed to start: ${err instanceof Error ? err.stack : String(err)}`;
    process.stderr.write(`${definition.name}: ${text}\n`);
    process.exit(1);
  }
}

async function start<C extends ServiceConfig>({ name, configSchema, start: startService }: ServiceDefinition<C>): Promise<void> {
  const config = loadConfigOrExit<C>(name, configSchema);
  const logger = createLogger({ service: name, level: config.LOG_LEVEL });
  const metrics = createMetrics(name);
  const service = await startService({ config, logger, metrics });
  const ops = await startOpsServer({
    port: config.OPS_PORT,
    host: config.OPS_HOST,
    logger,
    ready: () => service.ready(),
    extend: (app) => mountMetrics(app, metrics.registry),
  });
  onShutdown(
    logger,
    async () => {
      await service.stop(config.SHUTDOWN_TIMEOUT_MS);
      await closeServer(ops);
      await service.close?.();
    },
    config.SHUTDOWN_TIMEOUT_MS + 5000,
  );
}
