/**
 * Competing replicas and claims: one attempt is performed by one replica; a claim whose
 * holder died is taken over after the lease; a recorded outcome is never sent twice.
 */
import { startReceiver, waitFor } from '@tes/testing';
import { sleep, startHarness, taskEvent, webhookOf, type Harness } from '../test/fixtures.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

describe('attempt claims across replicas (timeout 2 s + margin 1 s = 3 s lease)', () => {
  let h: Harness;
  let receiver: Receiver;

  beforeAll(async () => {
    h = await startHarness('wd_claims', { WEBHOOK_TIMEOUT_MS: '2000', CLAIM_MARGIN_MS: '1000' });
    await h.addReplica();
    await h.addReplica();
    receiver = await startReceiver();
  });

  afterAll(async () => {
    await h?.close();
    await receiver?.close();
  });

  it('three replicas deliver every event exactly once, in order per task', async () => {
    await h.configure('acc_rep_1', 'test', receiver.url);
    await h.configure('acc_rep_2', 'test', receiver.url);
    const tasks = Array.from({ length: 10 }, (_, i) => ({ task: `task_rep_${i}`, account: `acc_rep_${(i % 2) + 1}` }));
    for (let v = 1; v <= 3; v++) {
      for (const t of tasks) {
        const kind = v === 3 ? 'completed' : 'progress';
        await h.publish(
          taskEvent(kind, { ...t, version: v, progress: { step: `s${v}`, tool: 'text', message: 'm', progress_pct: v * 30 } }),
        );
      }
    }
    await waitFor(() => receiver.received.length >= 30, { timeoutMs: 15_000, what: '30 deliveries' });
    await sleep(1000);
    const ids = receiver.received.map((r) => String(r.headers['webhook-id']));
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
    for (const t of tasks) {
      const order = receiver.received.filter((r) => webhookOf(r.rawBody).task_id === t.task).map((r) => r.headers['webhook-id']);
      expect(order).toEqual([1, 2, 3].map((v) => `evt_${t.task}_${v}`));
    }
    // One attempt record per event, and every event delivered.
    const attempts = await h.dispatcher.repos.attempts.listFor(ids);
    expect(attempts).toHaveLength(30);
    expect(attempts.every((a) => a.ok && a.attempt === 1)).toBe(true);
  });

  it('takes over an attempt whose holder died before recording it, once the lease is over, with the same webhook-id', async () => {
    await h.configure('acc_dead', 'test', receiver.url);
    // A replica claimed attempt 1 and died: its claim stays behind.
    await h.dispatcher.mongo.collection('attempt_claims').insertOne({
      _id: 'evt_task_dead_1:1',
      event_id: 'evt_task_dead_1',
      attempt: 1,
      holder: 'dead-replica',
      claimed_at: new Date(),
    } as never);
    const sent = Date.now();
    await h.publish(taskEvent('completed', { task: 'task_dead', account: 'acc_dead', version: 1 }));
    await sleep(1500);
    expect(receiver.received.filter((r) => r.headers['webhook-id'] === 'evt_task_dead_1')).toHaveLength(0);

    const ev = await waitFor(
      async () => {
        const e = await h.dispatcher.repos.events.get('evt_task_dead_1');
        return e?.status === 'delivered' ? e : null;
      },
      { timeoutMs: 8000, what: 'the takeover delivery' },
    );
    expect((ev.delivered_at?.getTime() ?? 0) - sent).toBeGreaterThanOrEqual(2900);
    expect(ev.attempts_made).toBe(1);
    const claims = await h.dispatcher.repos.claims.listFor('evt_task_dead_1');
    expect(claims.map((c) => c._id)).toEqual(['evt_task_dead_1:1', 'evt_task_dead_1:1:retry-1']);
    expect(receiver.received.filter((r) => r.headers['webhook-id'] === 'evt_task_dead_1')).toHaveLength(1);
    expect(h.logLines().some((l) => l.includes('attempt claim expired, taken over'))).toBe(true);
  });

  it('applies an outcome recorded by a holder that died before updating the event, without sending again', async () => {
    await h.configure('acc_rec', 'test', receiver.url);
    const old = new Date(Date.now() - 60_000);
    await h.dispatcher.mongo
      .collection('attempt_claims')
      .insertOne({ _id: 'evt_task_rec_1:1', event_id: 'evt_task_rec_1', attempt: 1, holder: 'dead-replica', claimed_at: old } as never);
    await h.dispatcher.mongo.collection('delivery_attempts').insertOne({
      _id: 'evt_task_rec_1:1',
      event_id: 'evt_task_rec_1',
      task_id: 'task_rec',
      account_id: 'acc_rec',
      environment: 'test',
      attempt: 1,
      url: receiver.url,
      started_at: old,
      finished_at: old,
      ok: true,
      status_code: 200,
      latency_ms: 12,
      error: null,
    } as never);
    await h.publish(taskEvent('completed', { task: 'task_rec', account: 'acc_rec', version: 1 }));
    const ev = await waitFor(
      async () => {
        const e = await h.dispatcher.repos.events.get('evt_task_rec_1');
        return e?.status === 'delivered' ? e : null;
      },
      { what: 'the repaired event' },
    );
    expect(ev).toMatchObject({ attempts_made: 1, last_status_code: 200 });
    expect(receiver.received.filter((r) => r.headers['webhook-id'] === 'evt_task_rec_1')).toHaveLength(0);
  });
});
