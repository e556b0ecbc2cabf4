/**
 * Graceful stop: close() finishes the in-flight message, acks it, and leaves everything
 * else in the queue, in process and in a real child process stopped with SIGTERM.
 * Every test works in its own namespace and deletes what it declared.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { connect as amqpConnect, type Channel, type ChannelModel } from 'amqplib';
import { EXCHANGES, routingKeyFor, type TaskCancel, type TaskReply } from '@tes/contracts';
import { AMQP_URL, memoryLogger, uniqueName, waitFor } from '@tes/testing';
import { Broker, type ConsumeOptions, type Delivery, type QueueSpec } from './broker.js';

const ACCOUNT = 'acc_shutdown';
const SPEC: QueueSpec = { name: 'work', exchange: EXCHANGES.commands, bindings: [routingKeyFor('task.cancel', ACCOUNT)] };
/** The built package (the test command runs `tsc -b` first). */
const DIST = path.resolve(__dirname, '..', 'dist', 'index.js');

function cancelData(n: number): TaskCancel {
  return { task_id: `task_${n}`, account_id: ACCOUNT, environment: 'test' };
}

function taskNumber(d: Delivery): number {
  return Number((d.data as TaskCancel).task_id.slice('task_'.length));
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

describe('Broker graceful stop (RabbitMQ integration)', () => {
  let ns: string;
  let brokers: Broker[];
  let admin: ChannelModel;
  let adminCh: Channel;

  function newBroker(source: string): Broker {
    const b = new Broker({ url: AMQP_URL, source, logger: memoryLogger(source).logger, namespace: ns });
    brokers.push(b);
    return b;
  }

  beforeEach(async () => {
    ns = uniqueName('t');
    brokers = [];
    admin = await amqpConnect(AMQP_URL);
    adminCh = await admin.createChannel();
  });

  afterEach(async () => {
    await Promise.all(brokers.map((b) => b.close(2000)));
    await adminCh.deleteQueue(`${ns}.${SPEC.name}`);
    await adminCh.deleteQueue(`${ns}.${SPEC.name}.dead`);
    for (const ex of Object.values(EXCHANGES)) await adminCh.deleteExchange(`${ns}.${ex}`);
    await admin.close();
  });

  /** close() mid-message: the in-flight one completes and is acked, the rest stays queued for the next consumer. */
  async function stopMidMessage(options: ConsumeOptions): Promise<void> {
    const N = 6;
    const first = newBroker('first');
    await first.connect();
    const started: number[] = [];
    const completed: number[] = [];
    await first.consume(
      SPEC,
      async (d) => {
        started.push(taskNumber(d));
        await sleep(500);
        completed.push(taskNumber(d));
      },
      options,
    );
    for (let i = 1; i <= N; i++) await first.publish('task.cancel', cancelData(i), { partitionKey: ACCOUNT });

    await waitFor(() => started.length === 1, { what: 'first message in flight' });
    expect(completed).toEqual([]);
    await first.close(10_000);
    // close() waited for the in-flight message; it started nothing else.
    expect(started).toEqual([1]);
    expect(completed).toEqual([1]);

    const second = newBroker('second');
    await second.connect();
    // The unacked rest is requeued as the first broker's channel closes: all but the acked one.
    await waitFor(async () => (await second.queueDepth('work')) === N - 1, { what: `${N - 1} messages back in the queue` });
    const drained: number[] = [];
    await second.consume(SPEC, async (d) => {
      drained.push(taskNumber(d));
    });
    await waitFor(() => drained.length >= N - 1, { what: 'the second consumer drains the queue' });
    await sleep(200); // a duplicate of message 1 (lost ack) would arrive right behind
    expect(drained).toEqual([2, 3, 4, 5, 6]);
    expect(await second.queueDepth('work')).toBe(0);
    expect(await second.queueDepth('work.dead')).toBe(0);
    // Nothing ran in the closed broker after close() resolved.
    expect(started).toEqual([1]);
  }

  it('close() lets the in-flight message finish and acks it, and leaves queued messages for the next consumer (prefetch 1)', async () => {
    await stopMidMessage({ prefetch: 1 });
  });

  it('close() of a serial consumer finishes the in-flight message and starts none of its prefetched ones, which stay queued', async () => {
    await stopMidMessage({ serial: true, prefetch: 16 });
  });

  it('a reply sent by the in-flight handler reaches the requester although close() was called mid-handler', async () => {
    const server = newBroker('server');
    await server.connect();
    let started = false;
    const cancelled = (id: string): TaskReply => ({
      ok: true,
      version: 2,
      task: { id, status: 'cancelled', cancelled_at: '2024-01-01T00:00:00.000Z' },
    });
    await server.consume(SPEC, async (d) => {
      started = true;
      await sleep(500);
      if (d.type === 'task.cancel') await d.reply(cancelled(d.data.task_id));
    });
    const client = newBroker('client');
    await client.connect();

    const answer = client.request('task.cancel', cancelData(1), { partitionKey: ACCOUNT, timeoutMs: 5000 });
    await waitFor(() => started, { what: 'the handler in flight' });
    await server.close(10_000);
    await expect(answer).resolves.toEqual(cancelled('task_1'));
    expect(await client.queueDepth('work')).toBe(0);
  });

  it('a real child process stopped with SIGTERM mid-message exits 0 and loses none of 20 messages', async () => {
    expect(existsSync(DIST)).toBe(true);
    const N = 20;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'broker-sigterm-'));
    const journal = path.join(dir, 'handled.log');
    const script = path.join(dir, 'slow-consumer.mjs');
    writeFileSync(
      script,
      `
import { appendFileSync } from 'node:fs';
import { Broker } from ${JSON.stringify(pathToFileURL(DIST).href)};
const [url, namespace, journal] = process.argv.slice(2);
const log = (level) => (msg, meta) => process.stderr.write(JSON.stringify({ level, msg, ...meta }) + '\\n');
const logger = { debug: () => {}, info: () => {}, warn: log('warn'), error: log('error'), child: () => logger };
const broker = new Broker({ url, source: 'slow-consumer', logger, namespace });
await broker.connect();
await broker.consume(${JSON.stringify(SPEC)}, async (d) => {
  appendFileSync(journal, 'start ' + d.envelope.id + '\\n');
  await new Promise((r) => setTimeout(r, 300));
  appendFileSync(journal, 'done ' + d.envelope.id + '\\n');
}, { serial: true, prefetch: 4 });
process.once('SIGTERM', () => {
  appendFileSync(journal, 'sigterm\\n');
  broker.close(10000).then(() => process.exit(0), (err) => { process.stderr.write(String(err) + '\\n'); process.exit(1); });
});
process.stdout.write('ready\\n');
`,
    );

    try {
      const publisher = newBroker('publisher');
      await publisher.connect();
      await publisher.declare(SPEC);
      const ids: string[] = [];
      for (let i = 1; i <= N; i++) ids.push(await publisher.publish('task.cancel', cancelData(i), { partitionKey: ACCOUNT }));

      const child = spawn(process.execPath, [script, AMQP_URL, ns, journal], { stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr.on('data', (c: Buffer) => (output += c.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

      const lines = () => (existsSync(journal) ? readFileSync(journal, 'utf8').trim().split('\n') : []);
      // Mid-message: a few done, and one started but not finished.
      await waitFor(
        () => {
          if (child.exitCode !== null) throw new Error(`child exited early:\n${output}`);
          const l = lines();
          const done = l.filter((x) => x.startsWith('done ')).length;
          return done >= 3 && l.at(-1)?.startsWith('start ');
        },
        { what: 'the child mid-message', intervalMs: 10, timeoutMs: 20_000 },
      );
      const inFlight = lines().at(-1)!.slice('start '.length);
      child.kill('SIGTERM');
      const code = await exited;
      if (code !== 0) throw new Error(`child exited with ${String(code)}:\n${output}`);
      expect(code).toBe(0);
      expect(output).not.toContain('"level":"error"');

      const journalLines = lines();
      const afterTerm = journalLines.slice(journalLines.indexOf('sigterm') + 1);
      // The in-flight message completed; nothing new started after SIGTERM.
      expect(afterTerm).toEqual([`done ${inFlight}`]);
      const doneByChild = journalLines.filter((x) => x.startsWith('done ')).map((x) => x.slice('done '.length));
      expect(doneByChild).toContain(inFlight);

      // A second consumer drains what is left.
      const drainer = newBroker('drainer');
      await drainer.connect();
      const drained: string[] = [];
      await drainer.consume(SPEC, async (d) => {
        drained.push(d.envelope.id);
      });
      await waitFor(() => new Set([...doneByChild, ...drained]).size === N, { what: 'all 20 handled', timeoutMs: 15_000 });
      expect(new Set([...doneByChild, ...drained])).toEqual(new Set(ids));
      // Acked by the child means not redelivered: no duplicates either.
      expect(drained.filter((id) => doneByChild.includes(id))).toEqual([]);
      expect(await drainer.queueDepth('work')).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
