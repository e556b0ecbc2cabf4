/**
 * A dispatcher process killed with SIGKILL while it holds events (attempts in flight, and the
 * fast-lane events it stored queued behind them) is taken over by another process within 15 s,
 * on the default 60 s lease, through its stopped heartbeat: nothing lost, order per task kept.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import mongoose from 'mongoose';
import { Broker } from '@tes/messaging';
import { KeyRing } from '@tes/sealing';
import {
  AMQP_URL,
  MONGO_URL,
  freePort,
  memoryLogger,
  startService,
  uniqueName,
  waitFor,
  waitReady,
  type ServiceProcess,
} from '@tes/testing';
import { setEndpoint } from './domain/manage-endpoint.use-case.js';
import { initSecrets } from './domain/manage-secrets.use-case.js';
import { DEVELOPMENT_KEYS } from './secret-keys.js';
import { createRepositories, type Repositories } from './store/repositories.js';
import { deleteTopology, dropDatabase, taskEvent } from '../test/fixtures.js';

/** A real receiver that leaves requests unanswered while `holding` (attempts in flight), and answers 200 otherwise. */
async function holdingReceiver() {
  const received: { id: string; at: number }[] = [];
  const state = { holding: true };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push({ id: String(req.headers['webhook-id']), at: Date.now() });
      if (!state.holding) res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    state,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const TASKS = ['task_dead_a', 'task_dead_b', 'task_dead_c'];
const VERSIONS = [1, 2, 3, 4];

describe('a dispatcher process killed while holding events (default lease 60 s, beat 2 s)', () => {
  const ns = uniqueName('wd_dead');
  const db = uniqueName('wd_dead');
  let receiver: Awaited<ReturnType<typeof holdingReceiver>>;
  let publisher: Broker;
  let conn: mongoose.Connection;
  let repos: Repositories;
  const procs: ServiceProcess[] = [];

  async function start(): Promise<ServiceProcess> {
    const port = await freePort();
    const proc = startService('webhook-dispatcher', {
      AMQP_URL,
      MONGO_URL,
      MONGO_DB: db,
      AMQP_NAMESPACE: ns,
      OPS_PORT: String(port),
      LOG_LEVEL: 'info',
      OUTBOUND_ALLOW_PRIVATE: 'true',
    });
    procs.push(proc);
    await waitReady(port, proc);
    return proc;
  }

  beforeAll(async () => {
    receiver = await holdingReceiver();
    conn = await mongoose.createConnection(MONGO_URL, { dbName: db }).asPromise();
    repos = createRepositories(conn, KeyRing.parse(DEVELOPMENT_KEYS));
    const guard = { allowedHosts: new Set<string>(), allowPrivate: true };
    await setEndpoint({ endpoints: repos.endpoints, secrets: repos.secrets, guard }, 'acc_dead', 'test', receiver.url);
    await initSecrets(repos.secrets, 'acc_dead');
    publisher = new Broker({ url: AMQP_URL, source: 'test-orchestrator', logger: memoryLogger('publisher').logger, namespace: ns });
    await publisher.connect();
  });

  afterAll(async () => {
    for (const p of procs) await p.stop('SIGKILL');
    await publisher?.close(1000);
    await conn?.close();
    await receiver?.close();
    await dropDatabase(db);
    await deleteTopology(ns);
  });

  it('takes over its attempts in flight and the events it stored within 15 s, losing none, in order per task', async () => {
    const first = await start();
    for (const v of VERSIONS) {
      for (const task of TASKS) {
        const kind = v === VERSIONS.length ? 'completed' : 'progress';
        const event = taskEvent(kind, { task, account: 'acc_dead', version: v });
        await publisher.publish('task.event', event, { partitionKey: 'acc_dead', messageId: `evt_${task}_${v}` });
      }
    }
    // The first process stored all of them and has each task's first event in flight.
    await waitFor(() => receiver.received.length === TASKS.length, { timeoutMs: 30_000, what: 'the first attempts in flight' });
    await waitFor(async () => (await repos.pending.all()).length === TASKS.length * VERSIONS.length, { what: 'every event stored' });
    await start();
    receiver.state.holding = false;
    await first.stop('SIGKILL');
    const killedAt = Date.now();

    const ids = TASKS.flatMap((t) => VERSIONS.map((v) => `evt_${t}_${v}`));
    await waitFor(
      async () => {
        const events = await Promise.all(ids.map((id) => repos.events.get(id)));
        return events.every((e) => e?.status === 'delivered');
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'every event delivered' },
    );
    const resent = receiver.received.slice(TASKS.length);
    const tookOverAfter = (resent[0]?.at ?? Infinity) - killedAt;
    const allDoneAfter = Math.max(...resent.map((r) => r.at)) - killedAt;
    expect(tookOverAfter).toBeLessThan(15_000);
    expect(allDoneAfter).toBeLessThan(15_000);
    for (const task of TASKS) {
      const got = receiver.received.map((r) => r.id).filter((id) => id.startsWith(`evt_${task}_`));
      // Only the attempt in flight at the kill arrives twice (same webhook-id), and in order.
      expect(got).toEqual([`evt_${task}_1`, ...VERSIONS.map((v) => `evt_${task}_${v}`)]);
    }
  }, 150_000);
});
