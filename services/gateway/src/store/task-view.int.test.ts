import type { Connection } from 'mongoose';
import { connectMongo, ensureIndexes } from '@tes/store';
import { MONGO_URL, memoryLogger, uniqueName } from '@tes/testing';
import { TaskViewRepository, type TaskViewDoc } from './task-view.repository.js';

/**
 * The read model against the real MongoDB-wire server: a snapshot applies only if it is newer,
 * whatever the order in which the create answer and the task events arrive. Two repositories on
 * two connections stand for the create answer and the event consumer (or two replicas).
 */
describe('task read model (real database)', () => {
  const { logger } = memoryLogger('gateway');
  const dbName = uniqueName('gw_views');
  const conns: Connection[] = [];
  const repos: TaskViewRepository[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const conn = await connectMongo({ url: MONGO_URL, dbName, logger });
      conns.push(conn);
      repos.push(new TaskViewRepository(conn));
    }
    await ensureIndexes(conns[0]!);
  });

  afterAll(async () => {
    await conns[0]?.dropDatabase();
    await Promise.all(conns.map((c) => c.close()));
  });

  const view = (id: string, version: number, status: TaskViewDoc['status']): TaskViewDoc => ({
    _id: id,
    account_id: 'acct_1',
    environment: 'test',
    user_id: null,
    status,
    tool: 'text',
    metadata: {},
    created_at: '2026-01-01T00:00:00.000Z',
    version,
  });
  const stored = (id: string) => repos[0]!.get(id, 'acct_1', 'test');

  it('stores the first version, then each newer one, and ignores an older or equal one', async () => {
    const id = uniqueName('task');
    await repos[0]!.apply(view(id, 1, 'running'));
    await repos[1]!.apply(view(id, 1, 'running'));
    expect(await stored(id)).toMatchObject({ version: 1, status: 'running' });
    await repos[1]!.apply(view(id, 3, 'complete'));
    await repos[0]!.apply(view(id, 2, 'running'));
    await repos[0]!.apply(view(id, 1, 'running'));
    expect(await stored(id)).toMatchObject({ version: 3, status: 'complete' });
  });

  it('keeps a later version that arrives before the first one', async () => {
    const id = uniqueName('task');
    await repos[1]!.apply(view(id, 2, 'complete'));
    await repos[0]!.apply(view(id, 1, 'running'));
    expect(await stored(id)).toMatchObject({ version: 2, status: 'complete' });
  });

  it('ends at the newest version when the first and a later one are applied at the same time', async () => {
    for (let i = 0; i < 20; i++) {
      const id = uniqueName('task');
      await Promise.all([repos[0]!.apply(view(id, 1, 'running')), repos[1]!.apply(view(id, 2, 'complete'))]);
      expect(await stored(id)).toMatchObject({ version: 2, status: 'complete' });
    }
  });

  it('writes a first version once when the same process applies it twice at the same time', async () => {
    const id = uniqueName('task');
    await Promise.all([repos[0]!.apply(view(id, 1, 'running')), repos[0]!.apply(view(id, 1, 'running'))]);
    expect(await stored(id)).toMatchObject({ version: 1, status: 'running' });
  });
});
