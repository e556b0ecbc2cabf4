import { Ajv, type ErrorObject } from 'ajv';
/** Declare `type Config = FromSchema<typeof schema>` (json-schema-to-ts) beside the schema. */
export interface EnvSchema {
  type: 'object';
  properties: Record<string, object>;
  /**
   * Variables with names made of a prefix (the vault's `<SERVICE>_CLIENT_ID`): every variable whose
   * name matches is read, an empty one included (there it can mean "none of the defaults").
   */
  patternProperties?: Record<string, object>;
  required?: readonly string[];
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

const ajv = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: true, strict: false });

/**
 * Reads the variables named in `schema` from `env`, coerces numbers and booleans,
 * applies defaults, and throws one ConfigError naming every bad variable.
 */
export function parseEnv<T>(schema: EnvSchema, env: NodeJS.ProcessEnv = process.env): T {
  const picked: Record<string, unknown> = {};
  for (const key of Object.keys(schema.properties)) {
    const v = env[key];
    if (v !== undefined && v !== '') picked[key] = v;
  }
  const patterns = Object.keys(schema.patternProperties ?? {}).map((p) => new RegExp(p));
  for (const [key, v] of Object.entries(env)) {
    if (v !== undefined && !(key in schema.properties) && patterns.some((p) => p.test(key))) picked[key] = v;
  }
  const validate = ajv.compile(schema);
  if (!validate(picked)) throw new ConfigError((validate.errors ?? []).map(describe));
  return picked as T;
}

function describe(e: ErrorObject): string {
  const name = e.instancePath.replace(/^\//, '') || String(e.params['missingProperty'] ?? '');
  return `${name}: ${e.message ?? 'is invalid'}`;
}

/** For main.ts: parse or print the problems and exit(1). */
export function loadConfigOrExit<T>(service: string, schema: EnvSchema): T {
  try {
    return parseEnv<T>(schema);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${service}: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

/** Variables every service reads. */
export const commonEnv = {
  AMQP_URL: { type: 'string', pattern: '^amqps?://', default: 'amqp://guest:guest@127.0.0.1:5672' },
  MONGO_URL: { type: 'string', pattern: '^mongodb(\\+srv)?://', default: 'mongodb://127.0.0.1:27017' },
  /**
   * The most database connections (so commands in flight) of this process. Against FerretDB v1 the
   * sum over every process on the server must stay below FerretDB's PostgreSQL pool, or the server
   * deadlocks (docs/operations.md, "Database pools"): 6 for the local servers, 20 in the deployments (MongoDB).
   */
  MONGO_MAX_POOL_SIZE: { type: 'integer', minimum: 1, maximum: 500, default: 6 },
  OPS_PORT: { type: 'integer', minimum: 0, maximum: 65535 },
  /** Where /healthz, /readyz and /metrics listen; 0.0.0.0 in containers so probes and Prometheus reach them. */
  OPS_HOST: { type: 'string', minLength: 1, default: '127.0.0.1' },
  LOG_LEVEL: { type: 'string', enum: ['error', 'warn', 'info', 'debug'], default: 'info' },
  /**
   * On SIGTERM: how long work in flight may take to finish. Above the longest unit of work (a webhook
   * delivery's WEBHOOK_TIMEOUT_MS and a step's STEP_TIMEOUT_MS, 30 s each), so a rollout never cuts one
   * short; the process exits at the latest 5 s after it (deploy/: grace periods of 60 s cover both).
   */
  SHUTDOWN_TIMEOUT_MS: { type: 'integer', minimum: 0, default: 40000 },
  /** AMQP heartbeat asked for on every broker connection: a silently lost peer is noticed within about two of them. */
  AMQP_HEARTBEAT_S: { type: 'integer', minimum: 1, maximum: 600, default: 15 },
  /** The type of the durable queues: `quorum` (replicated) in production, fixed when a deployment starts (docs/operations.md). */
  AMQP_QUEUE_TYPE: { type: 'string', enum: ['classic', 'quorum'], default: 'classic' },
  /**
   * Partitions of the per-account single-writer queues (the orchestrator's, the gateway's read
   * model): the most replicas that write at once. Every service of a deployment must use the same
   * value; to change it on a running system follow docs/operations.md "Changing the partition count".
   */
  PARTITIONS: { type: 'integer', minimum: 1, maximum: 1024, default: 8 },
  /**
   * Only while PARTITIONS is being changed: the count before. The partition writers then listen for
   * the other replicas before consuming, and drain the queues past a smaller new count.
   */
  PARTITIONS_PREVIOUS: { type: 'integer', minimum: 1, maximum: 1024 },
  /** Benchmarks only: a directory where the database commands sent are counted (connectMongo's commandStatsDir). */
  TES_DB_COMMAND_STATS: { type: 'string' },
} as const;
