import { appendFileSync } from 'node:fs';
import { MONGO_URL, freePort, startService, uniqueName, waitReady, type ServiceProcess } from './index.js';

export const SERVICES = ['gateway', 'task-orchestrator', 'executor', 'oauth-vault', 'webhook-dispatcher'] as const;
export type ServiceName = (typeof SERVICES)[number];

export interface Stack {
  namespace: string;
  /** The MongoDB-wire server its databases are on (startStack's `mongoUrl`, else MONGO_URL). */
  mongoUrl: string;
  baseUrl: string;
  plainHttpUrl: string;
  vaultPublicUrl: string;
  opsPorts: Record<ServiceName, number>;
  procs: Map<ServiceName, ServiceProcess>;
  /** Env for scripts/admin.mjs so it writes this stack's databases. */
  adminEnv: Record<string, string>;
  envOf(name: ServiceName): Record<string, string>;
  start(name: ServiceName): Promise<ServiceProcess>;
  stop(name: ServiceName, signal?: NodeJS.Signals): Promise<number | null>;
  stopAll(): Promise<Record<string, number | null>>;
}

/** The database `startStack` gives one service of a namespace. */
export function stackDatabase(namespace: string, service: ServiceName): string {
  return `${namespace}_${service.replaceAll('-', '_')}`;
}

/**
 * Starts the five services as real processes on one isolated broker namespace and
 * their own databases, with free ports. `env` adds to (or overrides) every service's env.
 */
export async function startStack(
  options: {
    env?: Partial<Record<ServiceName | '*', Record<string, string>>>;
    only?: readonly ServiceName[];
    /** Node.js flags for every service process (benchmarks: --cpu-prof). */
    nodeArgs?: readonly string[];
    /**
     * Another MongoDB-wire server than MONGO_URL (a benchmark's own, OwnMongo): given to every
     * service and to the admin CLI as MONGO_URL; `removeStack` drops the databases there.
     */
    mongoUrl?: string;
  } = {},
): Promise<Stack> {
  const namespace = uniqueName('stk');
  // scripts/test.sh removes the listed stacks' databases and queues once the run is over.
  const stackLog = process.env['TES_STACK_LOG'];
  if (stackLog) appendFileSync(stackLog, `${namespace}\n`);
  const opsPorts = {} as Record<ServiceName, number>;
  for (const s of SERVICES) opsPorts[s] = await freePort();
  const httpsPort = await freePort();
  const httpPort = await freePort();
  const vaultPublicPort = await freePort();
  const db = (s: ServiceName) => stackDatabase(namespace, s);
  const ownMongo = options.mongoUrl === undefined ? {} : { MONGO_URL: options.mongoUrl };
  const envOf = (name: ServiceName): Record<string, string> => ({
    ...ownMongo,
    AMQP_NAMESPACE: namespace,
    MONGO_DB: db(name),
    OPS_PORT: String(opsPorts[name]),
    LOG_LEVEL: 'info',
    // On the shared server two jest workers' stacks and their tests meet: 3 connections a service
    // keep them below FerretDB's PostgreSQL pool (docs/operations.md, "Database pools"). On a server
    // of its own (a benchmark's), the services' default.
    ...(options.mongoUrl === undefined ? { MONGO_MAX_POOL_SIZE: '3' } : {}),
    ...(name === 'gateway' ? { PORT: String(httpsPort), HTTP_PORT: String(httpPort) } : {}),
    // Suites not about consent: test-key tasks run without the sandbox consent page (docs/oauth.md "Sandbox consent").
    ...(name === 'executor' ? { SANDBOX_AUTO_CONNECT: 'true' } : {}),
    // The tests' receivers and fake providers listen on 127.0.0.1 (the executor keeps its own HTTP_TOOL_ALLOW_HOSTS).
    ...(name === 'webhook-dispatcher' || name === 'oauth-vault' ? { OUTBOUND_ALLOW_PRIVATE: 'true' } : {}),
    ...(name === 'oauth-vault' ? { PUBLIC_PORT: String(vaultPublicPort), PUBLIC_BASE_URL: `http://127.0.0.1:${vaultPublicPort}` } : {}),
    ...(options.env?.['*'] ?? {}),
    ...(options.env?.[name] ?? {}),
  });
  const procs = new Map<ServiceName, ServiceProcess>();
  const stack: Stack = {
    namespace,
    mongoUrl: options.mongoUrl ?? MONGO_URL,
    baseUrl: `https://127.0.0.1:${httpsPort}/v1`,
    plainHttpUrl: `http://127.0.0.1:${httpPort}/v1`,
    vaultPublicUrl: `http://127.0.0.1:${vaultPublicPort}`,
    opsPorts,
    procs,
    adminEnv: {
      ...ownMongo,
      // The dispatcher CLI tells this stack's replicas of endpoint and secret changes.
      AMQP_NAMESPACE: namespace,
      GATEWAY_MONGO_DB: db('gateway'),
      WEBHOOK_DISPATCHER_MONGO_DB: db('webhook-dispatcher'),
      OAUTH_VAULT_MONGO_DB: db('oauth-vault'),
      OUTBOUND_ALLOW_PRIVATE: 'true',
    },
    envOf,
    async start(name) {
      const proc = startService(name, envOf(name), options.nodeArgs);
      procs.set(name, proc);
      await waitReady(opsPorts[name], proc);
      return proc;
    },
    async stop(name, signal = 'SIGTERM') {
      const proc = procs.get(name);
      procs.delete(name);
      return proc ? proc.stop(signal) : null;
    },
    async stopAll() {
      const codes: Record<string, number | null> = {};
      await Promise.all([...procs.keys()].map(async (n) => (codes[n] = await stack.stop(n))));
      return codes;
    },
  };
  try {
    await Promise.all((options.only ?? SERVICES).map((s) => stack.start(s)));
  } catch (err) {
    // The caller never gets the stack to stop: the services that did start must not outlive the test.
    await stack.stopAll().catch(() => undefined);
    throw err;
  }
  return stack;
}
