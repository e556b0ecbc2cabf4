/**
 * Order within a task, independence across tasks and accounts, and events arriving out of
 * order, against real receivers.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startReceiver, waitFor, type ReceivedRequest } from '@tes/testing';
import { sleep, startHarness, taskEvent, webhookOf, type Harness } from '../test/fixtures.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

const progress = (n: number) => ({ step: `step_${n}`, tool: 'text', message: `step ${n}`, progress_pct: n * 10 });

describe('webhook ordering (schedule 300,300,300,300)', () => {
  let h: Harness;
  const closers: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    h = await startHarness('wd_order', {
      WEBHOOK_RETRY_SCHEDULE_MS: '300,300,300,300',
      WEBHOOK_TIMEOUT_MS: '3000',
      ORDER_GAP_WAIT_MS: '1500',
    });
  });

  afterAll(async () => {
    await h?.close();
    for (const c of closers) await c();
  });

  async function receiver(): Promise<Receiver> {
    const r = await startReceiver();
    closers.push(() => r.close());
    return r;
  }

  it('does not send event 2 of a task before event 1 succeeded, while event 1 keeps failing', async () => {
    const r = await receiver();
    r.behave('fail');
    await h.configure('acc_order', 'test', r.url);
    const t = { task: 'task_order', account: 'acc_order' };
    await h.publish(taskEvent('created', { ...t, version: 1 }));
    await h.publish(taskEvent('progress', { ...t, version: 2, progress: progress(1) }));
    await h.publish(taskEvent('progress', { ...t, version: 3, progress: progress(2) }));
    await h.publish(taskEvent('completed', { ...t, version: 4 }));

    await waitFor(() => r.received.length >= 3, { what: '3 failed attempts of event 1' });
    // Only the first webhook event has been tried so far.
    expect(new Set(r.received.map((q) => q.headers['webhook-id']))).toEqual(new Set(['evt_task_order_2']));
    r.behave('ok');
    await waitFor(() => r.received.some((q) => q.headers['webhook-id'] === 'evt_task_order_4'), { what: 'the last event' });
    await sleep(300);

    const ids = r.received.map((q) => q.headers['webhook-id']);
    const firstOk = ids.lastIndexOf('evt_task_order_2');
    expect(ids.slice(0, firstOk + 1).every((id) => id === 'evt_task_order_2')).toBe(true);
    expect(ids.slice(firstOk + 1)).toEqual(['evt_task_order_3', 'evt_task_order_4']);
    // Event 3 was received only after event 2 got its 200.
    const okAt = (r.received[firstOk] as ReceivedRequest).receivedAt;
    expect((r.received[firstOk + 1] as ReceivedRequest).receivedAt).toBeGreaterThanOrEqual(okAt);
    expect(r.received.map((q) => webhookOf(q.rawBody).event).slice(firstOk)).toEqual(['task.progress', 'task.progress', 'task.complete']);
  });

  it('goes on with the next event of a task once the earlier one is undeliverable', async () => {
    const r = await receiver();
    r.behave('fail');
    await h.configure('acc_undel', 'test', r.url);
    const t = { task: 'task_undel', account: 'acc_undel' };
    await h.publish(taskEvent('progress', { ...t, version: 1, progress: progress(1) }));
    await h.publish(taskEvent('completed', { ...t, version: 2 }));
    await waitFor(async () => (await h.dispatcher.repos.events.get('evt_task_undel_1'))?.status === 'undeliverable', {
      timeoutMs: 10_000,
      what: 'event 1 undeliverable',
    });
    r.behave('ok');
    await waitFor(async () => (await h.dispatcher.repos.events.get('evt_task_undel_2'))?.status === 'delivered', {
      timeoutMs: 10_000,
      what: 'event 2 delivered',
    });
    const ids = r.received.map((q) => q.headers['webhook-id']);
    expect(ids.slice(0, 5)).toEqual(Array(5).fill('evt_task_undel_1'));
    expect(ids.slice(5).every((id) => id === 'evt_task_undel_2')).toBe(true);
  });

  it('a slow, failing endpoint of one account delays neither another account nor another task', async () => {
    const stuck = await receiver();
    stuck.behave('slow', 3_500); // every attempt times out after 3 s
    const healthy = await receiver();
    await h.configure('acc_stuck', 'test', stuck.url);
    await h.configure('acc_healthy', 'test', healthy.url);
    for (let i = 1; i <= 5; i++) await h.publish(taskEvent('completed', { task: `task_stuck_${i}`, account: 'acc_stuck', version: 1 }));
    await waitFor(() => stuck.received.length >= 5, { what: 'the stuck endpoint busy' });

    const sent = Date.now();
    await h.publish(taskEvent('completed', { task: 'task_healthy', account: 'acc_healthy', version: 1 }));
    const [got] = await waitFor(() => (healthy.received.length > 0 ? healthy.received : null), {
      timeoutMs: 3000,
      what: 'the healthy delivery',
    });
    expect((got as ReceivedRequest).receivedAt - sent).toBeLessThan(1000);
  });

  it('a failing head of one task does not hold another task of the same endpoint', async () => {
    // One endpoint that fails for task_x and answers 200 for everything else.
    const seen: { task: string; status: number; at: number }[] = [];
    const server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        const task = webhookOf(raw).task_id;
        const status = task === 'task_x' ? 503 : 200;
        seen.push({ task, status, at: Date.now() });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((r) => server.close(r)));
    await h.configure('acc_shared', 'test', `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);

    await h.publish(taskEvent('progress', { task: 'task_x', account: 'acc_shared', version: 1, progress: progress(1) }));
    await h.publish(taskEvent('completed', { task: 'task_x', account: 'acc_shared', version: 2 }));
    await waitFor(() => seen.filter((s) => s.task === 'task_x').length >= 2, { what: 'task_x failing' });
    const sent = Date.now();
    await h.publish(taskEvent('progress', { task: 'task_y', account: 'acc_shared', version: 1, progress: progress(1) }));
    await h.publish(taskEvent('completed', { task: 'task_y', account: 'acc_shared', version: 2 }));
    await waitFor(() => seen.filter((s) => s.task === 'task_y').length === 2, { what: 'task_y delivered' });
    expect((seen.filter((s) => s.task === 'task_y')[1]?.at ?? 0) - sent).toBeLessThan(1000);
    // task_x's second event is still waiting behind its first.
    const x = await h.dispatcher.repos.events.get('evt_task_x_2');
    expect(x).toMatchObject({ status: 'pending', attempts_made: 0 });
  });

  it('sends a version whose predecessor never comes after the gap wait', async () => {
    const r = await receiver();
    await h.configure('acc_gap', 'test', r.url);
    const sent = Date.now();
    await h.publish(taskEvent('completed', { task: 'task_gap', account: 'acc_gap', version: 7 }));
    await waitFor(() => r.received.length === 1, { timeoutMs: 5000, what: 'the event' });
    const waited = (r.received[0] as ReceivedRequest).receivedAt - sent;
    expect(waited).toBeGreaterThanOrEqual(1400);
    expect(waited).toBeLessThan(3000);
  });
});

/**
 * A late predecessor, with a gap wait long enough that the outcome never depends on how fast a
 * loaded machine stores the second message (the short-wait case is the "never comes" test above).
 */
describe('webhook ordering with a late predecessor (ORDER_GAP_WAIT_MS 15000)', () => {
  let h: Harness;
  let r: Receiver;

  beforeAll(async () => {
    h = await startHarness('wd_late', { WEBHOOK_RETRY_SCHEDULE_MS: '300,300,300,300', ORDER_GAP_WAIT_MS: '15000' });
    r = await startReceiver();
  });

  afterAll(async () => {
    await h?.close();
    await r?.close();
  });

  it('waits for a version that arrives late, then sends both in version order', async () => {
    await h.configure('acc_late', 'test', r.url);
    const t = { task: 'task_late', account: 'acc_late' };
    // Version 3 is published (and stored) before version 2, as two competing replicas could.
    // (Version 1, `created`, went elsewhere: it is never stored and nothing waits for it.)
    await h.publish(taskEvent('completed', { ...t, version: 3 }));
    await waitFor(async () => (await h.dispatcher.repos.events.get('evt_task_late_3')) !== null, { what: 'version 3 stored' });
    await sleep(300);
    expect(r.received).toHaveLength(0);
    await h.publish(taskEvent('progress', { ...t, version: 2, progress: progress(5) }));
    await waitFor(() => r.received.length === 2, { what: 'both events', timeoutMs: 14_000 });
    expect(r.received.map((q) => q.headers['webhook-id'])).toEqual(['evt_task_late_2', 'evt_task_late_3']);
  });
});

describe('webhook concurrency limits (ENDPOINT_CONCURRENCY 2)', () => {
  let h: Harness;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    h = await startHarness('wd_limits', { ENDPOINT_CONCURRENCY: '2', DELIVERY_CONCURRENCY: '8', WEBHOOK_TIMEOUT_MS: '1500' });
  });

  afterAll(async () => {
    await h?.close();
    for (const r of receivers) await r.close();
  });

  it('holds at most ENDPOINT_CONCURRENCY deliveries to a slow endpoint, and its backlog does not delay another account', async () => {
    // Counts concurrent requests at the slow endpoint.
    let open = 0;
    let maxOpen = 0;
    const slow = http.createServer((req, res) => {
      open += 1;
      maxOpen = Math.max(maxOpen, open);
      req.resume();
      setTimeout(() => {
        open -= 1;
        res.writeHead(200).end();
      }, 600);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const healthy = await startReceiver();
    receivers.push(healthy);
    await h.configure('acc_busy', 'test', `http://127.0.0.1:${(slow.address() as AddressInfo).port}/hook`);
    await h.configure('acc_free', 'test', healthy.url);

    for (let i = 1; i <= 12; i++) await h.publish(taskEvent('completed', { task: `task_busy_${i}`, account: 'acc_busy', version: 1 }));
    await waitFor(() => open === 2, { what: 'the slow endpoint at its limit' });
    const sent = Date.now();
    await h.publish(taskEvent('completed', { task: 'task_free', account: 'acc_free', version: 1 }));
    const [got] = await waitFor(() => (healthy.received.length > 0 ? healthy.received : null), { what: 'the other account' });
    expect((got as ReceivedRequest).receivedAt - sent).toBeLessThan(1000);

    await waitFor(async () => (await h.dispatcher.repos.events.listByTask('task_busy_12'))[0]?.status === 'delivered', {
      timeoutMs: 15_000,
      what: 'the backlog delivered',
    });
    expect(maxOpen).toBe(2);
    await new Promise((r) => slow.close(r));
  });
});
