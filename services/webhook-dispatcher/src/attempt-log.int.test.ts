/**
 * The attempt log as the dashboard's inspector reads it (`webhook.deliveries` with `event_id`) and
 * "Resend now" (`webhook.resend`), against the real broker, database and dispatcher, with a real
 * receiver whose answers the test chooses. Retries are a minute apart, so a failing event stays
 * waiting for its retry unless it is resent.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect as amqpConnect } from 'amqplib';
import { QUEUES, type WebhookDeliveryInfo } from '@tes/contracts';
import { Broker } from '@tes/messaging';
import { AMQP_URL, memoryLogger, waitFor } from '@tes/testing';
import { hexHmac, sleep, startHarness, taskEvent, type Harness } from '../test/fixtures.js';

interface Hit {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

describe('attempt log and Resend now (dispatcher.admin)', () => {
  let h: Harness;
  let client: Broker;
  let server: http.Server;
  let url = '';
  const hits: Hit[] = [];
  /** What the receiver answers next: status, body, content type. */
  let answer = { status: 200, body: 'ok', type: 'text/plain' };
  const ACCT = 'acct_attlog';
  let secret = '';

  const ask = (type: Parameters<Broker['request']>[0], data: object) =>
    client.request(type, data as never, { timeoutMs: 5000 }) as Promise<Record<string, any>>;
  const detail = async (eventId: string, account = ACCT): Promise<WebhookDeliveryInfo | undefined> =>
    (
      (await ask('webhook.deliveries', { account_id: account, environment: 'test', event_id: eventId }))['data'] as WebhookDeliveryInfo[]
    )[0];
  const hitsOf = (eventId: string) => hits.filter((x) => x.headers['webhook-id'] === eventId);

  beforeAll(async () => {
    h = await startHarness('wd_attlog', { WEBHOOK_RETRY_SCHEDULE_MS: '60000,60000,60000,60000' });
    client = new Broker({ url: AMQP_URL, source: 'gateway', logger: memoryLogger('gateway').logger, namespace: h.ns });
    await client.connect();
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        hits.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
        res.writeHead(answer.status, { 'content-type': answer.type }).end(answer.body);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    secret = await h.configure(ACCT, 'test', url);
  });

  afterAll(async () => {
    await client?.close(1000);
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await h?.close();
    const conn = await amqpConnect(AMQP_URL);
    const ch = await conn.createChannel();
    await ch.deleteQueue(`${h.ns}.${QUEUES.dispatcherAdmin.name}`).catch(() => undefined);
    await ch.deleteQueue(`${h.ns}.${QUEUES.dispatcherAdmin.name}.dead`).catch(() => undefined);
    await conn.close();
  });

  it('records per attempt the request as sent (headers, signature, the exact body) and the answer (status, body, latency)', async () => {
    answer = { status: 500, body: '{"error":"database is down"}', type: 'application/json' };
    await h.publish(taskEvent('completed', { task: 'task_att1', account: ACCT, version: 1, result: { text: 'héllo ✓' } }));
    const hit = await waitFor(() => hitsOf('evt_task_att1_1')[0], { what: 'the first attempt' });
    const d = await waitFor(
      async () => ((await detail('evt_task_att1_1'))?.attempts.length === 1 ? detail('evt_task_att1_1') : undefined),
      {
        what: 'the recorded attempt',
      },
    );
    expect(d).toMatchObject({ status: 'pending', attempts_made: 1 });
    // The body shown is the exact bytes the receiver got.
    expect(d.body).toBe(hit.body);
    const a = d.attempts[0]!;
    expect(a).toMatchObject({ attempt: 1, status_code: 500, error: 'HTTP 500', url });
    expect(a.response).toEqual({ body: '{"error":"database is down"}', truncated: false, content_type: 'application/json' });
    expect(a.latency_ms).toBeGreaterThanOrEqual(0);
    // Every header the receiver got, with the values it got.
    const sent = a.request_headers!;
    for (const name of [
      'x-service-signature',
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
      'content-type',
      'content-length',
      'user-agent',
    ]) {
      expect([name, sent[name]]).toEqual([name, hit.headers[name]]);
    }
    expect(sent['x-service-signature']).toBe(hexHmac(secret, hit.body));
    expect(Number(sent['content-length'])).toBe(Buffer.byteLength(hit.body));
    // The signing secret is nowhere in what the dashboard is given.
    const reply = JSON.stringify(await ask('webhook.deliveries', { account_id: ACCT, environment: 'test', event_id: 'evt_task_att1_1' }));
    expect(reply).not.toContain(secret);
    expect(reply).not.toContain(secret.slice('whsec_'.length));
    // The list keeps its short form; another account sees nothing.
    const list = await ask('webhook.deliveries', { account_id: ACCT, environment: 'test', task_id: 'task_att1' });
    expect(list['data'][0].attempts[0]).not.toHaveProperty('request_headers');
    expect(list['data'][0]).not.toHaveProperty('body');
    expect(await detail('evt_task_att1_1', 'acct_other')).toBeUndefined();
  });

  it('keeps the first 4 KB of a long answer, marked truncated', async () => {
    answer = { status: 200, body: 'x'.repeat(4000) + 'é'.repeat(3000), type: 'text/plain; charset=utf-8' };
    await h.publish(taskEvent('completed', { task: 'task_att2', account: ACCT, version: 1 }));
    const d = await waitFor(
      async () => ((await detail('evt_task_att2_1'))?.status === 'delivered' ? detail('evt_task_att2_1') : undefined),
      {
        what: 'delivered',
      },
    );
    const r = d.attempts[0]!.response!;
    expect(r.truncated).toBe(true);
    expect(r.content_type).toBe('text/plain; charset=utf-8');
    expect(r.body.startsWith('x'.repeat(4000) + 'é')).toBe(true);
    // 4096 bytes: 4000 + 48 two-byte characters.
    expect(Buffer.byteLength(r.body)).toBe(4096);
  });

  it('resends a failing event now instead of a minute later, without using one of its scheduled attempts', async () => {
    // From the first test: attempt 1 failed, attempt 2 due a minute later.
    const before = await detail('evt_task_att1_1');
    expect(before).toMatchObject({ status: 'pending', attempts_made: 1 });
    expect(Date.parse(before!.next_attempt_at!)).toBeGreaterThan(Date.now() + 30_000);
    answer = { status: 503, body: 'still down', type: 'text/plain' };
    const r = await ask('webhook.resend', { account_id: ACCT, environment: 'test', event_id: 'evt_task_att1_1' });
    expect(r).toMatchObject({ ok: true, effect: 'due_now' });
    const second = await waitFor(() => hitsOf('evt_task_att1_1')[1], { what: 'the resent attempt', timeoutMs: 10_000 });
    expect(second.body).toBe(hitsOf('evt_task_att1_1')[0]!.body);
    const after = await waitFor(
      async () => ((await detail('evt_task_att1_1'))?.attempts.length === 2 ? detail('evt_task_att1_1') : undefined),
      {
        what: 'attempt 2 recorded',
      },
    );
    expect(after.attempts[1]).toMatchObject({ attempt: 2, status_code: 503, response: { body: 'still down' } });
    // Failed again: back to the same delay (a minute), still pending: the manual attempt did not use up the schedule.
    expect(after).toMatchObject({ status: 'pending', attempts_made: 2 });
    expect(Date.parse(after.next_attempt_at!)).toBeGreaterThan(Date.now() + 30_000);
    const stored = await h.dispatcher.repos.pending.get('evt_task_att1_1');
    expect(stored).toMatchObject({ attempts_made: 2, schedule_base: 1 });
    // One pending document for the event: the one that waited was replaced, not left behind.
    expect((await h.dispatcher.repos.pending.listByTask('task_att1')).length).toBe(1);
  });

  it('keeps order per task: a later event resent waits for the earlier failing one, and goes right after it', async () => {
    answer = { status: 500, body: 'no', type: 'text/plain' };
    await h.publish(taskEvent('progress', { task: 'task_att3', account: ACCT, version: 1 }));
    await waitFor(() => hitsOf('evt_task_att3_1')[0], { what: 'v1 first attempt' });
    await h.publish(taskEvent('completed', { task: 'task_att3', account: ACCT, version: 2 }));
    await waitFor(async () => (await detail('evt_task_att3_2'))?.status === 'pending', { what: 'v2 stored' });

    const early = await ask('webhook.resend', { account_id: ACCT, environment: 'test', event_id: 'evt_task_att3_2' });
    expect(early).toMatchObject({ ok: true, effect: 'already_due' });
    await sleep(1500);
    expect(hitsOf('evt_task_att3_2')).toHaveLength(0);

    answer = { status: 200, body: 'ok', type: 'text/plain' };
    expect(await ask('webhook.resend', { account_id: ACCT, environment: 'test', event_id: 'evt_task_att3_1' })).toMatchObject({
      ok: true,
      effect: 'due_now',
    });
    const v2 = await waitFor(() => hitsOf('evt_task_att3_2')[0], { what: 'v2 after v1', timeoutMs: 10_000 });
    const v1 = hitsOf('evt_task_att3_1');
    expect(v1).toHaveLength(2);
    expect(v2.at).toBeGreaterThanOrEqual(v1[1]!.at);
    await waitFor(async () => (await detail('evt_task_att3_2'))?.status === 'delivered', { what: 'v2 delivered' });
  });

  it('resends a delivered event (same webhook-id and bytes); refuses another account, an unknown event', async () => {
    answer = { status: 200, body: 'ok', type: 'text/plain' };
    const first = hitsOf('evt_task_att2_1');
    expect(first).toHaveLength(1);
    const other = await ask('webhook.resend', { account_id: 'acct_other', environment: 'test', event_id: 'evt_task_att2_1' });
    expect(other).toMatchObject({ ok: false, error: { code: 'not_found' } });
    const live = await ask('webhook.resend', { account_id: ACCT, environment: 'live', event_id: 'evt_task_att2_1' });
    expect(live).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(await ask('webhook.resend', { account_id: ACCT, environment: 'test', event_id: 'evt_nope' })).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    });

    const r = await ask('webhook.resend', { account_id: ACCT, environment: 'test', event_id: 'evt_task_att2_1' });
    expect(r).toMatchObject({ ok: true, effect: 'scheduled', delivery: { status: 'pending' } });
    const again = await waitFor(() => hitsOf('evt_task_att2_1')[1], { what: 'the resend' });
    expect(again.body).toBe(first[0]!.body);
    const d = await waitFor(
      async () => ((await detail('evt_task_att2_1'))?.status === 'delivered' ? detail('evt_task_att2_1') : undefined),
      {
        what: 'delivered again',
      },
    );
    expect(d.attempts.map((a) => [a.attempt, a.status_code])).toEqual([
      [1, 200],
      [2, 200],
    ]);
    await sleep(500);
    expect(hitsOf('evt_task_att2_1')).toHaveLength(2);
  });
});
