import type { Environment } from '@tes/contracts';

/**
 * The outcome of one attempt, recorded once: `_id` = `${event_id}:${attempt}`. The insert that
 * wins decides the outcome of attempt n, and it carries the event's state after it
 * (`status_after`, `next_attempt_at`), so a replica that takes over after a crash applies
 * exactly what the holder decided.
 */
export interface DeliveryAttemptDoc {
  _id: string;
  event_id: string;
  task_id: string;
  account_id: string;
  environment: Environment;
  attempt: number;
  url: string;
  started_at: Date;
  finished_at: Date;
  ok: boolean;
  /** HTTP status, or null when no answer came (timeout, refused, closed, refused by the guard). */
  status_code: number | null;
  latency_ms: number;
  error: string | null;
  /**
   * The request's headers as sent (signatures included, never the secret); the body sent is the
   * event's stored body, the same bytes on every attempt. Absent when no request was made, and in
   * records written before it was kept.
   */
  request_headers?: Record<string, string>;
  /** The start of the receiver's answer (absent when there was none). */
  response?: ResponseSample;
  /** The event's status after this attempt (absent in records written before it was kept). */
  status_after?: 'delivered' | 'pending' | 'undeliverable';
  /** When the next attempt is due (a retry), else null. */
  next_attempt_at?: Date | null;
  schedule_base?: number;
}

/** Whether this replica performs attempt n: it won the claim, or another holder has it (until `heldUntil`, when known). */
export type ClaimResult = { won: true; id: string; takeover: boolean } | { won: false; heldUntil: Date | null };

/** What the attempt log keeps of a receiver's answer: the first RESPONSE_SAMPLE_BYTES of its body. */
export interface ResponseSample {
  /** The first bytes of the body, decoded as UTF-8. */
  body: string;
  /** The body was longer than what is kept (or did not end within the wait). */
  truncated: boolean;
  content_type: string | null;
}

/** How much of a receiver's answer each attempt keeps. */
export const RESPONSE_SAMPLE_BYTES = 4096;
