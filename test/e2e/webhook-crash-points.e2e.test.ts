import { createHmac } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { createLogger } from '@tes/logger';
import { Broker } from '@tes/messaging';
import type { TaskEvent } from '@tes/contracts';
import {
  AMQP_URL,
  MONGO_URL,
  admin,
  freePort,
  startReceiver,
  startService,
  uniqueName,
  waitFor,
  waitReady,
  type ReceivedRequest,
  type ServiceProcess,
} from '@tes/testing';
// The task events the orchestrator publishes, as the dispatcher's own tests build them.
import { FAST_ENV, taskEvent } from '../../services/webhook-dispatcher/test/fixtures.js';

/**
 * "A dispatcher killed at any point loses nothing: the worst case is a duplicate with the same
 * event id", with the webhook-dispatcher as a real process and a real SIGKILL at each point:
 * after storing a batch of task events but before acking their messages, after claiming an
 * attempt but before sending it, after the receiver's 200 but before recording it, and after
 * recording it but before moving the event on. The process kills itself there the first time
 * it gets there (DISPATCHER_CRASH_POINT, a test-only setting), which makes the point exact.
 *
 * Each case publishes four tasks of four events (created, progress, progress, completed: three
 * webhooks each) as the orchestrator would, lets the dispatcher die, notes what the receiver got
 * and what the database recorded at that moment, and starts a dispatcher again (without the
 * setting). Then every webhook arrives, each task's in version order (a repeat included), and
 * exactly the events that had been sent but not recorded at the crash arrive twice, with the same
 * webhook-id and the same signed bytes; an event recorded before the crash is never sent again.
 */
const POINTS = ['after_store', 'before_send', 'after_response', 'after_record'] as const;
const TASKS = 4;
const KINDS: TaskEvent['kind'][] = ['created', 'progress', 'progress', 'completed'];

describe('webhook-dispatcher killed at each crash point (real process, SIGKILL)', () => {
  const ns = uniqueName('e2e_wdcrash');
  const db = uniqueName('e2e_wdcrash');
  const account = 'acc_crash';
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let publisher: Broker;
  let mongo: MongoClient;
  let secret: string;
  const procs: ServiceProcess[] = [];

  async function startDispatcher(extra: Record<string, string> = {}): Promise<ServiceProcess> {
    const port = await freePort();
    const proc = startService('webhook-dispatcher', {
      AMQP_URL,
      MONGO_URL,
      MONGO_DB: db,
      AMQP_NAMESPACE: ns,
      OPS_PORT: String(port),
      LOG_LEVEL: 'info',
      // Compressed schedule; a 3 s lease: a crashed holder's attempt is taken over 3 s after its claim.
      ...FAST_ENV,
      ...extra,
    });
    procs.push(proc);
    await waitReady(port, proc);
    return proc;
  }

  beforeAll(async () => {
    receiver = await startReceiver();
    const env = { WEBHOOK_DISPATCHER_MONGO_DB: db };
    await admin(['webhooks', 'set', '--account', account, '--env', 'test', '--url', receiver.url], env);
    secret = ((await admin(['secrets', 'init', '--account', account], env)) as { webhook_secrets: { test: string } }).webhook_secrets.test;
    mongo = await new MongoClient(MONGO_URL).connect();
    publisher = new Broker({
      url: AMQP_URL,
      source: 'task-orchestrator',
      logger: createLogger({ service: 'e2e', level: 'error' }),
      namespace: ns,
    });
    await publisher.connect();
  }, 60_000);

  afterAll(async () => {
    for (const p of procs) await p.stop('SIGKILL');
    await publisher?.close(1000);
    await mongo?.db(db).dropDatabase();
    await mongo?.close();
    await receiver?.close();
  });

  const versionOf = (id: string) => Number(id.slice(id.lastIndexOf('_') + 1));
  const webhookIds = (label: string) => Array.from({ length: TASKS }, (_, t) => [2, 3, 4].map((v) => `evt_task_${label}_${t}_${v}`)).flat();
  const receivedOf = (ids: Set<string>) => receiver.received.filter((r) => ids.has(String(r.headers['webhook-id'])));

  async function publishTasks(label: string): Promise<void> {
    for (let v = 1; v <= KINDS.length; v++) {
      const kind = KINDS[v - 1] ?? 'created';
      await Promise.all(
        Array.from({ length: TASKS }, async (_, t) => {
          const taskId = `task_${label}_${t}`;
          const event = taskEvent(kind, {
            task: taskId,
            account,
            version: v,
            result: { text: `done ${taskId}` },
            progress: { step: `s${v}`, tool: 'text', message: `step ${v}`, progress_pct: v * 20 },
          });
          await publisher.publish('task.event', event, { partitionKey: account, messageId: `evt_${taskId}_${v}` });
        }),
      );
    }
  }

  it.each(POINTS)('killed %s: every webhook arrives, in order per task, and only sent-but-unrecorded ones twice', async (point) => {
    const label = point.replaceAll('_', '');
    const ids = new Set(webhookIds(label));
    const dispatcherDb = mongo.db(db);

    const crashing = await startDispatcher({ DISPATCHER_CRASH_POINT: point });
    await publishTasks(label);
    await waitFor(() => crashing.child.exitCode !== null || crashing.child.signalCode !== null, {
      timeoutMs: 30_000,
      what: `the dispatcher to reach ${point}`,
    });
    expect(crashing.child.signalCode).toBe('SIGKILL');

    // What had happened at the moment of the crash.
    const sentBefore = new Set(receivedOf(ids).map((r) => String(r.headers['webhook-id'])));
    const attemptsCol = dispatcherDb.collection<{ _id: string; event_id: string; ok: boolean; attempt: number; started_at: Date }>(
      'delivery_attempts',
    );
    const recorded = await attemptsCol.find({ event_id: { $in: [...ids] } }).toArray();
    if (point === 'after_store' || point === 'before_send') expect(sentBefore.size).toBe(0);
    if (point === 'after_response') {
      // The receiver answered at least one; that answer was never recorded.
      expect(sentBefore.size).toBeGreaterThan(0);
      expect([...sentBefore].some((id) => !recorded.some((a) => a.event_id === id))).toBe(true);
    }
    if (point === 'after_record') {
      // Recorded, but the event was not moved on: it is still pending.
      expect(recorded.length).toBeGreaterThan(0);
      const stillPending = await dispatcherDb
        .collection('pending_events')
        .countDocuments({ _id: { $in: recorded.map((a) => a.event_id) } } as never);
      expect(stillPending).toBeGreaterThan(0);
    }

    const restartedAt = new Date();
    await startDispatcher();
    await waitFor(
      async () => {
        const pending = await dispatcherDb.collection('pending_events').countDocuments({ _id: { $in: [...ids] } } as never);
        const delivered = await dispatcherDb.collection('events').countDocuments({ _id: { $in: [...ids] }, status: 'delivered' } as never);
        return pending === 0 && delivered === ids.size;
      },
      { timeoutMs: 60_000, intervalMs: 200, what: `all ${ids.size} webhooks of ${point} delivered` },
    );
    const attempts = await attemptsCol.find({ event_id: { $in: [...ids] } }).toArray();

    const got = receivedOf(ids);
    const byId = new Map<string, ReceivedRequest[]>();
    for (const r of got) byId.set(String(r.headers['webhook-id']), [...(byId.get(String(r.headers['webhook-id'])) ?? []), r]);
    // Everything arrived; a repeat carries the same id and the same signed bytes.
    expect([...byId.keys()].sort()).toEqual([...ids].sort());
    for (const [id, list] of byId) {
      expect(new Set(list.map((r) => r.rawBody)).size).toBe(1);
      for (const r of list)
        expect(String(r.headers['x-service-signature'])).toBe(createHmac('sha256', secret).update(r.rawBody).digest('hex'));
      // Sent by the crashed process (received before the restart) but recorded by the new one: sent
      // twice, the second time by the replica that took the attempt over. Recorded by the crashed
      // process, or never sent by it: exactly once.
      const sentByCrashed = list.some((r) => r.receivedAt < restartedAt.getTime());
      const recordedByCrashed = attempts.some((a) => a.event_id === id && a.ok && a.started_at < restartedAt);
      expect({ id, times: list.length }).toEqual({ id, times: sentByCrashed && !recordedByCrashed ? 2 : 1 });
    }
    // Per task, every request (first or repeated) carries a version no lower than the one before.
    for (let t = 0; t < TASKS; t++) {
      const task = `task_${label}_${t}`;
      const versions = got
        .filter((r) => String(r.headers['webhook-id']).startsWith(`evt_${task}_`))
        .map((r) => versionOf(String(r.headers['webhook-id'])));
      expect(versions).toEqual([...versions].sort((a, b) => a - b));
      expect(new Set(versions)).toEqual(new Set([2, 3, 4]));
    }
    // And the log agrees: one successful first attempt per event.
    expect(
      attempts
        .filter((a) => a.ok && a.attempt === 1)
        .map((a) => a.event_id)
        .sort(),
    ).toEqual([...ids].sort());

    for (const p of procs.splice(0)) await p.stop('SIGTERM');
  });
});
