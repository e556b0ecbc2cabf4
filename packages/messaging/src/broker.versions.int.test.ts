/**
 * Mixed versions on the real broker (AMQP_URL): an older and a newer consumer on one queue, as
 * during a rolling update. The older one reads messages with fields added since, holds the message
 * types it does not know in `<queue>.hold`, and a newer one eventually takes them; nothing is
 * dead-lettered unless no consumer could read it within the hold bounds.
 * Every test works in its own namespace and deletes what it declared.
 */
import { connect as amqpConnect, type Channel, type ChannelModel, type GetMessage } from 'amqplib';
import {
  CATALOG,
  EXCHANGES,
  MessageValidationError,
  newMessageId,
  routingKeyFor,
  type ConnectionChanged,
  type MessageDefinition,
  type TaskReconcile,
  type TraceGetReply,
} from '@tes/contracts';
import { AMQP_URL, memoryLogger, uniqueName, waitFor } from '@tes/testing';
import { Broker, type AnyDelivery, type BrokerOptions, type QueueSpec } from './broker.js';
import { HELD_SINCE_HEADER, HOLD_COUNT_HEADER } from './hold.js';

const ACCOUNT = 'acc_versions';

/** task.reconcile as an older release defined it: before `version` was added, its schema strict as every schema is. */
const reconcileBeforeVersion = {
  type: 'object',
  properties: { task_id: { type: 'string', minLength: 1 }, account_id: { type: 'string', minLength: 1 }, reason: { type: 'string' } },
  required: ['task_id', 'account_id', 'reason'],
  additionalProperties: false,
} as const;

/** An older release's catalog: no connection.changed nor trace.get yet, task.reconcile without `version`. */
const OLD_CATALOG: Record<string, MessageDefinition> = {
  ...Object.fromEntries(Object.entries(CATALOG).filter(([type]) => type !== 'connection.changed' && type !== 'trace.get')),
  'task.reconcile': { ...CATALOG['task.reconcile'], schema: reconcileBeforeVersion },
};

/** The account's orchestrator partition: task.reconcile and connection.changed both go there. */
const WORK: QueueSpec = {
  name: 'work',
  exchange: EXCHANGES.commands,
  routingKey: 'orchestrator',
  bindings: [routingKeyFor('task.reconcile', ACCOUNT)],
};
const QUERIES: QueueSpec = {
  name: 'queries',
  exchange: EXCHANGES.commands,
  routingKey: 'executor.queries',
  bindings: [routingKeyFor('trace.get')],
};

const reconcile = (n: number): TaskReconcile => ({ task_id: `task_${n}`, account_id: ACCOUNT, reason: 'sweep', version: n });
const connected: ConnectionChanged = {
  account_id: ACCOUNT,
  environment: 'test',
  user_id: 'user_1',
  service: 'github',
  outcome: 'authorized',
};

/** Short holds, so a test sees several round trips through `<queue>.hold`. */
const FAST_HOLD = { delayMs: 300, maxHolds: 200, maxAgeMs: 60_000 };

describe('Broker across versions (RabbitMQ integration)', () => {
  let ns: string;
  let brokers: Broker[];
  let admin: ChannelModel;
  let adminCh: Channel;
  let deadLetters: string[];

  function broker(source: string, options: Partial<BrokerOptions> = {}): { broker: Broker; lines: () => string[] } {
    const { logger, lines } = memoryLogger(source);
    const b = new Broker({
      url: AMQP_URL,
      source,
      logger,
      namespace: ns,
      hold: FAST_HOLD,
      onDeadLetter: (queue, reason) => deadLetters.push(`${queue} ${reason}`),
      ...options,
    });
    brokers.push(b);
    return { broker: b, lines };
  }

  /** Messages now ready in a queue of this namespace, taken off it. */
  async function drain(queue: string): Promise<GetMessage[]> {
    const out: GetMessage[] = [];
    for (;;) {
      const m = await adminCh.get(`${ns}.${queue}`, { noAck: true });
      if (!m) return out;
      out.push(m);
    }
  }

  const held = (lines: () => string[]) => lines().filter((l) => l.includes('unreadable message held')).length;

  beforeEach(async () => {
    ns = uniqueName('v');
    brokers = [];
    deadLetters = [];
    admin = await amqpConnect(AMQP_URL);
    adminCh = await admin.createChannel();
  });

  afterEach(async () => {
    await Promise.all(brokers.map((b) => b.close(2000)));
    for (const q of [WORK.name, QUERIES.name]) {
      for (const suffix of ['', '.dead', '.hold']) await adminCh.deleteQueue(`${ns}.${q}${suffix}`);
    }
    for (const ex of Object.values(EXCHANGES)) await adminCh.deleteExchange(`${ns}.${ex}`);
    await admin.close();
  });

  it('an old consumer processes a message with an added field and holds a new type until a new consumer processes it; nothing dead-lettered', async () => {
    const producer = broker('new-producer').broker;
    const old = broker('old-consumer', { catalog: OLD_CATALOG });
    const next = broker('new-consumer');
    await Promise.all([producer.connect(), old.broker.connect(), next.broker.connect()]);

    const oldSeen: AnyDelivery[] = [];
    await old.broker.consume(WORK, async (d) => {
      oldSeen.push(d);
    });
    await producer.publish('task.reconcile', reconcile(1), { partitionKey: ACCOUNT });
    const newTypeId = await producer.publish('connection.changed', connected, { partitionKey: ACCOUNT });

    // The added field does not stop the old consumer: it handles the message (and sees the field it ignores).
    await waitFor(() => oldSeen.length === 1, { what: 'the old consumer handling task.reconcile with an added field' });
    expect(oldSeen[0]).toMatchObject({ type: 'task.reconcile', data: reconcile(1) });
    expect(oldSeen[0]!.envelope.v).toBe(1);
    // The new type goes to the hold and comes back to the queue, more than once while only the old consumer is there.
    await waitFor(() => held(old.lines) >= 2, { what: 'connection.changed held twice by the old consumer', timeoutMs: 30_000 });
    expect(oldSeen.map((d) => d.type)).toEqual(['task.reconcile']);

    const newSeen: AnyDelivery[] = [];
    await next.broker.consume(WORK, async (d) => {
      newSeen.push(d);
    });
    await producer.publish('task.reconcile', reconcile(2), { partitionKey: ACCOUNT });

    await waitFor(() => newSeen.some((d) => d.type === 'connection.changed'), {
      what: 'the new consumer handling the held connection.changed',
      timeoutMs: 45_000,
    });
    const taken = newSeen.find((d) => d.type === 'connection.changed')!;
    expect(taken.envelope.id).toBe(newTypeId);
    expect(taken.data).toEqual(connected);
    await waitFor(() => [...oldSeen, ...newSeen].some((d) => d.type === 'task.reconcile' && d.data.task_id === 'task_2'), {
      what: 'the second task.reconcile, by either consumer',
    });

    // Handled once, by the new consumer only; nothing left in the hold, nothing dead-lettered.
    await waitFor(async () => (await old.broker.queueDepth('work')) === 0, { what: 'an empty work queue' });
    expect(oldSeen.some((d) => d.type === 'connection.changed')).toBe(false);
    expect(newSeen.filter((d) => d.type === 'connection.changed')).toHaveLength(1);
    expect(await old.broker.queueDepth('work.hold')).toBe(0);
    expect(await old.broker.queueDepth('work.dead')).toBe(0);
    expect(deadLetters).toEqual([]);
    expect(old.lines().some((l) => l.includes('dead-lettered'))).toBe(false);
  });

  it('reads an envelope without a version and with fields it does not know; sends v: 1 and refuses to send an unknown field', async () => {
    const { broker: b } = broker('reader');
    await b.connect();
    const seen: AnyDelivery[] = [];
    await b.consume(WORK, async (d) => {
      seen.push(d);
    });
    // As an older producer wrote it (no `v`), and with fields a newer one might add at both levels.
    const raw = {
      id: newMessageId(),
      type: 'task.reconcile',
      source: 'raw',
      occurred_at: new Date().toISOString(),
      trace_parent: '00-abc-def-01',
      data: { ...reconcile(3), priority: 'high' },
    };
    adminCh.sendToQueue(`${ns}.work`, Buffer.from(JSON.stringify(raw)), { persistent: true });
    await waitFor(() => seen.length === 1, { what: 'the unversioned message' });
    expect(seen[0]).toMatchObject({ type: 'task.reconcile', data: { ...reconcile(3), priority: 'high' } });
    expect(seen[0]!.envelope.v).toBeUndefined();

    // What this version sends is strict: its envelope carries v: 1, an unknown data field is refused before it leaves.
    await expect(
      b.publish('task.reconcile', { ...reconcile(4), priority: 'high' } as TaskReconcile, { partitionKey: ACCOUNT }),
    ).rejects.toBeInstanceOf(MessageValidationError);
    await b.publish('task.reconcile', reconcile(5), { partitionKey: ACCOUNT });
    await waitFor(() => seen.length === 2, { what: 'the versioned message' });
    expect(seen[1]!.envelope).toMatchObject({ v: 1, data: reconcile(5) });
    expect(await b.queueDepth('work.dead')).toBe(0);
  });

  it('dead-letters as unsupported, after its last allowed hold, a message of a newer envelope version that no consumer reads', async () => {
    const { broker: b, lines } = broker('bounded', { hold: { delayMs: 200, maxHolds: 3, maxAgeMs: 60_000 } });
    await b.connect();
    let handled = 0;
    await b.consume(WORK, async () => {
      handled++;
    });
    const raw = {
      v: 2,
      id: newMessageId(),
      type: 'task.reconcile',
      source: 'future',
      occurred_at: new Date().toISOString(),
      data: reconcile(6),
    };
    const body = JSON.stringify(raw);
    adminCh.sendToQueue(`${ns}.work`, Buffer.from(body), { persistent: true, messageId: raw.id });

    await waitFor(async () => (await b.queueDepth('work.dead')) === 1, { what: 'the dead-lettered message', timeoutMs: 30_000 });
    expect(handled).toBe(0);
    expect(held(lines)).toBe(3);
    expect(deadLetters).toEqual(['work unsupported']);
    const [dead] = await drain('work.dead');
    expect(dead!.content.toString()).toBe(body);
    expect(dead!.properties.messageId).toBe(raw.id);
    expect(dead!.properties.headers?.[HOLD_COUNT_HEADER]).toBe(3);
    expect(typeof dead!.properties.headers?.[HELD_SINCE_HEADER]).toBe('number');
    expect(lines().filter((l) => l.includes('no consumer read it within the hold bounds'))).toHaveLength(1);
    expect(lines().some((l) => l.includes('envelope version 2 is newer than 1'))).toBe(true);
    expect(await b.queueDepth('work.hold')).toBe(0);
  });

  it('a request held by an old consumer keeps its reply-to: the new consumer that takes it answers the waiting requester', async () => {
    const client = broker('gateway').broker;
    const old = broker('old-executor', { catalog: OLD_CATALOG });
    const next = broker('new-executor');
    await Promise.all([client.connect(), old.broker.connect(), next.broker.connect()]);
    await old.broker.consume(QUERIES, async () => {
      throw new Error('the old consumer is never handed a type it does not know');
    });

    const answer = client.request('trace.get', { task_id: 'task_q', account_id: ACCOUNT, environment: 'test' }, { timeoutMs: 40_000 });
    await waitFor(() => held(old.lines) >= 1, { what: 'the request held by the old consumer' });
    await next.broker.consume(QUERIES, async (d) => {
      if (d.type !== 'trace.get') return;
      const reply: TraceGetReply = {
        ok: true,
        trace: {
          task_id: d.data.task_id,
          steps: [{ tool: 'text', action: 'echo', status: 'complete', duration_ms: 1 }],
          total_duration_ms: 1,
        },
      };
      await d.reply(reply);
    });

    expect((await answer).ok).toBe(true);
    expect(await answer).toMatchObject({ trace: { task_id: 'task_q' } });
    expect(deadLetters).toEqual([]);
  });
});
