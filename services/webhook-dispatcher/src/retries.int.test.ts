/**
 * Failures and the retry schedule against real receivers: 500, slow past the timeout,
 * redirect, closed connection, refused connection; 5 attempts then undeliverable; redeliver.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort, startReceiver, waitFor } from '@tes/testing';
import { redeliver } from './domain/deliveries.use-case.js';
import { sleep, startHarness, taskEvent, type Harness } from '../test/fixtures.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

describe('webhook retries (compressed schedule 200,200,200,200; timeout 500 ms)', () => {
  let h: Harness;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    h = await startHarness('wd_retries', {
      WEBHOOK_TIMEOUT_MS: '500',
      WEBHOOK_RETRY_SCHEDULE_MS: '200,200,200,200',
      CLAIM_MARGIN_MS: '1000',
    });
  });

  afterAll(async () => {
    await h?.close();
    for (const r of receivers) await r.close();
  });

  async function receiver(): Promise<Receiver> {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  }

  it('makes 5 attempts spaced by the schedule, records each, then marks the event undeliverable', async () => {
    const r = await receiver();
    r.behave('fail');
    await h.configure('acc_fail', 'test', r.url);
    await h.publish(taskEvent('completed', { task: 'task_fail', account: 'acc_fail', version: 1 }));

    const ev = await waitFor(
      async () => {
        const e = await h.dispatcher.repos.events.get('evt_task_fail_1');
        return e?.status === 'undeliverable' ? e : null;
      },
      { timeoutMs: 10_000, what: 'undeliverable' },
    );
    expect(ev).toMatchObject({ attempts_made: 5, next_attempt_at: null, last_status_code: 500 });
    expect(r.received).toHaveLength(5);
    const gaps = r.received.slice(1).map((req, i) => req.receivedAt - (r.received[i]?.receivedAt ?? 0));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(190);
    // The same event id on every attempt: receivers dedup on it.
    expect(new Set(r.received.map((req) => req.headers['webhook-id']))).toEqual(new Set(['evt_task_fail_1']));

    const attempts = await h.dispatcher.repos.attempts.listFor(['evt_task_fail_1']);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5]);
    for (const a of attempts) {
      expect(a).toMatchObject({ ok: false, status_code: 500, error: 'HTTP 500' });
      expect(a.latency_ms).toBeGreaterThanOrEqual(0);
      expect(a.latency_ms).toBeLessThan(500);
    }
    await sleep(500);
    expect(r.received).toHaveLength(5);
  });

  it('an operator redeliver gives an undeliverable event a fresh schedule', async () => {
    const r = receivers[0] as Receiver;
    r.behave('ok');
    const view = await redeliver(h.dispatcher.repos, 'evt_task_fail_1');
    expect(view.status).toBe('pending');
    const ev = await waitFor(
      async () => {
        const e = await h.dispatcher.repos.events.get('evt_task_fail_1');
        return e?.status === 'delivered' ? e : null;
      },
      { what: 'delivered after redeliver' },
    );
    expect(ev).toMatchObject({ attempts_made: 6, schedule_base: 5, last_status_code: 200 });
    expect(r.received).toHaveLength(6);
    await expect(redeliver(h.dispatcher.repos, 'evt_task_fail_1')).rejects.toThrow('only undeliverable or no_endpoint');
  });

  it('counts a slow answer past the timeout, a redirect, a closed connection and a refused connection as failures, with status, latency and error', async () => {
    const slow = await receiver();
    slow.behave('slow', 1500);
    const redirect = await receiver();
    redirect.behave('redirect');
    const closing = await receiver();
    closing.behave('close');
    // The redirect target: must never be called.
    let followed = 0;
    const target = http.createServer((_req, res) => {
      followed += 1;
      res.writeHead(200).end();
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const port = (target.address() as AddressInfo).port;
    const redirectTo = `http://127.0.0.1:${port}/elsewhere`;
    // startReceiver redirects to a fixed place; point this endpoint at a server of ours that redirects to `target`.
    const redirecting = http.createServer((_req, res) => res.writeHead(307, { Location: redirectTo }).end());
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    const refusedPort = await freePort();

    const cases = [
      { account: 'acc_slow', url: slow.url },
      { account: 'acc_redirect', url: redirect.url },
      { account: 'acc_redirect307', url: `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/hook` },
      { account: 'acc_close', url: closing.url },
      { account: 'acc_refused', url: `http://127.0.0.1:${refusedPort}/hook` },
    ];
    for (const c of cases) {
      await h.configure(c.account, 'test', c.url);
      await h.publish(taskEvent('completed', { task: `task_${c.account}`, account: c.account, version: 1 }));
    }
    const firstAttempt = async (account: string) =>
      waitFor(() => h.dispatcher.repos.attempts.get(`evt_task_${account}_1`, 1), { timeoutMs: 5000, what: `attempt 1 of ${account}` });

    const timedOut = await firstAttempt('acc_slow');
    expect(timedOut).toMatchObject({ ok: false, status_code: null, error: 'timeout: no answer within 500 ms' });
    expect(timedOut.latency_ms).toBeGreaterThanOrEqual(490);
    expect(timedOut.latency_ms).toBeLessThan(1400);

    expect(await firstAttempt('acc_redirect')).toMatchObject({ ok: false, status_code: 302, error: 'redirect 302 not followed' });
    expect(await firstAttempt('acc_redirect307')).toMatchObject({ ok: false, status_code: 307, error: 'redirect 307 not followed' });
    expect(await firstAttempt('acc_close')).toMatchObject({ ok: false, status_code: null, error: 'connection closed by the receiver' });
    expect(await firstAttempt('acc_refused')).toMatchObject({ ok: false, status_code: null, error: 'connection refused' });

    for (const c of cases) {
      const ev = await h.dispatcher.repos.events.get(`evt_task_${c.account}_1`);
      // Never delivered: retrying, or already through its five quick attempts.
      expect(['pending', 'undeliverable']).toContain(ev?.status);
      expect(ev?.attempts_made).toBeGreaterThanOrEqual(1);
    }
    expect(followed).toBe(0);
    expect(redirect.received.length).toBeGreaterThanOrEqual(1);
    expect(closing.received.length).toBeGreaterThanOrEqual(1);

    await new Promise((r) => target.close(r));
    await new Promise((r) => redirecting.close(r));
  });
});
