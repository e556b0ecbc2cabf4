import { QUEUES, partitionOf, type Envelope, type MessageType, type PartitionBeat } from '@tes/contracts';
import type { Logger } from '@tes/logger';
import type { Broker, ConsumeOptions, ConsumerHandle, Delivery, Handler, QueueMessageType, QueueSpec } from './broker.js';

export interface PartitionGroupOptions<Q extends QueueSpec> {
  broker: Broker;
  /** The group's name: the replicas of one service consuming one family of partition queues. */
  group: string;
  /** This process, unique in the group (a host name and pid, say). */
  replica: string;
  /** Partition `p`'s queue; declared single-active-consumer here. */
  queue: (p: number) => Q;
  handler: (p: number) => Handler<QueueMessageType<Q>>;
  consume: ConsumeOptions;
  logger: Logger;
  /** Before a partition is handed on, while this replica is still its active consumer: a writer's last bookkeeping. */
  beforeRelease?: (p: number) => Promise<void>;
  /**
   * The partition count the deployment is changing from (PARTITIONS_PREVIOUS), during a change of
   * PARTITIONS: this replica listens for a member timeout before it consumes anything, and, when
   * the count shrinks, drains the queues past the new count to where their messages now belong.
   */
  previousPartitions?: number | undefined;
  /** How often each replica announces itself (and probes, and balances). */
  beatIntervalMs?: number;
  /** A replica not heard from for this long is counted gone. */
  memberTimeoutMs?: number;
}

const DEFAULT_BEAT_MS = 1000;
/** Three and a half beats: one or two late beats do not drop a replica. */
const DEFAULT_MEMBER_TIMEOUT_MS = 3500;
/** Beats of an unchanged membership before anyone hands partitions on: a new replica has subscribed everywhere. */
const STABLE_BEATS = 2;

/** What routing a delivery needs of it, whatever its type. */
interface Routed {
  type: MessageType;
  data: unknown;
  envelope: Envelope<unknown>;
  forward: Delivery['forward'];
}

interface Member {
  at: number;
  partitions: number;
  active: readonly number[];
}

/**
 * The replicas of a service sharing one family of single-active-consumer partition queues.
 *
 * Every replica subscribes to every partition, so the broker alone decides each partition's one
 * active consumer and fails it over at once when its holder dies (the standby line). What the
 * broker does not do is spread them: the first replica up holds them all. So each replica beats
 * every second (`partition.beat`: who it is, its partition count, what it is active on), learns
 * where it is active from the messages it receives, probes the partitions nobody claims (the probe
 * reaches the active consumer, which then claims it), and, once the membership has been stable for
 * two beats, a replica active on more than ceil(P / live replicas) partitions releases the excess
 * (ConsumerHandle.release: the message in hand finishes, the rest goes back in order, the next in
 * line becomes active); while a replica holds fewer than floor(P / N), the fullest hands one on
 * too. Released partitions move down the line until they reach a replica under the bound, so
 * ownership ends within one partition of the mean. Never two writers at once: that is
 * the broker's single-active-consumer guarantee, and a release waits for the last write.
 *
 * The partition count may change on a running system (docs/operations.md): replicas that hear a
 * member with another count stop consuming altogether until the group agrees again (two counts
 * would give one account two writers), and a message that arrives in a partition its key does not
 * map to under this replica's count (a publisher still on the old count) is forwarded to its own.
 */
export class PartitionGroup<Q extends QueueSpec = QueueSpec> {
  private readonly handles: ConsumerHandle[] = [];
  /** The queues past the count, drained during a shrink: their messages forwarded to their partitions now. */
  private readonly drains: ConsumerHandle[] = [];
  /** Latest beat of each live replica, with when it arrived here (this clock only). */
  private readonly members = new Map<string, Member>();
  private readonly releasing = new Set<number>();
  private membership = '';
  private stableBeats = 0;
  private reported = '';
  private suspended: boolean;
  private readonly listenUntil: number;
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private working = false;
  private readonly beatMs: number;
  private readonly timeoutMs: number;

  private constructor(private readonly o: PartitionGroupOptions<Q>) {
    this.beatMs = o.beatIntervalMs ?? DEFAULT_BEAT_MS;
    this.timeoutMs = o.memberTimeoutMs ?? DEFAULT_MEMBER_TIMEOUT_MS;
    // During a count change, a replica consumes nothing until it has heard every live member once.
    this.suspended = o.previousPartitions !== undefined && o.previousPartitions !== o.broker.partitions;
    this.listenUntil = this.suspended ? Date.now() + this.timeoutMs : 0;
  }

  /** Subscribes to every partition and to the group's beats, then starts beating. */
  static async start<Q extends QueueSpec>(options: PartitionGroupOptions<Q>): Promise<PartitionGroup<Q>> {
    const g = new PartitionGroup(options);
    await g.subscribe();
    return g;
  }

  /** The partitions this replica is the active consumer of now. */
  owned(): number[] {
    const out: number[] = [];
    this.handles.forEach((h, p) => h.active() && out.push(p));
    return out;
  }

  /** The replicas heard from within the member timeout, this one included. */
  liveMembers(): number {
    return this.members.size;
  }

  /** True while this replica consumes nothing: the group disagrees on the partition count, or it is still listening. */
  get paused(): boolean {
    return this.suspended;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private get id(): string {
    return `${this.o.group}.${this.o.replica}`;
  }

  private get partitions(): number {
    return this.o.broker.partitions;
  }

  private async subscribe(): Promise<void> {
    const { broker } = this.o;
    const consume = { ...this.o.consume, suspended: this.suspended };
    // Declared even while suspended: publishers on this count must find their queues.
    await broker.declarePartitions((p) => this.queueOf(p));
    await broker.consume(QUEUES.partitionBeats(this.id), async (d) => this.heard(d.data), { prefetch: 64 });
    for (let p = 0; p < this.partitions; p++) {
      const handler = this.o.handler(p);
      this.handles.push(await broker.consume(this.queueOf(p), (d) => (this.belongsHere(d, p) ? handler(d) : this.forward(d)), consume));
    }
    for (let p = this.partitions; p < (this.o.previousPartitions ?? 0); p++) {
      this.drains.push(await broker.consume(this.queueOf(p), (d) => this.forward(d), consume));
    }
    this.timer = setInterval(() => void this.tick(), this.beatMs);
    this.timer.unref();
    void this.tick();
  }

  private queueOf(p: number): Q {
    return { ...this.o.queue(p), singleActiveConsumer: true };
  }

  private belongsHere(d: Routed, p: number): boolean {
    const key = d.envelope.partition_key;
    return key === undefined || partitionOf(key, this.partitions) === p;
  }

  /** Publishes the message, as it is, to the partition its key maps to under this replica's count (a request keeps its requester). */
  private async forward(d: Routed): Promise<void> {
    const env = d.envelope;
    if (env.partition_key === undefined) {
      this.o.logger.warn('message without a partition key on a drained partition queue dropped', { group: this.o.group, type: d.type });
      return;
    }
    await d.forward(d.type, d.data as never, {
      partitionKey: env.partition_key,
      messageId: env.id,
      occurredAt: env.occurred_at,
      ...(env.correlation_id !== undefined ? { correlationId: env.correlation_id } : {}),
    });
  }

  private heard(beat: PartitionBeat): void {
    if (beat.group !== this.o.group) return;
    this.members.set(beat.replica, { at: Date.now(), partitions: beat.partitions, active: beat.active });
  }

  /** Every beat: the announcement, never held up by the work that follows it (a release waits for messages in hand). */
  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      await this.beat();
    } catch (err) {
      this.o.logger.debug('partition group beat skipped', { group: this.o.group, error: String(err) });
      return;
    } finally {
      this.ticking = false;
    }
    if (this.working) return;
    this.working = true;
    try {
      await this.work();
    } catch (err) {
      this.o.logger.debug('partition group work skipped', { group: this.o.group, error: String(err) });
    } finally {
      this.working = false;
    }
  }

  private async beat(): Promise<void> {
    const owned = this.owned();
    await this.o.broker.publish('partition.beat', { group: this.o.group, replica: this.id, partitions: this.partitions, active: owned });
    const now = Date.now();
    this.members.set(this.id, { at: now, partitions: this.partitions, active: owned });
    for (const [id, m] of this.members) if (now - m.at > this.timeoutMs) this.members.delete(id);
    const membership = [...this.members.keys()].sort().join(' ');
    this.stableBeats = membership === this.membership ? this.stableBeats + 1 : 0;
    this.membership = membership;
    this.report(owned);
  }

  /** Agreement on the count, probes of the partitions nobody claims, and the hand-on of any excess. */
  private async work(): Promise<void> {
    const now = Date.now();
    if (!(await this.agree(now))) return;

    // A replica silent for two beats may be gone: what it claimed is probed (its partitions' new
    // active consumers learn they are), and nobody hands anything on until it beats or times out.
    const fresh = [...this.members.values()].filter((m) => now - m.at <= 2 * this.beatMs);
    const claimed = new Set(fresh.flatMap((m) => m.active));
    for (let p = 0; p < this.partitions; p++) {
      if (!claimed.has(p) && !this.releasing.has(p)) await this.o.broker.probe(this.queueOf(p), { group: this.o.group, replica: this.id });
    }

    if (this.stableBeats < STABLE_BEATS || fresh.length < this.members.size) return;
    const handOn = this.excess(this.owned());
    for (const p of handOn) await this.release(p);
    if (handOn.length > 0) this.stableBeats = 0;
  }

  /**
   * What this replica hands on: everything over ceil(P / N); or, while every partition is claimed
   * and some replica holds fewer than floor(P / N), one partition if this is the fullest (ties: the
   * lowest id), so a replica that came last does not stay short when everyone else sits at the ceiling.
   */
  private excess(owned: number[]): number[] {
    const most = Math.ceil(this.partitions / this.members.size);
    if (owned.length > most) return owned.slice(most);
    const least = Math.floor(this.partitions / this.members.size);
    const held = [...this.members].map(([id, m]) => ({ id, count: id === this.id ? owned.length : m.active.length }));
    // Only once every partition is claimed: one on its way to another replica may be the one it lacks.
    const claimed = held.reduce((n, h) => n + h.count, 0);
    if (claimed < this.partitions || !held.some((h) => h.count < least) || owned.length <= least) return [];
    const fullest = held.reduce((a, b) => (b.count > a.count || (b.count === a.count && b.id < a.id) ? b : a));
    return fullest.id === this.id ? owned.slice(-1) : [];
  }

  /**
   * Consumes only while every live member has this replica's partition count (and, during a count
   * change, once it has listened for a member timeout): suspends or resumes every partition as that
   * changes. True when consuming.
   */
  private async agree(now: number): Promise<boolean> {
    const others = [...this.members.entries()].filter(([id, m]) => id !== this.id && m.partitions !== this.partitions);
    const agreed = others.length === 0 && now >= this.listenUntil;
    if (agreed && this.suspended) {
      this.suspended = false;
      this.o.logger.info('partition group agrees on the partition count: consuming', { group: this.o.group, partitions: this.partitions });
      for (const h of [...this.handles, ...this.drains]) await h.resume();
    } else if (!agreed && !this.suspended) {
      this.suspended = true;
      this.o.logger.error('a replica of the group runs with another partition count: consuming nothing until they agree', {
        group: this.o.group,
        partitions: this.partitions,
        others: others.map(([id, m]) => ({ replica: id, partitions: m.partitions })),
      });
      const before = this.o.beforeRelease;
      await Promise.all(this.handles.map((h, p) => h.suspend(before ? () => before(p) : undefined)));
      await Promise.all(this.drains.map((h) => h.suspend()));
    }
    return agreed;
  }

  private async release(p: number): Promise<void> {
    const handle = this.handles[p];
    if (!handle) return;
    this.releasing.add(p);
    try {
      const before = this.o.beforeRelease;
      await handle.release(before ? () => before(p) : undefined);
      this.o.logger.info('partition handed on to the next replica in line', {
        group: this.o.group,
        partition: p,
        members: this.members.size,
      });
    } finally {
      this.releasing.delete(p);
    }
    this.report(this.owned());
  }

  private report(owned: number[]): void {
    const key = `${owned.join(',')}/${this.members.size}`;
    if (key === this.reported) return;
    this.reported = key;
    this.o.logger.info('partition ownership', { group: this.o.group, owned, members: this.members.size });
  }
}
