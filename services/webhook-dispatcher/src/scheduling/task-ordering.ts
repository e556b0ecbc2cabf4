import type { EventStore, PendingStore } from '../domain/ports.js';
import { isLastOfTask, latest, type PendingDoc, type PendingHead, type Stored } from '../domain/stored-event.js';

/** What this replica knows of a task from the events it stored itself, in queue order. */
interface LocalTask {
  /** Every version up to this one was stored here, and is done or in `chain`. */
  frontier: number;
  /** This replica's pending events of the task, in version order; the first one is being delivered. */
  chain: PendingDoc[];
  /** The task's last event (completed, failed, cancelled) was stored here: forget it once the chain is done. */
  ended?: boolean;
}

/** Whether an event may go now, or when to look again. */
type Placement = { kind: 'head' } | { kind: 'wait'; until: number };

/**
 * Where a pending event just stored here goes: `go` (every earlier version is done here),
 * `behind` (its predecessor is pending here: it goes when that one is done), or `check` (a
 * predecessor went through another replica: its turn is found by reading the database).
 */
type Arrival = 'go' | 'behind' | 'check';

interface OrderingOptions {
  pollIntervalMs: number;
  /** How long an event waits for its predecessor version before it goes anyway. */
  orderGapWaitMs: number;
}

const MAX_TASKS = 100_000;
/** Placements (reads of a task's pending events) run at once. */
const PLACEMENT_CONCURRENCY = 4;

/**
 * The order of each task's events: version n goes once version n-1 is done. What this replica
 * stored itself it orders from memory (`arrive`, `settled`), with no read; anything else is
 * placed by reading the task's pending events (`placeAll`).
 */
export class TaskOrdering {
  private readonly tasks = new Map<string, LocalTask>();
  /** Task → versions known to have been stored (seen pending or stored here): no read needed to know they arrived. */
  private readonly arrived = new Map<string, Set<number>>();

  constructor(
    private readonly deps: { pending: Pick<PendingStore, 'ofTask' | 'taskDocs'>; events: Pick<EventStore, 'hasVersion'> },
    private readonly options: OrderingOptions,
  ) {}

  /** Notes what the consumer stored, in queue order; for a pending event, where it goes (see Arrival). */
  arrive(s: Stored): Arrival | undefined {
    this.noteArrived(s.doc.task_id, s.doc.version);
    const rec = this.tasks.get(s.doc.task_id);
    const contiguous = rec ? rec.frontier === s.doc.version - 1 : s.doc.version === 1;
    if (s.kind === 'final') {
      if (rec && contiguous) rec.frontier = s.doc.version;
      else if (!rec && contiguous) this.remember(s.doc.task_id, { frontier: 1, chain: [] });
      if (isLastOfTask(s.doc.kind)) this.ended(s.doc.task_id);
      return undefined;
    }
    if (!contiguous) return 'check';
    const task = rec ?? this.remember(s.doc.task_id, { frontier: 0, chain: [] });
    task.frontier = s.doc.version;
    task.chain.push(s.doc);
    if (isLastOfTask(s.doc.kind)) task.ended = true;
    return task.chain.length === 1 ? 'go' : 'behind';
  }

  /**
   * After an attempt of an event stored here: when it is done for good (`terminal`), the next
   * event of its task here, which goes now; otherwise (a retry is scheduled, or another replica
   * holds it) the task is forgotten and the events that followed it are returned, to be placed
   * by reading the database from now on.
   */
  settled(doc: PendingDoc, terminal: boolean): { next: PendingDoc | undefined; unplaced: PendingDoc[] } {
    const rec = this.tasks.get(doc.task_id);
    if (!rec || rec.chain[0]?.event_id !== doc.event_id) {
      if (terminal && isLastOfTask(doc.kind)) this.ended(doc.task_id);
      return { next: undefined, unplaced: [] };
    }
    rec.chain.shift();
    if (!terminal) {
      this.tasks.delete(doc.task_id);
      return { next: undefined, unplaced: rec.chain };
    }
    if (isLastOfTask(doc.kind)) rec.ended = true;
    if (rec.ended) this.ended(doc.task_id);
    return { next: rec.chain[0], unplaced: [] };
  }

  /**
   * An event of the task is done (its outcome recorded) and no follower of it is known here (its followers went through
   * another replica, or were left to the database when it had to be retried): reads the task's
   * pending events and takes the ones that may go, in version order, as this replica's chain, so
   * each goes as soon as the one before it is done, as if stored here. Returns the chain (its first
   * event goes now), empty when no event of the task may go yet or `busy` says this replica has
   * it in hand already.
   */
  async adopt(done: PendingDoc, now: number, busy: (eventId: string) => boolean): Promise<PendingDoc[]> {
    if ((this.tasks.get(done.task_id)?.chain.length ?? 0) > 0) return [];
    const byEvent = new Map<string, PendingDoc[]>();
    for (const d of await this.deps.pending.taskDocs(done)) {
      // The done event's own document may not be removed yet: its outcome is recorded, it counts as done.
      if (d.event_id !== done.event_id) byEvent.set(d.event_id, [...(byEvent.get(d.event_id) ?? []), d]);
    }
    const docs = [...byEvent.values()].map((list) => latest(list) as PendingDoc).sort((a, b) => a.version - b.version);
    for (const d of docs) this.noteArrived(d.task_id, d.version);
    const first = docs[0];
    if (!first || busy(first.event_id) || !mayGoNow(first, now)) return [];
    if ((await this.placement(first, now, docs)).kind !== 'head' || busy(first.event_id)) return [];
    const chain = [first];
    for (const d of docs.slice(1)) {
      const prev = chain[chain.length - 1] as PendingDoc;
      if (busy(d.event_id) || !mayGoNow(d, now) || !this.allArrived(d.task_id, prev.version, d.version)) break;
      chain.push(d);
    }
    const last = chain[chain.length - 1] as PendingDoc;
    // Every version up to `last` is done or in the chain: the next ones stored here queue behind it.
    this.remember(done.task_id, { frontier: last.version, chain, ended: isLastOfTask(last.kind) });
    return chain;
  }

  /** The events this replica remembers tasks for (bounded: a task is forgotten once its last event is done). */
  get knownTasks(): number {
    return Math.max(this.tasks.size, this.arrived.size);
  }

  /** The event is left to the database: its task is forgotten, and the events that followed it here are returned (to be placed by reading). */
  handOver(doc: PendingDoc): PendingDoc[] {
    const rec = this.tasks.get(doc.task_id);
    if (!rec || rec.chain[0]?.event_id !== doc.event_id) return [];
    this.tasks.delete(doc.task_id);
    return rec.chain.slice(1);
  }

  /** The placements of these events, a few reads at a time. */
  async placeAll(docs: readonly PendingDoc[], now: number): Promise<Placement[]> {
    const out: Placement[] = [];
    for (let i = 0; i < docs.length; i += PLACEMENT_CONCURRENCY) {
      out.push(...(await Promise.all(docs.slice(i, i + PLACEMENT_CONCURRENCY).map((d) => this.placement(d, now)))));
    }
    return out;
  }

  /**
   * Whether an event may go now: no lower version of its task pending (read first), and, while
   * it is fresh, its predecessor stored (read second: a pending event's final state is inserted
   * before its pending document is removed, so one of the two reads sees it). When it may not,
   * when to look again: at its blocker's next attempt when that is a retry, else soon.
   */
  private async placement(e: PendingDoc, now: number, read?: readonly PendingDoc[]): Promise<Placement> {
    const soon = now + this.options.pollIntervalMs;
    const rec = this.tasks.get(e.task_id);
    // Every earlier version was stored here and is done: nothing to read.
    if (rec && rec.chain.length === 0 && rec.frontier >= e.version - 1) return { kind: 'head' };
    if (e.version > 1) {
      const pending: readonly PendingHead[] = read ?? (await this.deps.pending.ofTask(e));
      for (const p of pending) this.noteArrived(p.task_id, p.version);
      const blockers = pending.filter((p) => p.version < e.version);
      if (blockers.length > 0) {
        const next = Math.min(...blockers.map((b) => (b.attempts_made > 0 ? (b.next_attempt_at?.getTime() ?? soon) : soon)));
        return { kind: 'wait', until: Math.max(soon, next) };
      }
    }
    // Version 1 is the unstored `created` (isUnstoredFirst): version 2 has nothing to wait for.
    if (e.version > 2 && e.attempts_made === 0 && now - e.received_at.getTime() < this.options.orderGapWaitMs) {
      // Its predecessor may still be on its way (competing consumers): give it a moment.
      if (!this.arrived.get(e.task_id)?.has(e.version - 1) && !(await this.deps.events.hasVersion(e, e.version - 1))) {
        return { kind: 'wait', until: Math.min(soon, e.received_at.getTime() + this.options.orderGapWaitMs) };
      }
    }
    return { kind: 'head' };
  }

  /** Versions strictly between `from` and `to` all known to have been stored here (or seen pending). */
  private allArrived(taskId: string, from: number, to: number): boolean {
    const versions = this.arrived.get(taskId);
    for (let v = from + 1; v < to; v++) if (!versions?.has(v)) return false;
    return true;
  }

  /** The task's last event is stored: forget the task once nothing of it is pending here (memory stays bounded by the tasks in progress). */
  private ended(taskId: string): void {
    const rec = this.tasks.get(taskId);
    if (rec && rec.chain.length > 0) {
      rec.ended = true;
      return;
    }
    this.tasks.delete(taskId);
    this.arrived.delete(taskId);
  }

  private remember(taskId: string, rec: LocalTask): LocalTask {
    if (this.tasks.size >= MAX_TASKS) {
      // Forget the oldest tasks with nothing pending here (their next events take the checked path).
      for (const [id, t] of this.tasks) {
        if (this.tasks.size < MAX_TASKS * 0.9) break;
        if (t.chain.length === 0) this.tasks.delete(id);
      }
    }
    this.tasks.set(taskId, rec);
    return rec;
  }

  private noteArrived(taskId: string, version: number): void {
    let versions = this.arrived.get(taskId);
    if (!versions) {
      if (this.arrived.size >= MAX_TASKS) {
        for (const id of this.arrived.keys()) {
          this.arrived.delete(id);
          if (this.arrived.size < MAX_TASKS * 0.9) break;
        }
      }
      versions = new Set();
      this.arrived.set(taskId, versions);
    }
    versions.add(version);
  }
}

/** A fast-lane event may be attempted by whoever gets its claim; an open-lane one (a retry) only once due. */
function mayGoNow(doc: PendingDoc, now: number): boolean {
  return doc.lane === 'fast' || (doc.next_attempt_at?.getTime() ?? 0) <= now;
}
