import { connect } from 'amqplib';
import { EXCHANGES, routingKeyFor } from '@tes/contracts';
/**
 * Signed delivery against a real receiver, through the real queue and database:
 * signatures, the mapping of task event kinds, dedup of redelivered messages, no endpoint,
 * secret rotation, and the first attempt's latency.
 */
import { AMQP_URL, startReceiver, waitFor, type ReceivedRequest } from '@tes/testing';
import { rotateSecret } from './domain/manage-secrets.use-case.js';
import { b64Hmac, hexHmac, sleep, startHarness, taskEvent, webhookOf, type Harness } from '../test/fixtures.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

describe('webhook delivery (RabbitMQ + MongoDB-wire + real receiver)', () => {
  let h: Harness;
  let receiver: Receiver;
  let secret: string;
  const ACCOUNT = 'acc_delivery';

  beforeAll(async () => {
    h = await startHarness('wd_delivery');
    receiver = await startReceiver();
    secret = await h.configure(ACCOUNT, 'test', receiver.url);
  });

  afterAll(async () => {
    await h?.close();
    await receiver?.close();
  });

  const forTask = (task: string) => receiver.received.filter((r) => webhookOf(r.rawBody).task_id === task);

  it('signs the raw body: X-Service-Signature and webhook-signature verify with the secret, fail when tampered or with another secret', async () => {
    const sent = Date.now();
    await h.publish(
      taskEvent('completed', { task: 'task_sig', account: ACCOUNT, version: 1, result: { summary: 'sent 3 emails', count: 3 } }),
    );
    const [req] = await waitFor(() => (forTask('task_sig').length === 1 ? forTask('task_sig') : null), { what: 'the delivery' });
    const r = req as ReceivedRequest;
    // First attempt within the spec's latency target.
    expect(r.receivedAt - sent).toBeLessThan(1000);

    expect(r.method).toBe('POST');
    expect(r.headers['content-type']).toBe('application/json');
    const body = webhookOf(r.rawBody);
    expect(Object.keys(body)).toEqual(['event', 'task_id', 'timestamp', 'data']);
    expect(body).toMatchObject({ event: 'task.complete', task_id: 'task_sig', data: { summary: 'sent 3 emails', count: 3 } });

    const sig = r.headers['x-service-signature'] as string;
    expect(sig).toMatch(/^[0-9a-f]{64}$/);
    expect(sig).toBe(hexHmac(secret, r.rawBody));
    expect(sig).not.toBe(hexHmac(secret, r.rawBody.replace('sent 3', 'sent 4')));
    expect(sig).not.toBe(hexHmac(`${secret.slice(0, -1)}x`, r.rawBody));

    const id = r.headers['webhook-id'] as string;
    const ts = r.headers['webhook-timestamp'] as string;
    expect(id).toBe('evt_task_sig_1');
    expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(30);
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    expect(r.headers['webhook-signature']).toBe(`v1,${b64Hmac(key, `${id}.${ts}.${r.rawBody}`)}`);
    expect(r.headers['webhook-signature']).not.toBe(`v1,${b64Hmac(key, `${id}.${Number(ts) + 1}.${r.rawBody}`)}`);

    const stored = await waitFor(
      async () => {
        const e = await h.dispatcher.repos.events.get('evt_task_sig_1');
        return e?.status === 'delivered' ? e : null;
      },
      { what: 'the delivered status' },
    );
    expect(stored).toMatchObject({ status: 'delivered', attempts_made: 1, last_status_code: 200 });
    // Neither the secret nor a signature reaches a log line.
    const logs = h.logLines().join('\n');
    expect(logs).not.toContain(secret);
    expect(logs).not.toContain(sig);
  });

  it('maps completed, failed, progress and waiting to the four public events; created, started, resumed and cancelled send nothing', async () => {
    const a = { task: 'task_map_a', account: ACCOUNT };
    const b = { task: 'task_map_b', account: ACCOUNT };
    const c = { task: 'task_map_c', account: ACCOUNT };
    const progress = { step: 'search', tool: 'gmail', message: 'found 12 messages', progress_pct: 40 };
    const waiting = {
      reason: 'oauth_consent_required',
      service: 'gmail',
      auth_url: 'https://auth.example.test/start?s=1',
      message: 'connect gmail',
    };
    const error = {
      code: 'service_unavailable',
      message: '503 after 3 retries',
      tool: 'gmail',
      recoverable: true,
      suggestion: 'retry later',
    };
    await h.publish(taskEvent('created', { ...a, version: 1 }));
    await h.publish(taskEvent('started', { ...a, version: 2 }));
    await h.publish(taskEvent('progress', { ...a, version: 3, progress }));
    await h.publish(taskEvent('waiting', { ...a, version: 4, waiting }));
    await h.publish(taskEvent('resumed', { ...a, version: 5 }));
    await h.publish(taskEvent('completed', { ...a, version: 6, result: { answer: 42 } }));
    await h.publish(taskEvent('created', { ...b, version: 1 }));
    await h.publish(taskEvent('failed', { ...b, version: 2, error }));
    await h.publish(taskEvent('created', { ...c, version: 1 }));
    await h.publish(taskEvent('cancelled', { ...c, version: 2 }));

    await waitFor(() => forTask(a.task).length === 3 && forTask(b.task).length === 1, { what: 'the mapped events' });
    expect(forTask(a.task).map((r) => webhookOf(r.rawBody))).toEqual([
      expect.objectContaining({ event: 'task.progress', data: progress }),
      expect.objectContaining({ event: 'task.waiting', data: waiting }),
      expect.objectContaining({ event: 'task.complete', data: { answer: 42 } }),
    ]);
    expect(webhookOf((forTask(b.task)[0] as ReceivedRequest).rawBody)).toMatchObject({ event: 'task.failed', data: { error } });
    // The timestamp is the event's own time (the envelope's occurred_at), one per event.
    expect(new Set(forTask(a.task).map((r) => webhookOf(r.rawBody).timestamp)).size).toBe(3);

    const evC = await h.dispatcher.repos.events.get(`evt_${c.task}_2`);
    expect(evC).toMatchObject({ status: 'skipped', body: null });
    // A task's first event (created) is not stored at all: nothing waits for it.
    for (const t of [a.task, b.task, c.task]) expect(await h.dispatcher.repos.events.getStored(`evt_${t}_1`)).toBeNull();
    await sleep(500);
    expect(forTask(c.task)).toHaveLength(0);
    expect(forTask(a.task)).toHaveLength(3);
  });

  it('stores a redelivered identical message once and delivers it once', async () => {
    const ev = taskEvent('completed', { task: 'task_dup', account: ACCOUNT, version: 1 });
    await h.publish(ev, 'evt_task_dup_1');
    await h.publish(ev, 'evt_task_dup_1');
    await waitFor(() => forTask('task_dup').length >= 1, { what: 'the delivery' });
    await sleep(800);
    expect(forTask('task_dup')).toHaveLength(1);
    const list = await h.dispatcher.repos.events.listByTask('task_dup');
    expect(list).toHaveLength(1);
    await waitFor(async () => (await h.publisher.queueDepth('dispatcher.task-events')) === 0, { what: 'both messages acked' });
  });

  it('keeps an event as no_endpoint when the account environment has no endpoint, and acks the message', async () => {
    await h.publish(taskEvent('completed', { task: 'task_noep', account: 'acc_without_endpoint', version: 1 }));
    const ev = await waitFor(() => h.dispatcher.repos.events.get('evt_task_noep_1'), { what: 'the stored event' });
    expect(ev).toMatchObject({ status: 'no_endpoint', next_attempt_at: null, attempts_made: 0 });
    // Live of the configured account has no endpoint either: environments are separate.
    await h.publish(taskEvent('completed', { task: 'task_noep_live', account: ACCOUNT, env: 'live', version: 1 }));
    const live = await waitFor(() => h.dispatcher.repos.events.get('evt_task_noep_live_1'), { what: 'the live event' });
    expect(live?.status).toBe('no_endpoint');
    await waitFor(async () => (await h.publisher.queueDepth('dispatcher.task-events')) === 0, { what: 'acks' });
    await sleep(300);
    expect(receiver.received.filter((r) => r.rawBody.includes('task_noep'))).toHaveLength(0);
  });

  it('dead-letters a task event that cannot become its webhook (failed without error) and stores nothing', async () => {
    const ev = taskEvent('failed', { task: 'task_poison', account: ACCOUNT, version: 1 });
    delete ev.task.error;
    // The contract refuses it at publish time, so a faulty publisher is simulated with raw bytes.
    await expect(h.publish(ev)).rejects.toThrow(/task\.error is required/);
    const conn = await connect(AMQP_URL);
    const ch = await conn.createConfirmChannel();
    const envelope = {
      id: 'msg_poison',
      type: 'task.event',
      source: 'faulty',
      occurred_at: new Date().toISOString(),
      partition_key: ACCOUNT,
      data: ev,
    };
    ch.publish(h.publisher.name(EXCHANGES.events), routingKeyFor('task.event', ACCOUNT), Buffer.from(JSON.stringify(envelope)), {
      persistent: true,
    });
    await ch.waitForConfirms();
    await conn.close();
    await waitFor(async () => (await h.publisher.queueDepth('dispatcher.task-events.dead')) === 1, { what: 'the dead letter' });
    expect(await h.dispatcher.repos.events.get('evt_task_poison_1')).toBeNull();
    expect(h.logLines().some((l) => l.includes('dead-lettered') && l.includes('task.error'))).toBe(true);
  });

  it('after a rotation signs with the new and the previous secret during the grace period', async () => {
    const rotated = await rotateSecret(h.dispatcher.repos.secrets, ACCOUNT, 'test', 1);
    await h.publish(taskEvent('completed', { task: 'task_rot', account: ACCOUNT, version: 1 }));
    const [r] = await waitFor(() => (forTask('task_rot').length === 1 ? forTask('task_rot') : null), { what: 'the delivery' });
    const req = r as ReceivedRequest;
    expect((req.headers['x-service-signature'] as string).split(',')).toEqual([
      hexHmac(rotated.webhook_secret, req.rawBody),
      hexHmac(secret, req.rawBody),
    ]);
    const sigs = (req.headers['webhook-signature'] as string).split(' ');
    expect(sigs).toHaveLength(2);
    const signed = `${String(req.headers['webhook-id'])}.${String(req.headers['webhook-timestamp'])}.${req.rawBody}`;
    expect(sigs[0]).toBe(`v1,${b64Hmac(Buffer.from(rotated.webhook_secret.slice(6), 'base64'), signed)}`);
    expect(sigs[1]).toBe(`v1,${b64Hmac(Buffer.from(secret.slice(6), 'base64'), signed)}`);

    // Without a grace period the old secret stops signing at once.
    const next = await rotateSecret(h.dispatcher.repos.secrets, ACCOUNT, 'test', 0);
    await h.publish(taskEvent('completed', { task: 'task_rot2', account: ACCOUNT, version: 1 }));
    const [r2] = await waitFor(() => (forTask('task_rot2').length === 1 ? forTask('task_rot2') : null), { what: 'the delivery' });
    expect((r2 as ReceivedRequest).headers['x-service-signature']).toBe(hexHmac(next.webhook_secret, (r2 as ReceivedRequest).rawBody));
  });
});
