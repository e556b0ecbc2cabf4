import type { Options } from 'amqplib';
import { queueTypeArguments, type QueueType } from './queue-type.js';

/**
 * Holding what this version cannot read. During a rolling update a newer producer may send a
 * message type (or an envelope version) that an older consumer does not know yet: instead of
 * dead-lettering it, the consumer parks it in `<queue>.hold` for `delayMs`, after which the broker
 * puts it back on the queue, where a newer consumer may take it. Bounded, so nothing loops forever.
 */
export interface HoldOptions {
  /** How long a held message waits before it is offered again (default 30 s). */
  delayMs?: number;
  /** Holds after which it is dead-lettered as `unsupported` (default 120: an hour at 30 s). */
  maxHolds?: number;
  /** Time since its first hold after which it is dead-lettered as `unsupported` (default 1 h). */
  maxAgeMs?: number;
}

/** Headers a held message carries: how often it was held, and since when (epoch ms). */
export const HOLD_COUNT_HEADER = 'x-tes-holds';
export const HELD_SINCE_HEADER = 'x-tes-held-since';

export function resolveHoldOptions(o: HoldOptions = {}): Required<HoldOptions> {
  return { delayMs: o.delayMs ?? 30_000, maxHolds: o.maxHolds ?? 120, maxAgeMs: o.maxAgeMs ?? 3_600_000 };
}

export interface HoldDecision {
  /** Holds so far (0 the first time). */
  holds: number;
  /** When it was first held (epoch ms); now, the first time. */
  since: number;
  /** Past a bound: dead-letter it instead of holding it again. */
  expired: boolean;
}

/** Whether a message this version cannot read is held once more, from the headers its last hold left. */
export function holdDecision(headers: Record<string, unknown>, options: Required<HoldOptions>, now: number): HoldDecision {
  const holds = nonNegative(headers[HOLD_COUNT_HEADER]) ?? 0;
  const since = nonNegative(headers[HELD_SINCE_HEADER]) ?? now;
  return { holds, since, expired: holds >= options.maxHolds || now - since >= options.maxAgeMs };
}

/**
 * The headers of the held copy: the original's, with the hold count and first hold time, without
 * the broker's dead-letter history (`x-death` and co., added back by each return from the hold).
 */
export function holdHeaders(headers: Record<string, unknown>, decision: HoldDecision): Record<string, unknown> {
  const kept = Object.fromEntries(
    Object.entries(headers).filter(([k]) => k !== 'x-death' && !k.startsWith('x-first-death-') && !k.startsWith('x-last-death-')),
  );
  return { ...kept, [HOLD_COUNT_HEADER]: decision.holds + 1, [HELD_SINCE_HEADER]: decision.since };
}

/**
 * `<queue>.hold`: no consumer; an expired message (per-message TTL, so the delay can change
 * without changing the queue's arguments) is dead-lettered through the default exchange straight
 * back to `queue` (its full name), and to no other queue bound to the same key.
 */
export function holdQueueOptions(queue: string, type?: QueueType): Options.AssertQueue {
  return {
    durable: true,
    arguments: {
      ...queueTypeArguments(type),
      // A quorum queue dead-letters at most once unless told otherwise: a held message must not be lost on its way back.
      ...(type === 'quorum' ? { 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' } : {}),
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': queue,
    },
  };
}

function nonNegative(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : NaN;
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}
