import { connect as amqpConnect } from 'amqplib';
import { MessageValidationError, QUEUES, type WebhookDeliveriesReply, type WebhookGetReply } from '@tes/contracts';
import { Broker } from '@tes/messaging';
import { AMQP_URL, memoryLogger, startReceiver, waitFor } from '@tes/testing';
import { hexHmac, startHarness, taskEvent, type Harness } from '../../test/fixtures.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * The dashboard's webhook administration over request/reply (`dispatcher.admin`), against the
 * real broker and database, with a real receiver: what the gateway's dashboard asks.
 */
describe('webhook admin requests (dispatcher.admin)', () => {
  let h: Harness;
  let client: Broker;
  let receiver: Receiver;
  const ACCT = 'acct_admin1';
  const OTHER = 'acct_admin2';
  const ask = (type: Parameters<Broker['request']>[0], data: object) =>
    client.request(type, data as never, { timeoutMs: 5000 }) as Promise<Record<string, any>>;

  beforeAll(async () => {
    h = await startHarness('wd_admin');
    client = new Broker({ url: AMQP_URL, source: 'gateway', logger: memoryLogger('gateway').logger, namespace: h.ns });
    await client.connect();
    receiver = await startReceiver();
  });

  afterAll(async () => {
    await client?.close(1000);
    await receiver?.close();
    await h?.close();
    // The harness removes the task-event queue; remove the admin queue too.
    const conn = await amqpConnect(AMQP_URL);
    const ch = await conn.createChannel();
    await ch.deleteQueue(`${h.ns}.${QUEUES.dispatcherAdmin.name}`).catch(() => undefined);
    await ch.deleteQueue(`${h.ns}.${QUEUES.dispatcherAdmin.name}.dead`).catch(() => undefined);
    await conn.close();
  });

  it('webhook.get of a fresh account: no endpoint, no secret', async () => {
    expect(await ask('webhook.get', { account_id: ACCT, environment: 'test' })).toEqual({ ok: true, endpoint: null, secret: null });
  });

  it('webhook.set refuses what the destination guard refuses, and stores a good URL with a secret', async () => {
    const bad = await ask('webhook.set', { account_id: ACCT, environment: 'live', url: 'https://169.254.169.254/hook' });
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
    expect(bad['error'].message).toMatch(/webhook URL refused/);

    const ok = await ask('webhook.set', { account_id: ACCT, environment: 'test', url: receiver.url });
    expect(ok).toMatchObject({ ok: true, endpoint: { url: receiver.url } });
    const got = (await ask('webhook.get', { account_id: ACCT, environment: 'test' })) as WebhookGetReply;
    expect(got.endpoint?.url).toBe(receiver.url);
    expect(got.secret).toMatchObject({ version: 1, previous_valid_until: null });
    expect(got.secret).not.toHaveProperty('value');
    const revealed = (await ask('webhook.get', { account_id: ACCT, environment: 'test', reveal_secret: true })) as WebhookGetReply;
    expect(revealed.secret?.value).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(revealed.secret?.value?.endsWith(revealed.secret.last4)).toBe(true);
  });

  it('webhook.rotate_secret makes a new current secret; the previous one signs beside it for the grace period', async () => {
    const before = (await ask('webhook.get', { account_id: ACCT, environment: 'test', reveal_secret: true })) as WebhookGetReply;
    const r = await ask('webhook.rotate_secret', { account_id: ACCT, environment: 'test' });
    expect(r['ok']).toBe(true);
    expect(r['secret'].version).toBe(2);
    expect(r['secret'].value).not.toBe(before.secret?.value);
    expect(Date.parse(r['secret'].previous_valid_until)).toBeGreaterThan(Date.now() + 23 * 3_600_000);
    // An environment without a secret gets its first one.
    const first = await ask('webhook.rotate_secret', { account_id: OTHER, environment: 'live' });
    expect(first['secret']).toMatchObject({ version: 1, previous_valid_until: null });
  });

  it('webhook.send_test delivers a signed task.progress through the normal path and shows in the log with its attempt', async () => {
    const r = await ask('webhook.send_test', { account_id: ACCT, environment: 'test' });
    expect(r).toMatchObject({ ok: true });
    expect(r['event_id']).toMatch(/^evt_test_/);
    expect(r['task_id']).toMatch(/^task_test[A-Za-z0-9]+$/);
    const req = await waitFor(() => receiver.received.find((x) => x.headers['webhook-id'] === r['event_id']), { what: 'test delivery' });
    const body = JSON.parse(req.rawBody) as Record<string, any>;
    expect(Object.keys(body)).toEqual(['event', 'task_id', 'timestamp', 'data']);
    expect(body).toMatchObject({
      event: 'task.progress',
      task_id: r['task_id'],
      data: { step: 'test', tool: 'dashboard', progress_pct: 100 },
    });
    const secrets = (await h.dispatcher.repos.secrets.latest(ACCT, 'test', 2)).map((s) => s.secret);
    // Rotated above: both secrets sign during the grace period.
    expect(req.headers['x-service-signature']).toBe(secrets.map((s) => hexHmac(s, req.rawBody)).join(','));

    const log = await waitFor(
      async () => {
        const l = (await ask('webhook.deliveries', { account_id: ACCT, environment: 'test' })) as WebhookDeliveriesReply;
        return l.data[0]?.status === 'delivered' ? l : undefined;
      },
      { what: 'delivered in the log' },
    );
    const entry = log.data[0]!;
    expect(entry).toMatchObject({ id: r['event_id'], event: 'task.progress', test: true, attempts_made: 1 });
    expect(entry.attempts).toHaveLength(1);
    expect(entry.attempts[0]).toMatchObject({ attempt: 1, status_code: 200, error: null });
    expect(entry.attempts[0]!.latency_ms).toBeGreaterThanOrEqual(0);

    // Without an endpoint there is nothing to send to.
    const none = await ask('webhook.send_test', { account_id: OTHER, environment: 'live' });
    expect(none).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
  });

  it('webhook.deliveries and webhook.redeliver stay inside the account environment; only undeliverable events are redelivered', async () => {
    receiver.behave('fail');
    await h.publish(taskEvent('completed', { account: ACCT, env: 'test', task: 'task_adm1', version: 1 }));
    const failed = await waitFor(
      async () => {
        const l = (await ask('webhook.deliveries', {
          account_id: ACCT,
          environment: 'test',
          task_id: 'task_adm1',
        })) as WebhookDeliveriesReply;
        return l.data[0]?.status === 'undeliverable' ? l.data[0] : undefined;
      },
      { what: 'undeliverable after 5 attempts', timeoutMs: 20_000 },
    );
    expect(failed.attempts.map((a) => a.status_code)).toEqual([500, 500, 500, 500, 500]);
    expect(failed.test).toBe(false);

    // Another account or environment sees nothing of it and cannot redeliver it.
    expect(await ask('webhook.deliveries', { account_id: OTHER, environment: 'test', task_id: 'task_adm1' })).toEqual({
      ok: true,
      data: [],
    });
    expect(await ask('webhook.deliveries', { account_id: ACCT, environment: 'live', task_id: 'task_adm1' })).toEqual({
      ok: true,
      data: [],
    });
    expect(await ask('webhook.redeliver', { account_id: OTHER, environment: 'test', event_id: failed.id })).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    });
    expect(await ask('webhook.redeliver', { account_id: ACCT, environment: 'live', event_id: failed.id })).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    });

    receiver.behave('ok');
    const again = await ask('webhook.redeliver', { account_id: ACCT, environment: 'test', event_id: failed.id });
    expect(again).toMatchObject({ ok: true, delivery: { id: failed.id, status: 'pending' } });
    const delivered = await waitFor(
      async () => {
        const l = (await ask('webhook.deliveries', {
          account_id: ACCT,
          environment: 'test',
          task_id: 'task_adm1',
        })) as WebhookDeliveriesReply;
        return l.data[0]?.status === 'delivered' ? l.data[0] : undefined;
      },
      { what: 'delivered after redeliver' },
    );
    expect(delivered.attempts.at(-1)).toMatchObject({ attempt: 6, status_code: 200 });
    // A delivered event is not redelivered.
    expect(await ask('webhook.redeliver', { account_id: ACCT, environment: 'test', event_id: failed.id })).toMatchObject({
      ok: false,
      error: { code: 'invalid_request' },
    });
  });

  it('every request is checked against its JSON Schema before it is sent', async () => {
    await expect(
      client.request('webhook.set', { account_id: ACCT, environment: 'test' } as never, { timeoutMs: 100 }),
    ).rejects.toBeInstanceOf(MessageValidationError);
    await expect(
      client.request('webhook.get', { account_id: ACCT, environment: 'prod' } as never, { timeoutMs: 100 }),
    ).rejects.toBeInstanceOf(MessageValidationError);
    await expect(
      client.request('webhook.deliveries', { account_id: ACCT, environment: 'test', limit: 1000 }, { timeoutMs: 100 }),
    ).rejects.toBeInstanceOf(MessageValidationError);
  });

  it('a request older than the requester waits for is dropped unanswered (no late rotation)', async () => {
    const before = await h.dispatcher.repos.secrets.latest(ACCT, 'test', 1);
    await expect(
      client.request(
        'webhook.rotate_secret',
        { account_id: ACCT, environment: 'test' },
        { timeoutMs: 1000, occurredAt: new Date(Date.now() - 60_000).toISOString() },
      ),
    ).rejects.toThrow(/no reply/);
    expect((await h.dispatcher.repos.secrets.latest(ACCT, 'test', 1))[0]?.version).toBe(before[0]?.version);
  });
});
