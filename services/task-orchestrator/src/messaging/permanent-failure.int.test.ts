import mongoose from 'mongoose';
import { QUEUES, newId, partitionOf, type TaskCreate } from '@tes/contracts';
import { Broker, type PartitionGroup } from '@tes/messaging';
import { connectMongo, ensureIndexes } from '@tes/store';
import { AMQP_URL, MONGO_URL, memoryLogger, uniqueName, waitFor } from '@tes/testing';
import { TaskWriter } from '../domain/task-writer.js';
import { ToolAdmin } from '../domain/tool-admin.js';
import { TaskRepository, type TaskDoc } from '../store/task.repository.js';
import { ToolRepository } from '../store/tool.repository.js';
import { outboxRelay } from './outbox-relay.js';
import { consumePartitions } from './partition.consumer.js';

/** The real repository, whose insert of the task ids in `dropOnce` first fails as a dropped connection does. */
class FlakyInserts extends TaskRepository {
  readonly dropOnce = new Set<string>();

  override async insert(doc: TaskDoc): Promise<boolean> {
    if (this.dropOnce.delete(doc._id)) throw new mongoose.mongo.MongoNetworkError('connection 3 to 127.0.0.1:27017 closed');
    return super.insert(doc);
  }
}

/**
 * Issue 20, finding 5: a create the database refuses for good (a NUL in the prompt, a `$` key in
 * metadata: what the gateway's schema now stops, sent here straight over the broker) was retried
 * by the partition, holding up the account's other messages, and never answered. Now it is
 * answered with invalid_request and dead-lettered after one attempt; a transient failure is
 * still retried.
 */
describe('orchestrator: a message that fails for a permanent reason', () => {
  const { logger, lines } = memoryLogger('orchestrator');
  const namespace = uniqueName('perm');
  let conn: mongoose.Connection;
  let tasks: FlakyInserts;
  let broker: Broker;
  let client: Broker;
  let group: PartitionGroup | undefined;

  beforeAll(async () => {
    conn = await connectMongo({ url: MONGO_URL, dbName: namespace, logger });
    await ensureIndexes(conn);
    tasks = new FlakyInserts(conn);
    const tools = new ToolRepository(conn);
    broker = new Broker({ url: AMQP_URL, source: 'orchestrator', logger, namespace });
    await broker.connect();
    const writer = new TaskWriter({ tasks, tools, logger, stepTimeoutMs: 5000, stallGiveUpAfterMs: 600_000, relay: outboxRelay(broker) });
    group = await consumePartitions(broker, writer, new ToolAdmin(tools, logger), 16, { replica: 'permanent-failure-test', logger });
    client = new Broker({ url: AMQP_URL, source: 'test', logger, namespace });
    await client.connect();
  });

  afterAll(async () => {
    group?.stop();
    await client?.close();
    await broker?.close();
    await conn?.dropDatabase();
    await conn?.close();
  });

  const command = (accountId: string, extra: Partial<TaskCreate> = {}): TaskCreate => ({
    task_id: newId('task'),
    account_id: accountId,
    environment: 'test',
    prompt: 'Echo "hello"',
    user_id: null,
    metadata: {},
    mode: 'live',
    created_at: new Date().toISOString(),
    concurrency_limit: 10,
    ...extra,
  });
  const create = async (cmd: TaskCreate) => {
    const started = performance.now();
    const reply = await client.request('task.create', cmd, { partitionKey: cmd.account_id, timeoutMs: 8000 });
    return { reply, ms: performance.now() - started };
  };
  const deadQueue = (accountId: string) => `${QUEUES.orchestratorPartition(partitionOf(accountId)).name}.dead`;

  it.each([
    ['a $ key in metadata (code 2)', { metadata: { order: { $where: '1' } } }],
    ['a NUL in the prompt (SQLSTATE 22P05)', { prompt: 'Echo "a\u0000b"' }],
  ])('answers invalid_request at once and dead-letters after one attempt: %s', async (_name, extra) => {
    const acct = newId('acct');
    const cmd = command(acct, extra);
    const before = lines().length;
    const deadBefore = await client.queueDepth(deadQueue(acct));

    const { reply, ms } = await create(cmd);
    expect(reply).toEqual({ ok: false, error: { code: 'invalid_request', message: expect.stringMatching(/cannot store/) } });
    expect(ms).toBeLessThan(2000);
    await waitFor(async () => (await client.queueDepth(deadQueue(acct))) === deadBefore + 1, {
      what: 'the create in the dead-letter queue',
    });
    const logged = lines().slice(before);
    expect(logged.filter((l) => l.includes('handler failed'))).toEqual([]);
    const dead = logged.filter((l) => l.includes('message dead-lettered')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(dead).toEqual([expect.objectContaining({ type: 'task.create', attempts: 1, reason: 'permanent' })]);
    expect(await tasks.get(cmd.task_id)).toBeNull();

    // The account's next create is not held up behind it.
    const next = await create(command(acct));
    expect(next.reply.ok).toBe(true);
    expect(next.ms).toBeLessThan(2000);
  });

  it('still retries a transient failure (a dropped database connection) and then creates the task', async () => {
    const acct = newId('acct');
    const cmd = command(acct);
    tasks.dropOnce.add(cmd.task_id);
    const before = lines().length;
    const deadBefore = await client.queueDepth(deadQueue(acct));

    const { reply } = await create(cmd);
    expect(reply).toMatchObject({ ok: true, task: { id: cmd.task_id } });
    const logged = lines().slice(before);
    expect(logged.filter((l) => l.includes('handler failed, message requeued'))).toHaveLength(1);
    expect(logged.filter((l) => l.includes('dead-lettered'))).toEqual([]);
    expect(await client.queueDepth(deadQueue(acct))).toBe(deadBefore);
    expect(await tasks.get(cmd.task_id)).toMatchObject({ _id: cmd.task_id, status: 'running' });
  });
});
