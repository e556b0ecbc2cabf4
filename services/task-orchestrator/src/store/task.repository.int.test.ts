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
    // A slow-command threshold turns command monitoring on (the count of commands below); nothing is that slow.
    conn = await connectMongo({ url: MONGO_URL, dbName, logger, slowCommandMs: 60_000 });
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

  it('clears 120 ended outboxes in one command per 50, each only at the version that was published, those without the flag too', async () => {
    const col = conn.collection('tasks');
    await col.deleteMany({});
    const ids = Array.from({ length: 120 }, (_, i) => `task_ended_${i}`);
    const base = { account_id: 'acct_1', status: 'complete', version: 2, outputs: [] };
    for (const id of ids.slice(1)) await tasks.insert({ ...base, _id: id, outbox: [{ id: `msg_${id}` }] } as never);
    // Written before the flag existed: an outbox, no has_outbox.
    await col.insertOne({ ...base, _id: ids[0], outbox: [{ id: 'msg_legacy' }] } as never);
    // A task published at version 1 that is at version 2 now: its outbox stays.
    const published = ids.map((id, i) => ({ id, version: i === 1 ? 1 : 2 }));

    const commands: string[] = [];
    const client = conn.getClient();
    const onCommand = (e: { commandName: string }) => commands.push(e.commandName);
    client.on('commandStarted', onCommand);
    try {
      await tasks.clearOutboxes(published, { ended: true });
    } finally {
      client.off('commandStarted', onCommand);
    }

    const docs = await col.find<{ _id: string; outbox: unknown[]; has_outbox?: boolean }>({}).toArray();
    expect(docs.filter((d) => d.outbox.length > 0).map((d) => d._id)).toEqual([ids[1]]);
    expect(docs.filter((d) => d.has_outbox === true).map((d) => d._id)).toEqual([ids[1]]);
    // Three updateMany, and the first chunk (the legacy task and the newer version among them) by id.
    expect(commands.filter((c) => c === 'update')).toHaveLength(3 + 50);
  }, 30_000);

  it('finds unsent outboxes by the has_outbox flag, and those written before the flag on its first sweep', async () => {
    const col = conn.collection('tasks');
    await col.deleteMany({});
    const old = new Date(Date.now() - 60_000);
    const base = { account_id: 'acct_1', status: 'complete', version: 1, outputs: [] };
    // Written by this repository: the flag follows the outbox.
    await tasks.insert({ ...base, _id: 'task_unsent', outbox: [{ id: 'm1' }] } as never);
    await tasks.insert({ ...base, _id: 'task_sent', outbox: [] } as never);
    await col.updateMany({}, { $set: { updated_at: old } });
    // Written before the flag existed: an outbox, no has_outbox.
    await col.insertOne({ ...base, _id: 'task_legacy', outbox: [{ id: 'm2' }], updated_at: old } as never);

    const first = await tasks.findNeedingAttention(new Date(0), 100);
    expect(first.map((t) => t._id).sort()).toEqual(['task_legacy', 'task_unsent']);
    const flags = await col.find({}, { projection: { has_outbox: 1 } }).toArray();
    expect(Object.fromEntries(flags.map((d) => [d._id, d['has_outbox']]))).toEqual({
      task_unsent: true,
      task_sent: false,
      task_legacy: undefined,
    });

    // Later sweeps read the flag only; a cleared outbox drops out.
    await tasks.clearOutboxes([{ id: 'task_unsent', version: 1 }]);
    await col.updateMany({}, { $set: { updated_at: old } });
    await tasks.insert({ ...base, _id: 'task_unsent_2', outbox: [{ id: 'm3' }] } as never);
    await col.updateOne({ _id: 'task_unsent_2' } as never, { $set: { updated_at: old } });
    const later = await tasks.findNeedingAttention(new Date(0), 100);
    expect(later.map((t) => t._id)).toEqual(['task_unsent_2']);
  }, 30_000);
});
