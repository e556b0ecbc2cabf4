/**
 * Heartbeat leases with the spec's 60 s lease (timeout 30 s + margin 30 s), against the real
 * database: a holder whose beat stops is taken over within 15 s; a holder whose beat writes are
 * late, or a database that stalls for everyone, never gets a live holder's attempt sent twice.
 */
import net from 'node:net';
import { MONGO_URL, startReceiver, waitFor } from '@tes/testing';
import { GONE_AFTER_ROUNDS } from './scheduling/holder-liveness.js';
import { sleep, startHarness, taskEvent, type Harness } from '../test/fixtures.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

const SPEC_LEASE = { WEBHOOK_TIMEOUT_MS: '30000', CLAIM_MARGIN_MS: '30000', HEARTBEAT_INTERVAL_MS: '2000' };

describe('a holder whose heartbeat is late, then stops (beat 2 s, lease 60 s)', () => {
  let h: Harness;
  let receiver: Receiver;
  let beating: NodeJS.Timeout | undefined;

  beforeAll(async () => {
    h = await startHarness('wd_beats', SPEC_LEASE);
    receiver = await startReceiver();
  });

  afterAll(async () => {
    clearInterval(beating);
    await h?.close();
    await receiver?.close();
  });

  it('is not taken over while its beats come late but come, and is taken over within 15 s once they stop', async () => {
    await h.configure('acc_slow', 'test', receiver.url);
    const beats = h.dispatcher.mongo.collection('dispatcher_beats');
    // Another holder, alive but slow: its beat write lands every 4 s instead of every 2 s.
    let beat = 1;
    await beats.insertOne({ _id: 'slow-holder', beat, stopped: false, at: new Date() } as never);
    beating = setInterval(() => {
      void beats.updateOne({ _id: 'slow-holder' } as never, { $set: { beat: ++beat, at: new Date() } });
    }, 4000);
    // It has claimed attempt 1 of an event (its POST "in flight").
    await h.dispatcher.mongo.collection('attempt_claims').insertOne({
      _id: 'evt_task_slow_1:1',
      event_id: 'evt_task_slow_1',
      attempt: 1,
      holder: 'slow-holder',
      claimed_at: new Date(),
    } as never);
    await h.publish(taskEvent('completed', { task: 'task_slow', account: 'acc_slow', version: 1 }));
    await waitFor(async () => (await h.dispatcher.repos.events.get('evt_task_slow_1')) !== null, { what: 'the event stored' });

    // Long enough for a dozen of the reader's rounds: a detector that counted late beats as gone would fire.
    await sleep(24_000);
    expect(receiver.received).toHaveLength(0);
    expect(h.logLines().some((l) => l.includes('a dispatcher stopped beating'))).toBe(false);

    clearInterval(beating);
    const stoppedAt = Date.now();
    const ev = await waitFor(
      async () => {
        const e = await h.dispatcher.repos.events.get('evt_task_slow_1');
        return e?.status === 'delivered' ? e : null;
      },
      { timeoutMs: 30_000, intervalMs: 100, what: 'the takeover' },
    );
    const took = (ev.delivered_at?.getTime() ?? 0) - stoppedAt;
    expect(took).toBeLessThan(15_000);
    // Not before its beat had stayed unchanged for the reader's rounds.
    expect(took).toBeGreaterThanOrEqual(2000 * (GONE_AFTER_ROUNDS - 1));
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual(['evt_task_slow_1']);
    const claims = await h.dispatcher.repos.claims.listFor('evt_task_slow_1');
    expect(claims.map((c) => c._id)).toEqual(['evt_task_slow_1:1', 'evt_task_slow_1:1:retry-1']);
  }, 90_000);
});

/** A TCP proxy to the database that can hold every byte, both ways, for a while (a stalled server), then deliver them. */
async function stallingProxy(port: number): Promise<{ url: string; stall(): void; resume(): void; close(): Promise<void> }> {
  let stalled = false;
  const held: (() => void)[] = [];
  const sockets = new Set<net.Socket>();
  const forward = (from: net.Socket, to: net.Socket) =>
    from.on('data', (c: Buffer) => {
      if (stalled) held.push(() => to.write(c));
      else to.write(c);
    });
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    forward(client, upstream);
    forward(upstream, client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = new URL(MONGO_URL);
  url.host = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  url.searchParams.set('directConnection', 'true');
  return {
    url: url.toString(),
    stall: () => (stalled = true),
    resume() {
      stalled = false;
      for (const send of held.splice(0)) send();
    },
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('a database that stalls for everyone (beat 2 s, lease 60 s)', () => {
  let h: Harness;
  let receiver: Receiver;
  let proxy: Awaited<ReturnType<typeof stallingProxy>>;

  beforeAll(async () => {
    proxy = await stallingProxy(Number(new URL(MONGO_URL).port || 27017));
    h = await startHarness('wd_stall', { ...SPEC_LEASE, MONGO_URL: proxy.url });
    receiver = await startReceiver();
  });

  afterAll(async () => {
    proxy?.resume();
    await h?.close();
    await proxy?.close();
    await receiver?.close();
  });

  it('never makes another live replica send an attempt in flight again: its beats stalled, but so did the reader', async () => {
    await h.configure('acc_stall', 'test', receiver.url);
    receiver.behave('slow', 25_000);
    await h.publish(taskEvent('completed', { task: 'task_stall', account: 'acc_stall', version: 1 }));
    await waitFor(() => receiver.received.length === 1, { what: 'the attempt in flight' });
    // A second replica that would take the attempt over if it counted the first one gone.
    await h.addReplica();
    await sleep(3000);

    proxy.stall();
    await sleep(2000 * GONE_AFTER_ROUNDS + 6000);
    proxy.resume();

    const ev = await waitFor(
      async () => {
        const e = await h.dispatcher.repos.events.get('evt_task_stall_1');
        return e?.status === 'delivered' ? e : null;
      },
      { timeoutMs: 40_000, intervalMs: 200, what: 'the slow attempt delivered' },
    );
    expect(ev.attempts_made).toBe(1);
    await sleep(2000 * GONE_AFTER_ROUNDS);
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual(['evt_task_stall_1']);
    const claims = await h.dispatcher.repos.claims.listFor('evt_task_stall_1');
    expect(claims.map((c) => c._id)).toEqual(['evt_task_stall_1:1']);
    expect(h.logLines().some((l) => l.includes('a dispatcher stopped beating'))).toBe(false);
  }, 120_000);
});
