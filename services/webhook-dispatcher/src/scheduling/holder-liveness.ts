import type { Logger } from '@tes/logger';
import type { ClaimResult } from '../domain/attempt.js';
import type { ClaimStore } from '../domain/ports.js';

/**
 * On-time rounds of the reader that must all see a holder's beat unchanged before the holder
 * counts as gone: with the default 2 s beat, a holder that stopped beating is gone after 8-10 s.
 */
export const GONE_AFTER_ROUNDS = 4;

interface BeatStore {
  beat(holder: string, beat: number, stopped?: boolean): Promise<void>;
  all(): Promise<{ _id: string; beat: number; stopped: boolean }[]>;
}

interface Watched {
  beat: number;
  stopped: boolean;
  /** Consecutive on-time rounds of this reader that saw the same beat. */
  unchanged: number;
}

/**
 * The lease of a dispatcher process on what it holds (its claims, the fast-lane events it stored)
 * lasts as long as its heartbeat: every interval it raises its own counter in `dispatcher_beats`
 * and reads everybody's. A holder counts as gone only when it wrote `stopped` (clean shutdown), or
 * when GONE_AFTER_ROUNDS of this reader's own rounds, each ON TIME (started on schedule, its own
 * beat written and the beats read within one interval), saw its counter unchanged. A database that
 * is slow or paused slows the reader's rounds as much as the holder's writes, and a late round
 * resets every count: a stall never makes a live holder look dead. No clock is compared across
 * processes. A holder whose own beat could not be written for half that time takes no new claim
 * (`claimsWithLiveness`), so nothing it claims can be taken over under it by a reader that counted
 * it gone meanwhile.
 */
export class HolderLiveness {
  private seq = 0;
  /** When this process last started a beat write that succeeded (its own clock). */
  private lastBeatAt = 0;
  /** When the last round that succeeded started (0: none, or the last one failed). */
  private previousRoundAt = 0;
  private lastRoundStart = 0;
  private readonly watched = new Map<string, Watched>();
  private readonly goneListeners: ((holder: string) => void)[] = [];
  private running = false;
  private loopDone: Promise<void> = Promise.resolve();
  private wakeUp: (() => void) | undefined;

  constructor(
    private readonly deps: { beats: BeatStore; holder: string; logger: Logger },
    readonly intervalMs: number,
  ) {}

  /** Writes the first beat (before this process claims anything), then beats every interval. */
  async start(): Promise<void> {
    await this.round();
    this.running = true;
    this.loopDone = this.loop();
  }

  /** Stops beating and marks this holder `stopped` (call once nothing it holds is in flight): the others take over at once. */
  async stop(): Promise<void> {
    this.running = false;
    this.wakeUp?.();
    await this.loopDone;
    await this.deps.beats.beat(this.deps.holder, ++this.seq, true).catch((err: unknown) => {
      this.deps.logger.warn('could not mark this dispatcher stopped; the others count it gone after its heartbeat lapses', {
        error: String(err),
      });
    });
  }

  /** Called once for each holder found gone (not for one found gone again after beating anew). */
  onGone(listener: (holder: string) => void): void {
    this.goneListeners.push(listener);
  }

  /** Whether a holder is known to be gone; false for this process and for a holder never seen beating (the time lease applies to those). */
  readonly isGone = (holder: string): boolean => {
    if (holder === this.deps.holder) return false;
    const w = this.watched.get(holder);
    return w !== undefined && gone(w);
  };

  /** This process's own beat is recent: it may take claims (see the class comment). */
  fresh(now = Date.now()): boolean {
    return now - this.lastBeatAt <= (this.intervalMs * GONE_AFTER_ROUNDS) / 2;
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const started = Date.now();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, this.intervalMs - (Date.now() - this.lastRoundStart)));
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = undefined;
      if (!this.running) break;
      await this.round().catch((err: unknown) => {
        // A failed round proves nothing about the others: the next one is not on time either.
        this.previousRoundAt = 0;
        this.deps.logger.warn('heartbeat round failed', { error: String(err), after_ms: Date.now() - started });
      });
    }
  }

  private async round(): Promise<void> {
    const start = Date.now();
    this.lastRoundStart = start;
    await this.deps.beats.beat(this.deps.holder, ++this.seq);
    this.lastBeatAt = start;
    const beats = await this.deps.beats.all();
    const end = Date.now();
    const onTime = this.previousRoundAt > 0 && start - this.previousRoundAt <= this.intervalMs * 1.5 && end - start <= this.intervalMs;
    this.previousRoundAt = start;
    const newlyGone: string[] = [];
    for (const b of beats) {
      if (b._id === this.deps.holder) continue;
      const w = this.watched.get(b._id);
      const wasGone = w !== undefined && gone(w);
      if (!w || w.beat !== b.beat || w.stopped !== Boolean(b.stopped)) {
        this.watched.set(b._id, { beat: b.beat, stopped: Boolean(b.stopped), unchanged: 0 });
      } else if (onTime) {
        w.unchanged += 1;
      } else if (!wasGone) {
        // This reader was late (paused, or the database slow): what it saw proves nothing.
        w.unchanged = 0;
      }
      const now = this.watched.get(b._id) as Watched;
      if (!wasGone && gone(now)) newlyGone.push(b._id);
    }
    for (const holder of newlyGone) {
      this.deps.logger.warn('a dispatcher stopped beating: taking over what it held', { holder });
      for (const listener of this.goneListeners) listener(holder);
    }
  }
}

function gone(w: Watched): boolean {
  return w.stopped || w.unchanged >= GONE_AFTER_ROUNDS;
}

/**
 * The claims as this process takes them: an expired claim is also one whose holder is gone, and
 * no claim is taken while this process's own heartbeat is stale (a reader may be about to count
 * it gone).
 */
export function claimsWithLiveness(claims: ClaimStore, liveness: HolderLiveness): ClaimStore {
  return {
    acquire(eventId, attempt, holder, leaseMs, options): Promise<ClaimResult> {
      if (!liveness.fresh()) return Promise.resolve({ won: false, heldUntil: new Date(Date.now() + liveness.intervalMs) });
      return claims.acquire(eventId, attempt, holder, leaseMs, { ...options, isGone: liveness.isGone });
    },
    recentOf: (holder, since) => claims.recentOf(holder, since),
  };
}
