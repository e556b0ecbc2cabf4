/**
 * Changing PARTITIONS on a running group (docs/operations.md "Changing the partition count"), on
 * the real broker: replicas on the new count join while those on the old one still run and
 * publishers on both counts keep sending; the group consumes nothing while its replicas disagree,
 * then the new replicas forward what sits in the wrong partition. Each account's messages form a
 * causal chain of bursts (a burst of messages sent at once, through publishers on either count, and
 * the next burst once all of it was handled, as a step result follows its step): none is lost, no
 * burst handled before the one that caused it, and never two handlers of one account at once.
 */
import { QUEUES, type TaskCancel } from '@tes/contracts';
import { AMQP_URL, memoryLogger, removeStackData, uniqueName, waitFor } from '@tes/testing';
import { Broker } from './broker.js';
import { PartitionGroup } from './partition-group.js';

const BEAT_MS = 200;
const MEMBER_TIMEOUT_MS = 700;
const ACCOUNTS = 24;
const CHAIN = 30;
const BURST = 3;

interface Replica {
  broker: Broker;
  group: PartitionGroup;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

describe('PartitionGroup: changing the partition count (RabbitMQ integration)', () => {
  let ns: string;
  let brokers: Broker[];
  let groups: PartitionGroup[];
  /** Per account, the message numbers in the order they were handled. */
  let handled: Map<string, number[]>;
  /** Accounts with a handler running now, and every time two ran at once. */
  let writing: Set<string>;
  let overlaps: string[];

  beforeEach(() => {
    ns = uniqueName('pcc');
    brokers = [];
    groups = [];
    handled = new Map();
    writing = new Set();
    overlaps = [];
  });

  afterEach(async () => {
    for (const g of groups) g.stop();
    await Promise.all(brokers.map((b) => b.close(2000)));
    await removeStackData({ amqpUrl: AMQP_URL, mongoUrl: '', namespace: ns, databases: [] });
  });

  async function broker(name: string, partitions: number): Promise<Broker> {
    const b = new Broker({ url: AMQP_URL, source: name, logger: memoryLogger(name).logger, namespace: ns, partitions });
    brokers.push(b);
    await b.connect();
    return b;
  }

  async function replica(name: string, partitions: number, previousPartitions?: number): Promise<Replica> {
    const b = await broker(name, partitions);
    const group = await PartitionGroup.start({
      broker: b,
      group: 'count-change',
      replica: name,
      logger: memoryLogger(name).logger,
      queue: QUEUES.orchestratorPartition,
      consume: { prefetch: 8, serial: true },
      beatIntervalMs: BEAT_MS,
      memberTimeoutMs: MEMBER_TIMEOUT_MS,
      previousPartitions,
      handler: () => async (d) => {
        const { account_id, task_id } = d.data as TaskCancel;
        if (writing.has(account_id)) overlaps.push(`${account_id} by ${name}`);
        writing.add(account_id);
        try {
          await sleep(5);
          const list = handled.get(account_id) ?? [];
          list.push(Number(task_id.slice('task_'.length)));
          handled.set(account_id, list);
        } finally {
          writing.delete(account_id);
        }
      },
    });
    groups.push(group);
    return { broker: b, group };
  }

  async function leave(r: Replica): Promise<void> {
    r.group.stop();
    await r.broker.close(2000);
  }

  /**
   * Runs every account's chain: burst n (messages n*10 .. n*10+BURST-1, each through the publisher
   * `via()` picks for it) is published once all of burst n-1 was handled. Resolves when every chain is done.
   */
  async function chains(accounts: string[], via: () => Broker): Promise<void> {
    await Promise.all(
      accounts.map(async (account_id) => {
        for (let n = 0; n < CHAIN; n++) {
          const burst = Array.from({ length: BURST }, (_, j) => n * 10 + j);
          await Promise.all(
            burst.map((m) =>
              via().publish('task.cancel', { task_id: `task_${m}`, account_id, environment: 'test' }, { partitionKey: account_id }),
            ),
          );
          const seen = () => handled.get(account_id) ?? [];
          await waitFor(() => burst.every((m) => seen().includes(m)), {
            timeoutMs: 30_000,
            intervalMs: 10,
            what: `${account_id} burst ${n}`,
          });
          await sleep(Math.random() * 40);
        }
      }),
    );
  }

  function expectEveryChainInOrder(accounts: string[]): void {
    for (const account of accounts) {
      const seen = handled.get(account) ?? [];
      const firsts = seen.filter((n, i) => seen.indexOf(n) === i);
      const bursts = firsts.map((m) => Math.floor(m / 10));
      expect({ account, count: firsts.length, inOrder: bursts.every((b, i) => i === 0 || b >= (bursts[i - 1] ?? 0)) }).toEqual({
        account,
        count: CHAIN * BURST,
        inOrder: true,
      });
    }
    expect(overlaps).toEqual([]);
  }

  const accounts = Array.from({ length: ACCOUNTS }, (_, i) => `acc_count_${i}`);

  it('grows from 4 to 8 partitions while replicas and publishers on both counts run', async () => {
    const a = await replica('a4', 4);
    const b = await replica('b4', 4);
    const oldPublisher = await broker('publisher4', 4);
    const newPublisher = await broker('publisher8', 8);
    let phase: 'old' | 'mixed' | 'new' = 'old';
    const via = () => (phase === 'old' ? oldPublisher : phase === 'new' ? newPublisher : Math.random() < 0.5 ? oldPublisher : newPublisher);
    const done = chains(accounts, via);

    await sleep(400);
    const c = await replica('c8', 8, 4);
    const d = await replica('d8', 8, 4);
    phase = 'mixed';
    // The old replicas hear the new count and stop consuming: no account has two writers.
    await waitFor(() => (a.group.paused && b.group.paused ? true : undefined), { timeoutMs: 5000, what: 'the old replicas to pause' });
    expect(c.group.paused && d.group.paused).toBe(true);
    await sleep(300);
    const stopped = Date.now();
    await Promise.all([leave(a), leave(b)]);
    await waitFor(() => (!c.group.paused && !d.group.paused ? true : undefined), { timeoutMs: 5000, what: 'the new replicas to consume' });
    const resumedAfterMs = Date.now() - stopped;
    phase = 'new';
    await done;

    expectEveryChainInOrder(accounts);
    await waitFor(() => (c.group.owned().length === 4 && d.group.owned().length === 4 ? true : undefined), { timeoutMs: 10_000 });
    // The member timeout after the last old beat, and a beat.
    expect(resumedAfterMs).toBeLessThan(3000);
  }, 90_000);

  it('shrinks from 8 to 4 partitions, draining the queues past the new count', async () => {
    const a = await replica('a8', 8);
    const oldPublisher = await broker('publisher8', 8);
    const newPublisher = await broker('publisher4', 4);
    let phase: 'old' | 'new' = 'old';
    const done = chains(accounts, () => (phase === 'old' ? oldPublisher : newPublisher));

    await sleep(400);
    const c = await replica('c4', 4, 8);
    await waitFor(() => (a.group.paused ? true : undefined), { timeoutMs: 5000, what: 'the old replica to pause' });
    // Published on the old count while nobody consumes: some of it lands in partitions 4..7.
    await sleep(500);
    await leave(a);
    phase = 'new';
    await done;

    expectEveryChainInOrder(accounts);
    expect(c.group.owned()).toEqual([0, 1, 2, 3]);
  }, 90_000);
});
