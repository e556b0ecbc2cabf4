/**
 * The built service as real processes (dist/main.js): configured with the real CLI, fed by a
 * Broker publishing task.event, delivering to a real receiver; graceful SIGTERM with a
 * delivery in flight; SIGKILL mid-delivery and a second process taking the attempt over.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generate } from 'selfsigned';
import mongoose from 'mongoose';
import { Broker } from '@tes/messaging';
import { KeyRing } from '@tes/sealing';
import {
  AMQP_URL,
  MONGO_URL,
  REPO_ROOT,
  freePort,
  memoryLogger,
  startReceiver,
  startService,
  uniqueName,
  waitFor,
  waitReady,
  type ServiceProcess,
} from '@tes/testing';
import { createRepositories, type Repositories } from './store/repositories.js';
import { FAST_ENV, b64Hmac, deleteTopology, dropDatabase, hexHmac, taskEvent, webhookOf } from '../test/fixtures.js';
import { DEVELOPMENT_KEYS } from './secret-keys.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

describe('webhook-dispatcher as a process', () => {
  const ns = uniqueName('wd_proc');
  const db = uniqueName('wd_proc');
  let receiver: Receiver;
  let publisher: Broker;
  let conn: mongoose.Connection;
  let repos: Repositories;
  let secret: string;
  const procs: ServiceProcess[] = [];

  async function start(extraEnv: Record<string, string> = {}): Promise<{ proc: ServiceProcess; port: number }> {
    const port = await freePort();
    const proc = startService('webhook-dispatcher', {
      AMQP_URL,
      MONGO_URL,
      MONGO_DB: db,
      AMQP_NAMESPACE: ns,
      OPS_PORT: String(port),
      LOG_LEVEL: 'info',
      ...FAST_ENV,
      SHUTDOWN_TIMEOUT_MS: '5000',
      ...extraEnv,
    });
    procs.push(proc);
    await waitReady(port, proc);
    return { proc, port };
  }

  async function delivered(eventId: string) {
    return waitFor(
      async () => {
        const e = await repos.events.get(eventId);
        return e?.status === 'delivered' ? e : null;
      },
      { timeoutMs: 15_000, what: `${eventId} delivered` },
    );
  }

  beforeAll(async () => {
    receiver = await startReceiver();
    const cli = path.join(REPO_ROOT, 'services', 'webhook-dispatcher', 'dist', 'cli.js');
    const env = { ...process.env, MONGO_URL, MONGO_DB: db, OUTBOUND_ALLOW_PRIVATE: 'true' };
    execFileSync(process.execPath, [cli, 'webhooks', 'set', '--account', 'acc_proc', '--env', 'test', '--url', receiver.url], { env });
    const init = JSON.parse(execFileSync(process.execPath, [cli, 'secrets', 'init', '--account', 'acc_proc'], { env }).toString()) as {
      webhook_secrets: { test: string };
    };
    secret = init.webhook_secrets.test;
    conn = await mongoose.createConnection(MONGO_URL, { dbName: db }).asPromise();
    repos = createRepositories(conn, KeyRing.parse(DEVELOPMENT_KEYS));
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

  it('delivers a signed task.complete, and on SIGTERM finishes the delivery in flight before exiting 0', async () => {
    const { proc, port } = await start();
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);

    receiver.behave('slow', 1000);
    const event = taskEvent('completed', { task: 'task_proc', account: 'acc_proc', version: 1, result: { rows: 2 } });
    await publisher.publish('task.event', event, { partitionKey: 'acc_proc', messageId: 'evt_task_proc_1' });
    await waitFor(() => receiver.received.length === 1, { what: 'the delivery to start' });
    const code = await proc.stop('SIGTERM');
    expect(code).toBe(0);

    const ev = await repos.events.get('evt_task_proc_1');
    expect(ev).toMatchObject({ status: 'delivered', attempts_made: 1 });
    const req = receiver.received[0];
    if (!req) throw new Error('no request');
    expect(webhookOf(req.rawBody)).toEqual({
      event: 'task.complete',
      task_id: 'task_proc',
      timestamp: expect.any(String),
      data: { rows: 2 },
    });
    expect(req.headers['x-service-signature']).toBe(hexHmac(secret, req.rawBody));
    const signed = `evt_task_proc_1.${String(req.headers['webhook-timestamp'])}.${req.rawBody}`;
    expect(req.headers['webhook-signature']).toBe(`v1,${b64Hmac(Buffer.from(secret.slice(6), 'base64'), signed)}`);
    expect(proc.output()).not.toContain(secret);
    expect(proc.output()).toContain('webhook delivered');
  });

  it('loses nothing when killed mid-delivery: a second process redelivers after the lease, with the same webhook-id', async () => {
    const first = await start();
    receiver.received.length = 0;
    receiver.behave('slow', 1500);
    await publisher.publish('task.event', taskEvent('completed', { task: 'task_kill', account: 'acc_proc', version: 1 }), {
      partitionKey: 'acc_proc',
      messageId: 'evt_task_kill_1',
    });
    await waitFor(() => receiver.received.length === 1, { what: 'the first attempt in flight' });
    await first.proc.stop('SIGKILL');
    expect((await repos.events.get('evt_task_kill_1'))?.status).toBe('pending');

    await start();
    const ev = await delivered('evt_task_kill_1');
    expect(ev.attempts_made).toBe(1);
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual(['evt_task_kill_1', 'evt_task_kill_1']);
    for (const r of receiver.received) expect(r.headers['x-service-signature']).toBe(hexHmac(secret, r.rawBody));
    const claims = await repos.claims.listFor('evt_task_kill_1');
    expect(claims.map((c) => c._id)).toEqual(['evt_task_kill_1:1', 'evt_task_kill_1:1:retry-1']);
  });

  it('delivers a live event over verified https to a host of WEBHOOK_ALLOWED_HOSTS', async () => {
    // Only the replica that allows localhost may run (another would refuse it at delivery time).
    for (const p of procs) expect(await p.stop('SIGTERM')).not.toBe(1);
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keySize: 2048,
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }] }],
    });
    const dir = mkdtempSync(path.join(tmpdir(), 'wd-tls-'));
    const caFile = path.join(dir, 'ca.pem');
    writeFileSync(caFile, pems.cert);
    const got: { headers: Record<string, unknown>; body: string }[] = [];
    const server = https.createServer({ cert: pems.cert, key: pems.private }, (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        got.push({ headers: req.headers, body });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `https://localhost:${(server.address() as AddressInfo).port}/hooks`;
      const cli = path.join(REPO_ROOT, 'services', 'webhook-dispatcher', 'dist', 'cli.js');
      const env = { ...process.env, MONGO_URL, MONGO_DB: db, WEBHOOK_ALLOWED_HOSTS: 'localhost' };
      execFileSync(process.execPath, [cli, 'webhooks', 'set', '--account', 'acc_proc', '--env', 'live', '--url', url], { env });
      const live = (
        JSON.parse(execFileSync(process.execPath, [cli, 'secrets', 'init', '--account', 'acc_proc'], { env }).toString()) as {
          webhook_secrets: { live: string };
        }
      ).webhook_secrets.live;

      await start({ WEBHOOK_ALLOWED_HOSTS: 'localhost', NODE_EXTRA_CA_CERTS: caFile });
      await publisher.publish('task.event', taskEvent('completed', { task: 'task_live', account: 'acc_proc', env: 'live', version: 1 }), {
        partitionKey: 'acc_proc',
        messageId: 'evt_task_live_1',
      });
      await delivered('evt_task_live_1');
      expect(got).toHaveLength(1);
      expect(got[0]?.headers['x-service-signature']).toBe(hexHmac(live, got[0]?.body ?? ''));
      expect(webhookOf(got[0]?.body ?? '{}').task_id).toBe('task_live');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
