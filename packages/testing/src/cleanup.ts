/**
 * Removes what a stack leaves behind once it is stopped: its databases and its broker
 * namespace's durable queues (with their dead-letter queues) and exchanges. Each stack has its
 * own of both, and nothing deleted them: one evening of bench runs left 114 databases (1.4 GB in
 * PostgreSQL, which autovacuum keeps visiting) and 960 idle queues on the machine. The benches
 * call `removeStack`; scripts/test.sh removes the stacks its run listed (`TES_STACK_LOG`).
 */
import { existsSync, readFileSync } from 'node:fs';
import amqp from 'amqplib';
import { MongoClient } from 'mongodb';
import { EXCHANGES, QUEUES } from '@tes/contracts';
import { AMQP_URL, MONGO_URL } from './index.js';
import { SERVICES, stackDatabase, type Stack } from './stack.js';

/** The most partitions a test stack is started with (PARTITIONS): the clean-up removes the queues of up to this many. */
const MOST_TEST_PARTITIONS = 32;

/** The durable queue names every stack declares (the exclusive per-replica queues go with their connection). */
export function durableQueueNames(): string[] {
  const partitioned = [QUEUES.orchestratorPartition, QUEUES.gatewayTaskEvents];
  const single = [QUEUES.executorSteps, QUEUES.executorQueries, QUEUES.vaultRequests, QUEUES.dispatcherTaskEvents, QUEUES.dispatcherAdmin];
  const names = [
    ...single.map((q) => q.name),
    ...partitioned.flatMap((q) => Array.from({ length: MOST_TEST_PARTITIONS }, (_, p) => q(p).name)),
  ];
  return names.flatMap((n) => [n, `${n}.dead`, `${n}.hold`]);
}

/**
 * Drops `databases` and deletes the namespace's queues and exchanges; best effort, never throws.
 * BENCH_KEEP_DB=1 keeps them (to look at a run's documents afterwards).
 */
export async function removeStackData(options: {
  amqpUrl: string;
  mongoUrl: string;
  namespace: string;
  databases: readonly string[];
}): Promise<void> {
  const { namespace } = options;
  if (process.env['BENCH_KEEP_DB'] === '1') {
    process.stderr.write(`kept databases ${options.databases.join(', ')} and namespace ${namespace}\n`);
    return;
  }
  if (options.databases.length > 0) {
    try {
      const client = await MongoClient.connect(options.mongoUrl, { serverSelectionTimeoutMS: 5000 });
      try {
        for (const db of options.databases) await client.db(db).dropDatabase();
      } finally {
        await client.close();
      }
    } catch (err) {
      process.stderr.write(`could not drop the stack's databases: ${String(err)}\n`);
    }
  }
  try {
    const conn = await amqp.connect(options.amqpUrl);
    try {
      const ch = await conn.createChannel();
      for (const q of durableQueueNames()) await ch.deleteQueue(`${namespace}.${q}`);
      for (const x of Object.values(EXCHANGES)) await ch.deleteExchange(`${namespace}.${x}`);
    } finally {
      await conn.close();
    }
  } catch (err) {
    process.stderr.write(`could not delete the stack's queues: ${String(err)}\n`);
  }
}

/** removeStackData for a stack started by `startStack`, after `stopAll`. */
export function removeStack(stack: Stack): Promise<void> {
  return removeStackData({
    amqpUrl: AMQP_URL,
    mongoUrl: stack.mongoUrl,
    namespace: stack.namespace,
    databases: SERVICES.map((s) => stack.envOf(s)['MONGO_DB'] ?? '').filter(Boolean),
  });
}

/** The databases `startStack` gives a namespace's five services. */
export function stackDatabases(namespace: string): string[] {
  return SERVICES.map((s) => stackDatabase(namespace, s));
}

/**
 * Removes every stack listed in `file` (one namespace a line: what `startStack` appends to
 * TES_STACK_LOG); scripts/test.sh calls it once jest is done. Returns how many it removed.
 */
export async function removeListedStacks(file: string): Promise<number> {
  const namespaces = existsSync(file) ? [...new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean))] : [];
  for (const namespace of namespaces) {
    await removeStackData({ amqpUrl: AMQP_URL, mongoUrl: MONGO_URL, namespace, databases: stackDatabases(namespace) });
  }
  return namespaces.length;
}
