/**
 * Test fixtures of the webhook dispatcher (not built: see tsconfig's exclude). Each test file
 * gets its own RabbitMQ namespace and its own database, and removes both at the end.
 */
import { createHmac } from 'node:crypto';
import mongoose from 'mongoose';
import { type Environment, type TaskEvent, type TaskEventKind } from '@tes/contracts';
import { parseEnv } from '@tes/config';
import { Broker } from '@tes/messaging';
import { AMQP_URL, MONGO_URL, memoryLogger, removeStackData, uniqueName } from '@tes/testing';
import { startDispatcher, type Dispatcher } from '../src/composition.js';
import { configSchema, type Config } from '../src/config.js';
import { setEndpoint } from '../src/domain/manage-endpoint.use-case.js';
import { initSecrets } from '../src/domain/manage-secrets.use-case.js';

export interface Harness {
  ns: string;
  db: string;
  config: Config;
  /** The first replica; `addReplica` starts more on the same queue and database. */
  dispatcher: Dispatcher;
  replicas: Dispatcher[];
  publisher: Broker;
  logLines: () => string[];
  addReplica(): Promise<Dispatcher>;
  /** Sets the endpoint (guard rules apply) and returns the environment's secret. */
  configure(account: string, env: Environment, url: string): Promise<string>;
  publish(event: TaskEvent, messageId?: string): Promise<string>;
  close(): Promise<void>;
}

/** Test defaults: compressed schedule, fast polls, short timeouts. */
export const FAST_ENV: Record<string, string> = {
  POLL_INTERVAL_MS: '100',
  WEBHOOK_TIMEOUT_MS: '2000',
  WEBHOOK_RETRY_SCHEDULE_MS: '200,200,200,200',
  CLAIM_MARGIN_MS: '1000',
  ORDER_GAP_WAIT_MS: '1000',
  SHUTDOWN_TIMEOUT_MS: '3000',
  // The receivers of these tests listen on 127.0.0.1.
  OUTBOUND_ALLOW_PRIVATE: 'true',
};

export function testConfig(ns: string, db: string, env: Record<string, string> = {}): Config {
  return parseEnv<Config>(configSchema, { AMQP_URL, MONGO_URL, MONGO_DB: db, AMQP_NAMESPACE: ns, OPS_PORT: '0', ...FAST_ENV, ...env });
}

export async function startHarness(prefix: string, env: Record<string, string> = {}): Promise<Harness> {
  const ns = uniqueName(prefix);
  const db = uniqueName(prefix);
  const config = testConfig(ns, db, env);
  const { logger, lines } = memoryLogger('webhook-dispatcher');
  const replicas: Dispatcher[] = [];
  const addReplica = async () => {
    const d = await startDispatcher(config, logger);
    replicas.push(d);
    return d;
  };
  const dispatcher = await addReplica();
  const publisher = new Broker({ url: AMQP_URL, source: 'test-orchestrator', logger: memoryLogger('publisher').logger, namespace: ns });
  await publisher.connect();

  return {
    ns,
    db,
    config,
    dispatcher,
    replicas,
    publisher,
    logLines: lines,
    addReplica,
    async configure(account, environment, url) {
      const repos = dispatcher.repos;
      await setEndpoint(
        { endpoints: repos.endpoints, secrets: repos.secrets, guard: { allowedHosts: new Set(), allowPrivate: true } },
        account,
        environment,
        url,
      );
      const { webhook_secrets } = await initSecrets(repos.secrets, account);
      return webhook_secrets[environment];
    },
    publish(event, messageId) {
      return publisher.publish('task.event', event, {
        partitionKey: event.task.account_id,
        messageId: messageId ?? `evt_${event.task.id}_${event.version}`,
      });
    },
    async close() {
      await Promise.allSettled(replicas.map((d) => d.stop(2000)));
      await publisher.close(1000).catch(() => undefined);
      await dropDatabase(db);
      await deleteTopology(ns);
    },
  };
}

export async function dropDatabase(db: string): Promise<void> {
  const conn = await mongoose.createConnection(MONGO_URL, { dbName: db }).asPromise();
  try {
    await conn.dropDatabase();
  } finally {
    await conn.close();
  }
}

/** Deletes what the dispatcher declared in a namespace (with every other durable queue name of one). */
export function deleteTopology(ns: string): Promise<void> {
  return removeStackData({ amqpUrl: AMQP_URL, mongoUrl: MONGO_URL, namespace: ns, databases: [] });
}

let clock = Date.parse('2026-01-01T00:00:00Z');

export interface EventSpec {
  task: string;
  account: string;
  env?: Environment;
  version: number;
  result?: Record<string, unknown>;
  error?: { code: string; message: string; tool: string; recoverable: boolean; suggestion?: string };
  progress?: { step: string; tool: string; message: string; progress_pct: number };
  waiting?: { reason: string; service: string; auth_url: string; message: string };
}

const STATUS: Record<TaskEventKind, TaskEvent['task']['status']> = {
  created: 'running',
  started: 'running',
  progress: 'running',
  waiting: 'waiting',
  resumed: 'running',
  completed: 'complete',
  failed: 'failed',
  cancelled: 'cancelled',
};

/** A task.event as the orchestrator publishes it. */
export function taskEvent(kind: TaskEventKind, spec: EventSpec): TaskEvent {
  const at = new Date((clock += 1000)).toISOString();
  const task: TaskEvent['task'] = {
    id: spec.task,
    account_id: spec.account,
    environment: spec.env ?? 'test',
    user_id: null,
    status: STATUS[kind],
    tool: 'text',
    metadata: {},
    created_at: '2026-01-01T00:00:00.000Z',
  };
  if (kind === 'completed') Object.assign(task, { completed_at: at, result: spec.result ?? { summary: 'done' } });
  if (kind === 'failed') {
    Object.assign(task, {
      failed_at: at,
      error: spec.error ?? { code: 'service_unavailable', message: 'upstream 503 after 3 retries', tool: 'text', recoverable: true },
    });
  }
  if (kind === 'cancelled') Object.assign(task, { cancelled_at: at });
  const event: TaskEvent = { kind, version: spec.version, task };
  if (kind === 'progress') event.progress = spec.progress ?? { step: 'fetch', tool: 'text', message: 'fetched', progress_pct: 50 };
  if (kind === 'waiting') {
    event.waiting = spec.waiting ?? {
      reason: 'oauth_consent_required',
      service: 'gmail',
      auth_url: 'https://auth.example.test/start?x=1',
      message: 'connect gmail',
    };
  }
  return event;
}

/** Independent receiver-side checks (no code of the service). */
export function hexHmac(key: string | Buffer, data: string): string {
  return createHmac('sha256', key).update(data).digest('hex');
}

export function b64Hmac(key: string | Buffer, data: string): string {
  return createHmac('sha256', key).update(data).digest('base64');
}

export function webhookOf(rawBody: string): { event: string; task_id: string; timestamp: string; data: Record<string, unknown> } {
  return JSON.parse(rawBody) as { event: string; task_id: string; timestamp: string; data: Record<string, unknown> };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
