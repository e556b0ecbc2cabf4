import type { Connection } from 'mongoose';
import type { Environment, TaskStatus } from '@tes/contracts';
import { windowOf } from '../../domain/rate-window.js';
import type { UsageStats } from '../ports.js';

/**
 * Read-only views over collections other gateway modules write: the rate-limit tickets of the
 * current window (one ticket per admitted request) and the task read model. Nothing here writes.
 */
export class UsageReader implements UsageStats {
  constructor(private readonly conn: Connection) {}

  /** API requests admitted for the account in the current one-minute window (all its keys). */
  async requestsThisMinute(accountId: string, nowMs = Date.now()): Promise<number> {
    return this.conn.collection('rate_tickets').countDocuments({ account_id: accountId, window: windowOf(nowMs) });
  }

  /** Tasks of the account by status (both environments: the concurrency limit is per account). */
  async taskCounts(accountId: string, statuses: readonly TaskStatus[]): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    await Promise.all(
      statuses.map(async (s) => {
        out[s] = await this.conn.collection('task_views').countDocuments({ account_id: accountId, status: s });
      }),
    );
    return out;
  }

  /** End users seen in the account environment's recent tasks, most recent first. */
  async recentUserIds(accountId: string, environment: Environment, max = 50): Promise<string[]> {
    const rows = await this.conn
      .collection('task_views')
      .find({ account_id: accountId, environment, user_id: { $ne: null } }, { projection: { user_id: 1 } })
      .sort({ created_at: -1 })
      .limit(1000)
      .toArray();
    const seen = new Set<string>();
    for (const r of rows) {
      const u = (r as { user_id?: unknown }).user_id;
      if (typeof u === 'string' && !seen.has(u)) seen.add(u);
      if (seen.size >= max) break;
    }
    return [...seen];
  }
}
