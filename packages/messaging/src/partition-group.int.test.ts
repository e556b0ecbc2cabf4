/**
 * PartitionGroup on the real broker: replicas joining and leaving share eight single-active-consumer
 * partitions, within one partition of the mean, with one writer per partition at any moment and
 * each account's messages handled in order through every hand-over.
 */
import { QUEUES, partitionOf, type TaskCancel } from '@tes/contracts';
import { AMQP_URL, memoryLogger, removeStackData, uniqueName, waitFor } from '@tes/testing';
import { Broker } from './broker.js';
import { PartitionGroup } from './partition-group.js';

const PARTITIONS = 8;
/** Many partitions on replicas that join one after another: the last ones must not stay short. */
const MANY = 32;
const BEAT_MS = 200;
const MEMBER_TIMEOUT_MS = 700;

interface Replica {
  name: string;
  broker: Broker;
  group: PartitionGroup;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** An account id for each partition: messages of all eight partitions. */
function accountsCoveringEveryPartition(perPartition: number): string[] {
  const out: string[] = [];
  const count = new Map<number, number>();
  for (let i = 0; out.length < PARTITIONS * perPartition; i++) {
    const id = `acc_group_${i}`;
    const p = partitionOf(id, PARTITIONS);
    if ((count.get(p) ?? 0) >= perPartition) continue;
    count.set(p, (count.get(p) ?? 0) + 1);
    out.push(id);
  }
  return out;
}

describe('PartitionGroup (RabbitMQ integration)', () => {
  let ns: string;
  let replicas: Replica[];
  let brokers: Broker[];
  /** Per account, the message numbers in the order they were handled. */
  let handled: Map<string, number[]>;
  /** Partitions with a handler running now, and whether two ever ran at once. */
  let writing: Map<number, string>;
  let overlaps: string[];
  /** Every handling: partition, replica, when it ended. */
  let handlings: { p: number; replica: string; at: number }[];

  beforeEach(() => {
    ns = uniqueName('grp');
    replicas = [];
    brokers = [];
    handled = new Map();
    writing = new Map();
    overlaps = [];
    handlings = [];
  });

  afterEach(async () => {
    for (const r of replicas) r.group.stop();
    await Promise.all(brokers.map((b) => b.close(2000)));
    await removeStackData({ amqpUrl: AMQP_URL, mongoUrl: '', namespace: ns, databases: [] });
  });

  async function startReplica(name: string, partitions = PARTITIONS): Promise<Replica> {
    const broker = new Broker({ url: AMQP_URL, source: name, logger: memoryLogger(name).logger, namespace: ns, partitions });
    brokers.push(broker);
    await broker.connect();
    const group = await PartitionGroup.start({
      broker,
      group: 'test-group',
      replica: name,
      logger: memoryLogger(name).logger,
      queue: QUEUES.orchestratorPartition,
      consume: { prefetch: 8, serial: true },
      beatIntervalMs: BEAT_MS,
      memberTimeoutMs: MEMBER_TIMEOUT_MS,
      handler: (p) => async (d) => {
        const other = writing.get(p);
        if (other !== undefined) overlaps.push(`partition ${p}: ${name} while ${other}`);
        writing.set(p, name);
        try {
          await sleep(3);
          const cancel = d.data as TaskCancel;
          const list = handled.get(cancel.account_id) ?? [];
          list.push(Number(cancel.task_id.slice('task_'.length)));
          handled.set(cancel.account_id, list);
          handlings.push({ p, replica: name, at: Date.now() });
        } finally {
          writing.delete(p);
        }
      },
    });
    const r = { name, broker, group };
    replicas.push(r);
    return r;
  }

  function ownership(): Map<string, number[]> {
    return new Map(replicas.map((r) => [r.name, r.group.owned()]));
  }

  /** Every partition owned by exactly one of `live`, each of them within one partition of the mean. */
  function balancedOver(live: Replica[], partitions = PARTITIONS): boolean {
    const owned = live.map((r) => r.group.owned());
    const all = owned.flat();
    if (all.length !== partitions || new Set(all).size !== partitions) return false;
    const mean = partitions / live.length;
    return owned.every((o) => Math.abs(o.length - mean) < 1);
  }

  async function publishInOrder(accounts: string[], perAccount: number, gapMs: number): Promise<void> {
    const publisher = new Broker({
      url: AMQP_URL,
      source: 'publisher',
      logger: memoryLogger('publisher').logger,
      namespace: ns,
      partitions: PARTITIONS,
    });
    brokers.push(publisher);
    await publisher.connect();
    for (let n = 0; n < perAccount; n++) {
      await Promise.all(
        accounts.map((account_id) =>
          publisher.publish('task.cancel', { task_id: `task_${n}`, account_id, environment: 'test' }, { partitionKey: account_id }),
        ),
      );
      await sleep(gapMs);
    }
  }

  /** For every change of writer on a partition, the time between the old one's last handling and the new one's first, sorted. */
  function handOverPauses(): number[] {
    const out: number[] = [];
    for (let p = 0; p < PARTITIONS; p++) {
      const on = handlings.filter((h) => h.p === p);
      for (let i = 1; i < on.length; i++) {
        const [a, b] = [on[i - 1], on[i]];
        if (a && b && a.replica !== b.replica) out.push(b.at - a.at);
      }
    }
    return out.sort((x, y) => x - y);
  }

  /** Each account's messages were all handled, the first handling of each in publishing order. */
  function expectEveryMessageInOrder(accounts: string[], perAccount: number): void {
    for (const account of accounts) {
      const seen = handled.get(account) ?? [];
      const firsts = seen.filter((n, i) => seen.indexOf(n) === i);
      expect({ account, firsts }).toEqual({ account, firsts: Array.from({ length: perAccount }, (_, i) => i) });
    }
  }

  it('spreads the partitions of one replica over three as they join, within one of the mean, one writer at a time, in order', async () => {
    const a = await startReplica('a');
    await waitFor(() => (a.group.owned().length === PARTITIONS ? true : undefined), { timeoutMs: 10_000 });

    const accounts = accountsCoveringEveryPartition(2);
    const traffic = publishInOrder(accounts, 40, 25);
    await sleep(300);
    const b = await startReplica('b');
    const c = await startReplica('c');
    const started = Date.now();
    await waitFor(() => (balancedOver([a, b, c]) ? true : undefined), { timeoutMs: 15_000 });
    const balancedAfterMs = Date.now() - started;
    await traffic;
    await waitFor(() => (accounts.every((acc) => new Set(handled.get(acc)).size === 40) ? true : undefined), { timeoutMs: 20_000 });

    expect(overlaps).toEqual([]);
    expectEveryMessageInOrder(accounts, 40);
    // A hand-over pauses its partition: from the old writer's last handling to the new one's first.
    const pauses = handOverPauses();
    expect(pauses.length).toBeGreaterThan(0);
    process.stdout.write(
      `partition-group: ${pauses.length} hand-overs under traffic, pause p50 ${pauses[Math.floor(pauses.length / 2)]} ms, max ${pauses.at(-1)} ms\n`,
    );
    expect(pauses.at(-1)).toBeLessThan(2000);
    expect([...ownership().values()].map((o) => o.length).sort()).toEqual([2, 3, 3]);
    // Two beats of stable membership, then a hand-over or two per partition moved: a few beats.
    expect(balancedAfterMs).toBeLessThan(10_000);
    expect(a.group.liveMembers()).toBe(3);
  }, 60_000);

  it('spreads 32 partitions over six replicas joining one after another, each within one of the mean', async () => {
    const joined: Replica[] = [];
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f']) {
      joined.push(await startReplica(name, MANY));
      await sleep(300);
    }
    const started = Date.now();
    await waitFor(() => (balancedOver(joined, MANY) ? true : undefined), { timeoutMs: 30_000, what: 'six replicas balanced' });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(joined.map((r) => r.group.owned().length).sort()).toEqual([5, 5, 5, 5, 6, 6]);
  }, 60_000);

  it('takes over the partitions of a replica that leaves, and gives a new one its share', async () => {
    const a = await startReplica('a');
    const b = await startReplica('b');
    const c = await startReplica('c');
    await waitFor(() => (balancedOver([a, b, c]) ? true : undefined), { timeoutMs: 15_000 });

    const accounts = accountsCoveringEveryPartition(1);
    const traffic = publishInOrder(accounts, 60, 20);
    await sleep(200);
    // b goes away without a word (its connection closes, as when its process dies).
    b.group.stop();
    await b.broker.close(0);
    replicas = replicas.filter((r) => r !== b);
    const left = Date.now();
    await waitFor(() => (balancedOver([a, c]) ? true : undefined), { timeoutMs: 15_000 });
    const rebalancedAfterMs = Date.now() - left;

    const d = await startReplica('d');
    await waitFor(() => (balancedOver([a, c, d]) ? true : undefined), { timeoutMs: 15_000 });
    expect(d.group.owned().length).toBeGreaterThanOrEqual(2);

    await traffic;
    await waitFor(() => (accounts.every((acc) => new Set(handled.get(acc)).size === 60) ? true : undefined), { timeoutMs: 20_000 });
    expect(overlaps).toEqual([]);
    expectEveryMessageInOrder(accounts, 60);
    // The member timeout (0.7 s here), two stable beats, then the hand-overs.
    expect(rebalancedAfterMs).toBeLessThan(10_000);
  }, 60_000);
});
