import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { AMQP_URL, MONGO_URL, OwnMongo, rabbitmqctl, removeListedStacks, removeStack, startStack, vhostOf } from '@tes/testing';

/** What the broker and the database hold of one namespace, read from themselves. */
async function leftovers(namespace: string, mongoUrl = MONGO_URL): Promise<{ queues: string[]; exchanges: string[]; databases: string[] }> {
  const vhost = vhostOf(AMQP_URL);
  const names = async (what: string) =>
    (await rabbitmqctl(what, '--vhost', vhost, 'name', '-q', '--no-table-headers'))
      .split('\n')
      .filter((n) => n.startsWith(`${namespace}.`));
  const client = await MongoClient.connect(mongoUrl);
  try {
    const { databases } = await client.db('admin').admin().listDatabases({ nameOnly: true });
    return {
      queues: await names('list_queues'),
      exchanges: await names('list_exchanges'),
      databases: databases.map((d) => d.name).filter((n) => n.startsWith(namespace)),
    };
  } finally {
    await client.close();
  }
}

/**
 * The benches remove each stack's databases, queues and exchanges when they stop it (left
 * behind, an evening of runs piled up 1.4 GB and 960 queues; packages/testing/src/cleanup.ts). The names
 * removed are computed, so this checks them against what a real stack declared.
 */
describe('bench cleanup', () => {
  it('leaves nothing of a stopped stack in the broker or the database', async () => {
    const stack = await startStack({ env: { '*': { LOG_LEVEL: 'warn' } } });
    await stack.stopAll();
    const before = await leftovers(stack.namespace);
    expect(before.queues.length).toBeGreaterThanOrEqual(20);
    expect(before.queues).toContain(`${stack.namespace}.orchestrator.p7.dead`);
    expect(before.exchanges.length).toBe(3);
    expect(before.databases.length).toBeGreaterThanOrEqual(4);

    await removeStack(stack);
    expect(await leftovers(stack.namespace)).toEqual({ queues: [], exchanges: [], databases: [] });
  }, 120_000);

  it('lists each stack in TES_STACK_LOG, and removes the listed ones afterwards (scripts/test.sh)', async () => {
    const log = path.join(mkdtempSync(path.join(os.tmpdir(), 'stacks-')), 'stacks.txt');
    const saved = process.env['TES_STACK_LOG'];
    process.env['TES_STACK_LOG'] = log;
    try {
      const stack = await startStack({ env: { '*': { LOG_LEVEL: 'warn' } } });
      await stack.stopAll();
      expect(readFileSync(log, 'utf8')).toBe(`${stack.namespace}\n`);
      expect((await leftovers(stack.namespace)).databases.length).toBeGreaterThanOrEqual(4);
      expect(await removeListedStacks(log)).toBe(1);
      expect(await leftovers(stack.namespace)).toEqual({ queues: [], exchanges: [], databases: [] });
    } finally {
      if (saved === undefined) delete process.env['TES_STACK_LOG'];
      else process.env['TES_STACK_LOG'] = saved;
    }
  }, 120_000);

  // The benchmarks run their stack on a FerretDB of their own (bench/lib/own-database.ts).
  const ownUnavailable = OwnMongo.unavailable('ferretdb');
  (ownUnavailable ? it.skip : it)(
    'puts a stack started with mongoUrl on that server alone, and removes it from there',
    async () => {
      const root = mkdtempSync(path.join(os.tmpdir(), 'own-mongo-'));
      const own = new OwnMongo(root, { kind: 'ferretdb', name: 'cleanup' });
      try {
        await own.start();
        const stack = await startStack({ mongoUrl: own.url, env: { '*': { LOG_LEVEL: 'warn' } } });
        await stack.stopAll();
        expect(stack.mongoUrl).toBe(own.url);
        expect(stack.adminEnv['MONGO_URL']).toBe(own.url);
        expect((await leftovers(stack.namespace, own.url)).databases.length).toBeGreaterThanOrEqual(4);
        expect((await leftovers(stack.namespace)).databases).toEqual([]);

        await removeStack(stack);
        expect(await leftovers(stack.namespace, own.url)).toEqual({ queues: [], exchanges: [], databases: [] });
      } finally {
        await own.destroy();
        rmSync(root, { recursive: true, force: true });
      }
    },
    180_000,
  );
});
