import type { WaitingData } from '@tes/contracts';
import type { TaskViewDoc } from '../store/task-view.repository.js';
import type { Upstream } from './upstream.js';

/** Renewing a link must not hold a task read for the full request timeout. */
const RENEW_TIMEOUT_MS = 2000;

/**
 * What a waiting task waits for (task.waiting's data), with a fresh consent link: the vault's
 * links expire within minutes and work once, so every read of the task asks the vault for a new
 * one (consent_link.renew). When the vault cannot answer, the stored link is shown as it is.
 */
export async function currentWaiting(view: TaskViewDoc, u: Upstream): Promise<WaitingData | undefined> {
  if (view.status !== 'waiting' || !view.waiting) return undefined;
  const stored = view.waiting;
  try {
    const reply = await u.broker.request(
      'consent_link.renew',
      { account_id: view.account_id, environment: view.environment, auth_url: stored.auth_url },
      { timeoutMs: Math.min(u.timeoutMs, RENEW_TIMEOUT_MS), ...(u.correlationId ? { correlationId: u.correlationId } : {}) },
    );
    return reply.ok ? { ...stored, auth_url: reply.auth_url } : stored;
  } catch {
    return stored;
  }
}
