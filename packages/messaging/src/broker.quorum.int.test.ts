/**
 * AMQP_QUEUE_TYPE=quorum against the real broker: the durable queues a broker declares (work queue,
 * its dead letters, a single-active-consumer partition) are quorum queues, and messages go through
 * them as through classic ones. A queue's type is fixed once it exists: declaring it with the other
 * type is refused, which is why the setting is chosen when a deployment starts.
 */
import { connect as amqpConnect, type Channel, type ChannelModel } from 'amqplib';
import { EXCHANGES, routingKeyFor, type TaskCancel } from '@tes/contracts';
import { AMQP_URL, memoryLogger, rabbitmqctl, uniqueName, vhostOf, waitFor } from '@tes/testing';
import { Broker, type QueueSpec } from './broker.js';
import { queueTypeArguments } from './queue-type.js';

const ACCOUNT = 'acc_quorum';

describe('Broker with quorum queues (RabbitMQ integration)', () => {
  const ns = uniqueName('q');
  const brokers: Broker[] = [];
  let admin: ChannelModel;
  let ch: Channel;
  const spec: QueueSpec = {
    name: 'work',
    exchange: EXCHANGES.commands,
    bindings: [routingKeyFor('task.cancel', ACCOUNT)],
    singleActiveConsumer: true,
  };

  beforeAll(async () => {
    admin = await amqpConnect(AMQP_URL);
    admin.on('error', () => undefined);
  });

  afterAll(async () => {
    await Promise.all(brokers.map((b) => b.close(2000)));
    const cleanup = await admin.createChannel();
    for (const q of ['work', 'work.dead']) await cleanup.deleteQueue(`${ns}.${q}`);
    for (const ex of Object.values(EXCHANGES)) await cleanup.deleteExchange(`${ns}.${ex}`);
    await admin.close();
  });

  /** The type rabbitmqctl lists for each of this test's queues. */
  async function typesOfQueues(): Promise<Record<string, string>> {
    const out = await rabbitmqctl('list_queues', '--vhost', vhostOf(AMQP_URL), 'name', 'type', '-q', '--no-table-headers');
    return Object.fromEntries(
      out
        .split('\n')
        .map((line) => line.split('\t'))
        .filter(([name]) => name?.startsWith(`${ns}.`))
        .map(([name, type]) => [name?.slice(ns.length + 1), type]),
    );
  }

  it('declares quorum queues and delivers through them', async () => {
    const broker = new Broker({
      url: AMQP_URL,
      source: 'quorum-test',
      logger: memoryLogger('q').logger,
      namespace: ns,
      queueType: 'quorum',
    });
    brokers.push(broker);
    await broker.connect();
    const seen: string[] = [];
    await broker.consume(spec, async (d) => {
      if (d.type === 'task.cancel') seen.push(d.data.task_id);
    });
    const cancel = (n: number): TaskCancel => ({ task_id: `task_${n}`, account_id: ACCOUNT, environment: 'test' });
    for (let n = 0; n < 5; n++) await broker.publish('task.cancel', cancel(n), { partitionKey: ACCOUNT });
    await waitFor(() => seen.length === 5, { what: 'five messages through the quorum queue' });
    expect(seen).toEqual(['task_0', 'task_1', 'task_2', 'task_3', 'task_4']);
    expect(await typesOfQueues()).toEqual({ work: 'quorum', 'work.dead': 'quorum' });
  });

  it('cannot change a queue type once the queue exists (RabbitMQ refuses the declare)', async () => {
    ch = await admin.createChannel();
    const failed = new Promise<Error>((resolve) => ch.once('error', resolve));
    await expect(ch.assertQueue(`${ns}.work.dead`, { durable: true, arguments: queueTypeArguments('classic') })).rejects.toThrow(
      /PRECONDITION_FAILED|inequivalent arg 'x-queue-type'/,
    );
    expect((await failed).message).toMatch(/x-queue-type/);
  });
});
