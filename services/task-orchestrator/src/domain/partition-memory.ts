import { TERMINAL_STATUSES, type Environment, type ToolView } from '@tes/contracts';
import { AdmissionCounts } from './admission.js';
import { setBounded } from './bounded-map.js';
import type { Task } from './task.js';

/** The consumer attachment a message came on (see @tes/messaging's ConsumerAttachment). */
export interface Attachment {
  readonly id: number;
  readonly open: boolean;
}

/** A published outbox still stored with its task: the task's version then, and whether the task had ended. */
export interface PublishedOutbox {
  id: string;
  version: number;
  ended: boolean;
}

/** Entries kept per partition and kind; beyond that the oldest is forgotten (and read again when needed). */
const MAX_DOCS = 256;
const MAX_ACCOUNTS = 2048;

/**
 * What the active writer of one orchestrator partition knows beyond the database, so that
 * a task costs fewer round trips: the running and pending counts of its accounts (admission),
 * their custom tools, the last written state of their unfinished tasks, and which tasks'
 * outboxes were published but not yet cleared in the database.
 *
 * Valid only while this process stays the partition's single active consumer, which is
 * exactly while the channel the messages arrive on stays open: RabbitMQ hands a
 * single-active-consumer queue to another replica only once the active consumer's channel is
 * gone. RabbitMQ does not say when a consumer becomes active, so everything here is learned
 * from the database on first use after each (re)attachment, and forgotten when the attachment
 * changes or closes, and whenever a message fails (a write may or may not have happened).
 *
 * Every use runs in a lane (`task`, `account`): work on one task, or on what one account's
 * admission counts, one at a time, in the order it was queued; lanes of different tasks run side
 * by side. Lanes nest only account → task, so none waits for another in a cycle.
 */
export class PartitionMemory {
  private attachment: Attachment | undefined;
  /** The running and pending counts of the partition's accounts (admission). */
  readonly counts = new AdmissionCounts();
  private readonly tools = new Map<string, readonly ToolView[]>();
  private readonly docs = new Map<string, Task>();
  /**
   * Task id → version whose outbox was published and is still in the stored document, whether
   * the task had ended, and whether a clear of it is under way.
   */
  private readonly published = new Map<string, { version: number; ended: boolean; clearing: boolean }>();
  /** The last work queued on each lane that has any. */
  private readonly lanes = new Map<string, Promise<unknown>>();

  /** Runs `fn` after the work queued before it on the task's lane (a step result, a cancel, an outbox clear). */
  task<T>(taskId: string, fn: () => Promise<T>): Promise<T> {
    return this.lane(`task:${taskId}`, fn);
  }

  /** Runs `fn` after the work queued before it on the account's lane (what reads or moves its admission counts). */
  account<T>(accountId: string, fn: () => Promise<T>): Promise<T> {
    return this.lane(`account:${accountId}`, fn);
  }

  /** How many lanes have work queued (tests, and a partition handed on: none). */
  get busyLanes(): number {
    return this.lanes.size;
  }

  private lane<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const next = (this.lanes.get(key) ?? Promise.resolve()).then(fn, fn);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    this.lanes.set(key, tail);
    void tail.then(() => {
      if (this.lanes.get(key) === tail) this.lanes.delete(key);
    });
    return next;
  }

  /** Called with every message: another (or a closed) attachment means this may have just become active. */
  enter(attachment: Attachment): void {
    if (this.attachment !== attachment || !attachment.open) this.forget();
    this.attachment = attachment;
  }

  /** True while the attachment everything here was learned on is still open. */
  get valid(): boolean {
    return this.attachment?.open === true;
  }

  forget(): void {
    this.attachment = undefined;
    this.counts.clear();
    this.tools.clear();
    this.docs.clear();
    this.published.clear();
  }

  customTools(accountId: string, environment: Environment): readonly ToolView[] | undefined {
    return this.tools.get(`${accountId}:${environment}`);
  }

  setCustomTools(accountId: string, environment: Environment, tools: readonly ToolView[]): void {
    setBounded(this.tools, `${accountId}:${environment}`, tools, MAX_ACCOUNTS);
  }

  /** A tool.register or tool.delete of the account environment: read its tools again. */
  toolsChanged(accountId: string, environment: Environment): void {
    this.tools.delete(`${accountId}:${environment}`);
  }

  /** A copy of the task as last written by this writer, if known. */
  doc(id: string): Task | undefined {
    const d = this.docs.get(id);
    return d && structuredClone(d);
  }

  /** How many steps the task's workflow has, if this writer knows the task (no copy made). */
  stepCount(id: string): number | undefined {
    return this.docs.get(id)?.workflow?.length;
  }

  /** Remembers the task as just written (a copy); finished tasks are forgotten. */
  wrote(doc: Task): void {
    if (TERMINAL_STATUSES.includes(doc.status)) this.docs.delete(doc._id);
    else setBounded(this.docs, doc._id, structuredClone(doc), MAX_DOCS);
  }

  /** The outbox stored with `version` has been published (and confirmed); `ended`: the task is complete, failed or cancelled. */
  outboxPublished(id: string, version: number, ended = false): void {
    this.published.set(id, { version, ended, clearing: false });
  }

  /** True when the stored outbox of the task at `version` is known published. */
  isPublished(id: string, version: number): boolean {
    return this.published.get(id)?.version === version;
  }

  /** The task is being written whole: whatever outbox it stored before is replaced. */
  rewritten(id: string): void {
    this.published.delete(id);
  }

  /**
   * The published outboxes to clear in the database, each handed out once: it stays known
   * published (a task read again meanwhile does not send its outbox twice) until `outboxCleared`.
   */
  publishedToClear(): PublishedOutbox[] {
    const out: PublishedOutbox[] = [];
    for (const [id, entry] of this.published) {
      if (entry.clearing) continue;
      entry.clearing = true;
      out.push({ id, version: entry.version, ended: entry.ended });
    }
    return out;
  }

  /** The outbox stored with `version` is cleared in the database (or its clear failed: a reconcile sends it again). */
  outboxCleared(id: string, version: number): void {
    if (this.published.get(id)?.version === version) this.published.delete(id);
  }
}
