/**
 * Integration tests of the RabbitMQ transport against the real broker (AMQP_URL):
 * publish/consume, malformed messages, handler failures, request/reply.
 * Every test works in its own namespace and deletes what it declared.
 */
import { connect as amqpConnect, type Channel, type ChannelModel, type GetMessage } from 'amqplib';
import { EXCHANGES, ReplyValidationError, newMessageId, routingKeyFor, type TaskCancel, type TraceGetReply } from '@tes/contracts';
import { AMQP_URL, deferred, memoryLogger, queueCounts as rabbitQueueCounts, uniqueName, vhostOf, waitFor } from '@tes/testing';
import { Broker, BrokerUnavailableError, RequestTimeoutError, type AnyDelivery, type ConsumeOptions, type QueueSpec } from './broker.js';
import { PoisonMessageError } from './permanent-failure.js';

const ACCOUNT = 'acc_int';

function cancelData(n: number | string): TaskCancel {
  return { task_id: `task_${n}`, account_id: ACCOUNT, environment: 'test' };
}

/** A queue that receives task.cancel for ACCOUNT (commands exchange, its partition's key). */
function cancelQueue(name: string): QueueSpec {
  return { name, exchange: EXCHANGES.commands, bindings: [routingKeyFor('task.cancel', ACCOUNT)] };
}

/** A queue that receives trace.get (commands exchange, unpartitioned key). */
function traceQueue(name: string): QueueSpec {
  return { name, exchange: EXCHANGES.commands, bindings: [routingKeyFor('trace.get')] };
}

/** Ready and unacknowledged counts of one queue of this run's virtual host, read from the broker itself. */
function queueCounts(fullName: string): Promise<{ ready: number; unacked: number } | undefined> {
  return rabbitQueueCounts(vhostOf(AMQP_URL), fullName);
}

describe('Broker (RabbitMQ integration)', () => {
  let ns: string;
  let brokers: Broker[];
  let admin: ChannelModel;
  let adminCh: Channel;
  let queues: string[];

  function newBroker(source = 'broker-test'): Broker {
    const b = new Broker({ url: AMQP_URL, source, logger: memoryLogger(source).logger, namespace: ns });
    brokers.push(b);
    return b;
  }

  async function consume(b: Broker, spec: QueueSpec, handler: (d: AnyDelivery) => Promise<void>, opts?: ConsumeOptions): Promise<void> {
    queues.push(spec.name);
    await b.consume(spec, handler, opts);
  }

  /** Dead-lettered messages of a queue, taken off `<queue>.dead`. */
  async function drainDead(queue: string): Promise<GetMessage[]> {
    const out: GetMessage[] = [];
    for (;;) {
      const m = await adminCh.get(`${ns}.${queue}.dead`, { noAck: true });
      if (!m) return out;
      out.push(m);
    }
  }

  beforeEach(async () => {
    ns = uniqueName('t');
    brokers = [];
    queues = [];
    admin = await amqpConnect(AMQP_URL);
    adminCh = await admin.createChannel();
  });

  afterEach(async () => {
    await Promise.all(brokers.map((b) => b.close(2000)));
    for (const q of new Set(queues)) {
      await adminCh.deleteQueue(`${ns}.${q}`);
      await adminCh.deleteQueue(`${ns}.${q}.dead`);
    }
    for (const ex of Object.values(EXCHANGES)) await adminCh.deleteExchange(`${ns}.${ex}`);
    await admin.close();
  });

  it('delivers a confirmed publish to the handler with validated data and the full envelope, and acks only after the handler resolves', async () => {
    const broker = newBroker('publisher-svc');
    await broker.connect();
    const gate = deferred();
    const received: AnyDelivery[] = [];
    let handlerDone = false;
    await consume(broker, cancelQueue('work'), async (d) => {
      received.push(d);
      await gate.promise;
      handlerDone = true;
    });

    const messageId = newMessageId();
    const before = Date.now();
    const id = await broker.publish('task.cancel', cancelData(1), { partitionKey: ACCOUNT, messageId });
    expect(id).toBe(messageId);

    await waitFor(() => received.length === 1, { what: 'delivery' });
    const d = received[0]!;
    expect(d.type).toBe('task.cancel');
    expect(d.data).toEqual(cancelData(1));
    expect(d.redelivered).toBe(false);
    expect(d.envelope).toMatchObject({
      id: messageId,
      type: 'task.cancel',
      source: 'publisher-svc',
      partition_key: ACCOUNT,
      data: cancelData(1),
    });
    expect(Date.parse(d.envelope.occurred_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(new Date(d.envelope.occurred_at).toISOString()).toBe(d.envelope.occurred_at);

    // The handler has not resolved: the message is held unacknowledged, not acked on receipt.
    expect(await queueCounts(`${ns}.work`)).toEqual({ ready: 0, unacked: 1 });
    expect(handlerDone).toBe(false);

    gate.resolve();
    await waitFor(async () => (await queueCounts(`${ns}.work`))?.unacked === 0, { what: 'ack after the handler resolved' });
    expect(handlerDone).toBe(true);
    expect(await broker.queueDepth('work')).toBe(0);
    expect(await broker.queueDepth('work.dead')).toBe(0);
    expect(received).toHaveLength(1);
  });

  // A message of a type this version does not know is not malformed: it is held (broker.versions.int.test.ts).
  it('dead-letters malformed messages (not JSON, invalid data, no envelope) to <queue>.dead and keeps consuming the next good message', async () => {
    const { logger, lines } = memoryLogger('malformed');
    const broker = new Broker({ url: AMQP_URL, source: 'malformed', logger, namespace: ns });
    brokers.push(broker);
    await broker.connect();
    const handled: AnyDelivery[] = [];
    await consume(broker, cancelQueue('work'), async (d) => {
      handled.push(d);
    });

    const envelope = (type: string, data: object) => ({
      id: newMessageId(),
      type,
      source: 'raw',
      occurred_at: new Date().toISOString(),
      data,
    });
    const bad = [
      Buffer.from('this is {not json'),
      Buffer.from(JSON.stringify(envelope('task.cancel', { task_id: 't', account_id: ACCOUNT }))),
      Buffer.from(JSON.stringify(envelope('task.cancel', { task_id: 't', account_id: ACCOUNT, environment: 'production' }))),
      Buffer.from(JSON.stringify({ hello: 'no envelope' })),
    ];
    for (const body of bad) adminCh.sendToQueue(`${ns}.work`, body, { persistent: true });

    const goodId = await broker.publish('task.cancel', cancelData('good'), { partitionKey: ACCOUNT });
    await waitFor(() => handled.length === 1, { what: 'the good message' });
    expect(handled[0]!.envelope.id).toBe(goodId);

    await waitFor(async () => (await broker.queueDepth('work.dead')) === bad.length, { what: 'dead-lettered messages' });
    const dead = await drainDead('work');
    expect(dead.map((m) => m.content.toString())).toEqual(bad.map((b) => b.toString()));
    for (const m of dead) {
      const death = (m.properties.headers?.['x-death'] as { reason: string; queue: string }[])[0]!;
      expect(death).toMatchObject({ reason: 'rejected', queue: `${ns}.work` });
    }
    expect(await broker.queueDepth('work')).toBe(0);
    expect(lines().filter((l) => l.includes('malformed message dead-lettered'))).toHaveLength(bad.length);

    // Still consuming after the bad ones.
    await broker.publish('task.cancel', cancelData('after'), { partitionKey: ACCOUNT });
    await waitFor(() => handled.length === 2, { what: 'a message after the malformed ones' });
    expect(handled.map((d) => d.data)).toEqual([cancelData('good'), cancelData('after')]);
    expect(broker.isConnected).toBe(true);
  });

  it('dead-letters at once a message whose handler throws PoisonMessageError', async () => {
    const broker = newBroker();
    await broker.connect();
    let calls = 0;
    await consume(
      broker,
      cancelQueue('work'),
      async () => {
        calls++;
        throw new PoisonMessageError('never going to work');
      },
      { maxAttempts: 5 },
    );
    const id = await broker.publish('task.cancel', cancelData(1), { partitionKey: ACCOUNT });

    await waitFor(async () => (await broker.queueDepth('work.dead')) === 1, { what: 'dead-lettered poison message' });
    expect(await queueCounts(`${ns}.work`)).toEqual({ ready: 0, unacked: 0 });
    expect(calls).toBe(1);
    const [dead] = await drainDead('work');
    expect(dead!.properties.messageId).toBe(id);
    expect((dead!.properties.headers?.['x-death'] as { count: number }[])[0]!.count).toBe(1);
  });

  it('dead-letters at once, and reports as permanent, a message the database refused to store', async () => {
    const reasons: string[] = [];
    const broker = new Broker({
      url: AMQP_URL,
      source: 'broker-test',
      logger: memoryLogger('broker-test').logger,
      namespace: ns,
      onDeadLetter: (queue, reason) => reasons.push(`${queue} ${reason}`),
    });
    brokers.push(broker);
    await broker.connect();
    let calls = 0;
    await consume(
      broker,
      cancelQueue('work'),
      async () => {
        calls++;
        // What the driver throws when FerretDB refuses a key (code 2, BadValue).
        throw Object.assign(new Error(`invalid key: "$x" (key must not start with '$' sign)`), { name: 'MongoServerError', code: 2 });
      },
      { maxAttempts: 5 },
    );
    await broker.publish('task.cancel', cancelData(1), { partitionKey: ACCOUNT });

    await waitFor(async () => (await broker.queueDepth('work.dead')) === 1, { what: 'dead-lettered refused message' });
    expect(calls).toBe(1);
    expect(reasons).toEqual(['work permanent']);
    await drainDead('work');
  });

  it('requeues a message whose handler throws a plain Error and processes it once it succeeds (twice failing, then ok)', async () => {
    const broker = newBroker();
    await broker.connect();
    const seen: { redelivered: boolean; ok: boolean }[] = [];
    await consume(
      broker,
      cancelQueue('work'),
      async (d) => {
        const ok = seen.length >= 2;
        seen.push({ redelivered: d.redelivered, ok });
        if (!ok) throw new Error(`transient failure ${seen.length}`);
      },
      { maxAttempts: 5 },
    );
    await broker.publish('task.cancel', cancelData(1), { partitionKey: ACCOUNT });

    await waitFor(() => seen.some((s) => s.ok), { what: 'successful third attempt' });
    await waitFor(async () => (await queueCounts(`${ns}.work`))?.unacked === 0, { what: 'ack' });
    expect(seen).toEqual([
      { redelivered: false, ok: false },
      { redelivered: true, ok: false },
      { redelivered: true, ok: true },
    ]);
    expect(await broker.queueDepth('work')).toBe(0);
    expect(await broker.queueDepth('work.dead')).toBe(0);
  });

  it('dead-letters a message whose handler always throws after maxAttempts attempts', async () => {
    const broker = newBroker();
    await broker.connect();
    let calls = 0;
    await consume(
      broker,
      cancelQueue('work'),
      async () => {
        calls++;
        throw new Error('always broken');
      },
      { maxAttempts: 3 },
    );
    const id = await broker.publish('task.cancel', cancelData(1), { partitionKey: ACCOUNT });

    await waitFor(async () => (await broker.queueDepth('work.dead')) === 1, { what: 'dead-lettered message' });
    // Gone from the work queue (neither ready nor unacked): no further attempt is possible.
    expect(await queueCounts(`${ns}.work`)).toEqual({ ready: 0, unacked: 0 });
    expect(calls).toBe(3);
    const [dead] = await drainDead('work');
    expect(dead!.properties.messageId).toBe(id);
  });

  it('rejects queueDepth of a queue that does not exist and keeps its connection: the consumers stay attached, publishes confirm', async () => {
    const { logger, lines } = memoryLogger('depth');
    const broker = new Broker({ url: AMQP_URL, source: 'depth', logger, namespace: ns });
    brokers.push(broker);
    await broker.connect();
    const received: string[] = [];
    queues.push('work');
    const handle = await broker.consume(cancelQueue('work'), async (d) => {
      received.push(d.envelope.id);
    });
    const attached = handle.attachment();

    await expect(broker.queueDepth('no-such-queue')).rejects.toThrow(/NOT_FOUND/);
    const id = await broker.publish('task.cancel', cancelData(1), { partitionKey: ACCOUNT });
    await waitFor(() => received.includes(id), { what: 'the delivery' });

    // The same attachment throughout: the connection was never lost and recovered.
    expect(handle.attachment()).toBe(attached);
    expect(broker.isConnected).toBe(true);
    expect(lines().filter((l) => l.includes('broker disconnected'))).toEqual([]);
  });

  it('opens a new publish channel when the broker closes it alone (a declare that clashes), and publishes confirm again', async () => {
    const { logger, lines } = memoryLogger('clash');
    const broker = new Broker({ url: AMQP_URL, source: 'clash', logger, namespace: ns });
    brokers.push(broker);
    await broker.connect();
    const received: string[] = [];
    queues.push('work', 'clash');
    await broker.consume(cancelQueue('work'), async (d) => {
      received.push(d.envelope.id);
    });
    // A queue of the same name with other arguments: the broker answers the declare with
    // PRECONDITION_FAILED and closes the channel it came on, the publish channel, not the connection.
    await adminCh.assertQueue(`${ns}.clash`, { durable: false });
    await expect(broker.declare({ name: 'clash', exchange: EXCHANGES.commands, bindings: [] })).rejects.toThrow(/PRECONDITION_FAILED/);

    let id = '';
    await waitFor(
      async () => {
        id = await broker.publish('task.cancel', cancelData(2), { partitionKey: ACCOUNT }).catch(() => '');
        return id !== '';
      },
      { what: 'a confirmed publish after the channel closed', timeoutMs: 10_000 },
    );
    await waitFor(() => received.includes(id), { what: 'the delivery' });
    expect(broker.isConnected).toBe(true);
    expect(lines().filter((l) => l.includes('broker disconnected'))).toEqual([]);
    expect(lines().some((l) => l.includes('publish channel closed alone'))).toBe(true);
  });

  it('opens a new reply channel when its channel dies alone, and request() gets answers again', async () => {
    const server = newBroker('executor');
    await server.connect();
    await consume(server, traceQueue('queries'), async (d) => {
      if (d.type !== 'trace.get') throw new PoisonMessageError('unexpected');
      await d.reply(traceOf(d.data.task_id, d.envelope.source));
    });
    const client = newBroker('gateway');
    await client.connect();
    expect(await client.request('trace.get', cancelData(1), { timeoutMs: 5000 })).toEqual(traceOf('task_1', 'gateway'));

    // The channel closing under the broker object, as a protocol error on it would.
    await (client as unknown as { replyChannel: Channel }).replyChannel.close();
    let answer: TraceGetReply | undefined;
    await waitFor(
      async () => {
        answer = await client.request('trace.get', cancelData(2), { timeoutMs: 2000 }).catch(() => undefined);
        return answer !== undefined;
      },
      { what: 'an answer after the reply channel closed', timeoutMs: 10_000 },
    );
    expect(answer).toEqual(traceOf('task_2', 'gateway'));
    expect(client.isConnected).toBe(true);
  });

  /** A trace.get answer naming the task and, as its one step's tool, who asked. */
  const traceOf = (taskId: string, from: string): TraceGetReply => ({
    ok: true,
    trace: { task_id: taskId, steps: [{ tool: from, action: 'echo', status: 'complete', duration_ms: 1 }], total_duration_ms: 1 },
  });

  it('resolves request() with the body the consumer passes to delivery.reply()', async () => {
    const server = newBroker('executor');
    await server.connect();
    await consume(server, traceQueue('queries'), async (d) => {
      if (d.type !== 'trace.get') throw new PoisonMessageError('unexpected');
      await d.reply(traceOf(d.data.task_id, d.envelope.source));
    });
    const client = newBroker('gateway');
    await client.connect();

    const answer = await client.request('trace.get', cancelData(7), { timeoutMs: 5000 });
    expect(answer).toEqual(traceOf('task_7', 'gateway'));

    // Concurrent requests each get their own answer.
    const answers = await Promise.all([1, 2, 3, 4, 5].map((n) => client.request('trace.get', cancelData(n), { timeoutMs: 5000 })));
    expect(answers.map((a) => a.trace.task_id)).toEqual(['task_1', 'task_2', 'task_3', 'task_4', 'task_5']);
  });

  it('rejects request() with ReplyValidationError naming the field when the reply does not match its schema', async () => {
    const server = newBroker('executor');
    await server.connect();
    await consume(server, traceQueue('queries'), async (d) => {
      if (d.type !== 'trace.get') throw new PoisonMessageError('unexpected');
      // What an out-of-date replier might send: the type system would refuse it, the wire does not.
      await d.reply({ ok: true, task_id: d.data.task_id } as never);
    });
    const client = newBroker('gateway');
    await client.connect();

    const err = await client.request('trace.get', cancelData(8), { timeoutMs: 5000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ReplyValidationError);
    expect((err as Error).message).toBe('bad reply to trace.get: trace is required');
  });

  it('dead-letters, unhandled, a message that does not belong on a queue with a routing key', async () => {
    const server = newBroker('executor');
    await server.connect();
    const handled: string[] = [];
    // A queue declared for executor.queries that someone also bound task.cancel's key to.
    const spec = {
      ...traceQueue('strict'),
      routingKey: 'executor.queries',
      bindings: [routingKeyFor('trace.get'), routingKeyFor('task.cancel', ACCOUNT)],
    };
    await consume(server, spec, async (d) => {
      handled.push(d.type);
    });
    const client = newBroker('orchestrator');
    await client.connect();
    await client.publish('task.cancel', cancelData(9), { partitionKey: ACCOUNT });
    await waitFor(async () => (await queueCounts(`${ns}.strict.dead`))?.ready === 1, { what: 'the dead-lettered task.cancel' });
    expect(handled).toEqual([]);
  });

  it('rejects request() with RequestTimeoutError after about timeoutMs when nobody consumes the queue', async () => {
    const setup = newBroker('setup');
    await setup.connect();
    queues.push('queries');
    await setup.declare(traceQueue('queries')); // the queue exists, its consumer is down

    const timeoutMs = 700;
    const started = Date.now();
    const err = await setup.request('trace.get', cancelData(1), { timeoutMs }).then(
      () => undefined,
      (e: unknown) => e,
    );
    const elapsed = Date.now() - started;
    expect(err).toBeInstanceOf(RequestTimeoutError);
    expect(err).not.toBeInstanceOf(BrokerUnavailableError);
    expect(elapsed).toBeGreaterThanOrEqual(timeoutMs - 20);
    expect(elapsed).toBeLessThan(timeoutMs + 1000);
  });
});
