import type { Connection } from 'mongoose';
import { connectMongo } from '@tes/store';
import { MONGO_URL, memoryLogger, uniqueName } from '@tes/testing';
import { TaskRepository } from './task.repository.js';

/**
 * Clearing published outboxes against the real MongoDB-wire server. After a broker outage a
 * partition has hundreds of them at once; on FerretDB v1 one bulkWrite of that many updates
 * never returns (each update holds a PostgreSQL connection until the command ends, and the
 * pool runs out), which froze whole orchestrator partitions in the chaos suite.
 */
describe('task repository: clearing published outboxes (real database)', () => {
  const { logger } = memoryLogger('task-orchestrator');
  const dbName = uniqueName('orch_outbox');
  let conn: Connection;
  let tasks: TaskRepository;

  beforeAll(async () => {
    conn = await connectMongo({ url: MONGO_URL, dbName, logger });
    tasks = new TaskRepository(conn);
  });

  afterAll(async () => {
    await conn?.dropDatabase();
    await conn?.close();
  });

  it('clears 120 outboxes at once, each only at the version that was published', async () => {
    const ids = Array.from({ length: 120 }, (_, i) => `task_clear_${i}`);
    await conn.collection('tasks').insertMany(ids.map((id) => ({ _id: id, version: 2, outbox: [{ id: `msg_${id}` }] }) as never));
    // The first task was written again (version 3) after its outbox went out: its new outbox stays.
    const published = ids.map((id, i) => ({ id, version: i === 0 ? 1 : 2 }));

    await tasks.clearOutboxes(published);

    const docs = await conn
      .collection<{ _id: string; outbox: unknown[] }>('tasks')
      .find({}, { projection: { outbox: 1 } })
      .toArray();
    const kept = docs.filter((d) => d.outbox.length > 0).map((d) => d._id);
    expect(docs).toHaveLength(120);
    expect(kept).toEqual(['task_clear_0']);
  }, 30_000);
});
