/**
 * Load shedding of task creates, per account, on one gateway replica.
 *
 * A create waits for the orchestrator's answer; when the orchestrator (or the machine) cannot keep
 * up, each new create joins a queue and its caller waits seconds for a 201 or, after
 * REQUEST_TIMEOUT_MS, a 503. So while the oldest create of an account still unanswered on this
 * replica was sent more than `shedAfterMs` ago, the account's queue is long: a new create is
 * refused at once (503 with Retry-After, counted nowhere) instead of joining it. The queue drains,
 * the oldest unanswered create gets younger than `shedAfterMs`, and creates are taken again, so
 * an accepted create waits about `shedAfterMs` at most for its queue. Per account because the
 * orchestrator's queues are: another account's creates are not refused for this one's backlog.
 */
export class CreateBacklog {
  /** Per account, the send time of each unanswered create, oldest first (insertion order). */
  private readonly waiting = new Map<string, Map<number, number>>();
  private nextId = 0;

  /** `shedAfterMs` 0 never sheds. */
  constructor(
    private readonly shedAfterMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** True when the account's oldest unanswered create has waited longer than `shedAfterMs`. */
  isBacklogged(accountId: string): boolean {
    if (this.shedAfterMs <= 0) return false;
    const oldest = this.waiting.get(accountId)?.values().next().value;
    return oldest !== undefined && this.now() - oldest > this.shedAfterMs;
  }

  /** Counts `answer` as an unanswered create of the account until it settles. */
  async track<T>(accountId: string, answer: Promise<T>): Promise<T> {
    let mine = this.waiting.get(accountId);
    if (!mine) this.waiting.set(accountId, (mine = new Map<number, number>()));
    const id = this.nextId++;
    mine.set(id, this.now());
    try {
      return await answer;
    } finally {
      mine.delete(id);
      if (mine.size === 0 && this.waiting.get(accountId) === mine) this.waiting.delete(accountId);
    }
  }

  /** Unanswered creates on this replica, all accounts (the `creates_awaiting_answer` gauge). */
  get size(): number {
    let n = 0;
    for (const m of this.waiting.values()) n += m.size;
    return n;
  }

  /**
   * How long the oldest unanswered create on this replica has waited, in ms, 0 with none (the
   * `creates_oldest_wait_seconds` gauge): above `shedAfterMs`, some account's creates are shed.
   */
  oldestWaitMs(): number {
    let oldest = Infinity;
    for (const m of this.waiting.values()) {
      const first = m.values().next().value;
      if (first !== undefined && first < oldest) oldest = first;
    }
    return oldest === Infinity ? 0 : this.now() - oldest;
  }
}
