import { createHmac } from 'node:crypto';
import { MongoClient } from 'mongodb';
import {
  admin,
  MONGO_URL,
  request,
  SERVICES,
  waitFor,
  type HttpResult,
  type ReceivedRequest,
  type ServiceName,
  type Stack,
} from '@tes/testing';

export interface Account {
  account_id: string;
  api_keys: { test: string; live: string };
  webhook_secrets: { test: string; live: string };
}

/**
 * An account for an end-to-end test. `enterprise` (10,000 requests a minute, 1,000 concurrent
 * tasks) so that polling and repeated runs never meet the rate or concurrency limits, which
 * are not what these tests are about. Webhooks of the given environments go to `webhookUrl`.
 */
export async function createAccount(
  stack: Stack,
  name: string,
  webhooks: { url: string; envs: ('test' | 'live')[]; adminEnv?: Record<string, string> } = { url: '', envs: [] },
): Promise<Account> {
  const account = (await admin(['accounts', 'create', '--name', name, '--plan', 'enterprise'], stack.adminEnv)) as Account;
  for (const env of webhooks.envs) {
    await admin(['webhooks', 'set', '--account', account.account_id, '--env', env, '--url', webhooks.url], {
      ...stack.adminEnv,
      ...(webhooks.adminEnv ?? {}),
    });
  }
  return account;
}

/** A parsed JSON body, as loosely typed as `HttpResult.json` (tests look into it freely). */
export type Json = HttpResult['json'];

export interface RecordedResponse {
  method: string;
  url: string;
  status: number;
  headers: Record<string, unknown>;
  text: string;
}

/** The public API with one key; every answer is kept (`responses`) so a test can search them all. */
export class Api {
  readonly responses: RecordedResponse[] = [];

  constructor(
    private readonly baseUrl: string,
    private readonly key: string,
  ) {}

  async call(method: string, path: string, body?: object): Promise<HttpResult> {
    const url = `${this.baseUrl}${path}`;
    const res = await request(method, url, { headers: { authorization: `Bearer ${this.key}` }, ...(body ? { body } : {}) });
    this.responses.push({ method, url, status: res.status, headers: { ...res.headers }, text: res.text });
    return res;
  }

  create(body: { prompt: string; user_id?: string; metadata?: object }): Promise<HttpResult> {
    return this.call('POST', '/tasks', body);
  }

  get(id: string): Promise<HttpResult> {
    return this.call('GET', `/tasks/${id}`);
  }

  cancel(id: string): Promise<HttpResult> {
    return this.call('POST', `/tasks/${id}/cancel`);
  }

  trace(id: string): Promise<HttpResult> {
    return this.call('GET', `/tasks/${id}/trace`);
  }

  /** Polls GET until the task is in one of `statuses`; answers the task (the GET body). */
  async until(id: string, statuses: string[], timeoutMs = 30_000): Promise<Json> {
    const res = await waitFor(
      async () => {
        const r = await this.get(id);
        const status = (r.json as { status?: unknown } | undefined)?.status;
        return typeof status === 'string' && statuses.includes(status) ? r : undefined;
      },
      { what: `task ${id} to be ${statuses.join(' or ')}`, timeoutMs, intervalMs: 100 },
    );
    return res.json;
  }
}

export interface Webhook {
  event: string;
  task_id: string;
  timestamp: string;
  data: Json;
  receivedAt: number;
  signatureOk: boolean;
  raw: ReceivedRequest;
}

/** The webhooks received for one task, in arrival order, with their X-Service-Signature checked. */
export function webhooksOf(received: ReceivedRequest[], taskId: string, secret: string): Webhook[] {
  return received
    .map((r) => ({ r, body: JSON.parse(r.rawBody) as { event: string; task_id: string; timestamp: string; data: unknown } }))
    .filter(({ body }) => body.task_id === taskId)
    .map(({ r, body }) => ({
      ...body,
      receivedAt: r.receivedAt,
      signatureOk: String(r.headers['x-service-signature'])
        .split(',')
        .includes(createHmac('sha256', secret).update(r.rawBody).digest('hex')),
      raw: r,
    }));
}

/**
 * Everything each service process writes, from the moment of the call on (plus what its
 * in-memory tail holds already): `ServiceProcess.output()` keeps only the last 100-200 KB,
 * and `stack.stop` forgets a process.
 */
export function captureLogs(stack: Stack): () => Record<string, string> {
  const logs: Record<string, string> = {};
  for (const [name, proc] of stack.procs) {
    logs[name] = proc.output();
    const keep = (c: Buffer) => (logs[name] += c.toString());
    proc.child.stdout?.on('data', keep);
    proc.child.stderr?.on('data', keep);
  }
  return () => ({ ...logs });
}

/** Restarts a service after kill -9, as an orchestrator (systemd, Kubernetes) would. */
export async function killAndRestart(stack: Stack, name: ServiceName, between?: () => Promise<void>): Promise<{ code: number | null }> {
  const proc = stack.procs.get(name);
  const code = await stack.stop(name, 'SIGKILL');
  if (proc?.child.signalCode !== 'SIGKILL')
    throw new Error(`${name} did not die of SIGKILL (exit ${code}, signal ${proc?.child.signalCode})`);
  if (between) await between();
  await stack.start(name);
  return { code };
}

/** Every occurrence of any of `needles` in `haystacks` (name → text), for a readable failure. */
export function findSecrets(haystacks: Record<string, string>, needles: string[]): string[] {
  const found: string[] = [];
  for (const [where, text] of Object.entries(haystacks)) {
    for (const n of needles) if (n && text.includes(n)) found.push(`${where} contains ${n.slice(0, 6)}…`);
  }
  return found;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function withMongo<T>(fn: (client: MongoClient) => Promise<T>): Promise<T> {
  const client = await MongoClient.connect(MONGO_URL, { serverSelectionTimeoutMS: 10_000 });
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

/** Every document of every collection of the stack's five databases, as text, keyed `db <database>.<collection>`. */
export function databaseDumps(stack: Stack): Promise<Record<string, string>> {
  return withMongo(async (client) => {
    const out: Record<string, string> = {};
    for (const s of SERVICES) {
      const name = stack.envOf(s)['MONGO_DB'] as string;
      const db = client.db(name);
      for (const c of await db.listCollections({}, { nameOnly: true }).toArray()) {
        out[`db ${name}.${c.name}`] = JSON.stringify(await db.collection(c.name).find({}).toArray());
      }
    }
    return out;
  });
}

export interface StepRunRecord {
  _id: string;
  step_index: number;
  finished_at: Date;
  trace: { tool: string; action: string; status: string; duration_ms: number };
  /** finished_at − duration_ms: when the step started running. */
  started_at: number;
}

/** The executor's own records of a task's finished steps (`step_runs`, one per idempotency key). */
export function stepRunsOf(stack: Stack, taskId: string): Promise<StepRunRecord[]> {
  return withMongo(async (client) => {
    const docs = await client
      .db(stack.envOf('executor')['MONGO_DB'] as string)
      .collection<Omit<StepRunRecord, 'started_at'>>('step_runs')
      .find({ task_id: taskId })
      .sort({ step_index: 1 })
      .toArray();
    return docs.map((d) => ({ ...d, started_at: new Date(d.finished_at).getTime() - d.trace.duration_ms }));
  });
}
