import { QUEUES, type PartitionBeat } from '@tes/contracts';
import type { Logger } from '@tes/logger';
import type { Broker, ConsumeOptions, ConsumerHandle, Handler, QueueMessageType, QueueSpec } from './broker.js';

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

/**
 * The replicas of a service sharing one family of single-active-consumer partition queues.
 *
 * Every replica subscribes to every partition, so the broker alone decides each partition's one
 * active consumer and fails it over at once when its holder dies (the standby line). What the
 * broker does not do is spread them: the first replica up holds them all. So each replica beats
 * every second (`partition.beat`: who it is, what it is active on), learns where it is active from
 * the messages it receives, probes the partitions nobody claims (the probe reaches the active
 * consumer, which then claims it), and, once the membership has been stable for two beats, a
 * replica active on more than ceil(P / live replicas) partitions releases the excess
 * (ConsumerHandle.release: the message in hand finishes, the rest goes back in order, the next in
 * line becomes active). Released partitions move down the line until they reach a replica under
 * the bound, so ownership ends within one partition of the mean. Never two writers at once: that is
 * the broker's single-active-consumer guarantee, and a release waits for the last write.
 */
export class PartitionGroup<Q extends QueueSpec = QueueSpec> {
  private readonly handles: ConsumerHandle[] = [];
  /** Latest beat of each live replica, with when it arrived here (this clock only). */
  private readonly members = new Map<string, { at: number; active: readonly number[] }>();
  private readonly releasing = new Set<number>();
  private membership = '';
  private stableBeats = 0;
  private reported = '';
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private readonly warnedMismatch = new Set<string>();
  private readonly beatMs: number;
  private readonly timeoutMs: number;

  private constructor(private readonly o: PartitionGroupOptions<Q>) {
    this.beatMs = o.beatIntervalMs ?? DEFAULT_BEAT_MS;
    this.timeoutMs = o.memberTimeoutMs ?? DEFAULT_MEMBER_TIMEOUT_MS;
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

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private get id(): string {
    return `${this.o.group}.${this.o.replica}`;
  }

  private async subscribe(): Promise<void> {
    const { broker } = this.o;
    for (let p = 0; p < broker.partitions; p++) {
      const queue = { ...this.o.queue(p), singleActiveConsumer: true };
      this.handles.push(await broker.consume(queue, this.o.handler(p), this.o.consume));
    }
    await broker.consume(QUEUES.partitionBeats(this.id), async (d) => this.heard(d.data), { prefetch: 64 });
    this.timer = setInterval(() => void this.tick(), this.beatMs);
    this.timer.unref();
  }

  private heard(beat: PartitionBeat): void {
    if (beat.group !== this.o.group) return;
    if (beat.partitions !== this.o.broker.partitions && !this.warnedMismatch.has(beat.replica)) {
      this.warnedMismatch.add(beat.replica);
      this.o.logger.error('a replica of the group runs with another partition count: every service must use the same PARTITIONS', {
        group: this.o.group,
        replica: beat.replica,
        its_partitions: beat.partitions,
        partitions: this.o.broker.partitions,
      });
    }
    this.members.set(beat.replica, { at: Date.now(), active: beat.active });
  }

  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      await this.beat();
    } catch (err) {
      this.o.logger.debug('partition group tick skipped', { group: this.o.group, error: String(err) });
    } finally {
      this.ticking = false;
    }
  }

  private async beat(): Promise<void> {
    const { broker } = this.o;
    const owned = this.owned();
    await broker.publish('partition.beat', { group: this.o.group, replica: this.id, partitions: broker.partitions, active: owned });
    const now = Date.now();
    this.members.set(this.id, { at: now, active: owned });
    for (const [id, m] of this.members) if (now - m.at > this.timeoutMs) this.members.delete(id);

    const membership = [...this.members.keys()].sort().join(' ');
    this.stableBeats = membership === this.membership ? this.stableBeats + 1 : 0;
    this.membership = membership;
    this.report(owned);

    const claimed = new Set([...this.members.values()].flatMap((m) => m.active));
    for (let p = 0; p < broker.partitions; p++) {
      if (!claimed.has(p) && !this.releasing.has(p)) await broker.probe(this.o.queue(p), { group: this.o.group, replica: this.id });
    }

    const most = Math.ceil(broker.partitions / this.members.size);
    if (this.stableBeats < STABLE_BEATS || owned.length <= most) return;
    for (const p of owned.slice(most)) await this.release(p);
    this.stableBeats = 0;
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
