/**
 * Database commands per task, from the MongoDB-wire server's own counters (FerretDB's
 * `/debug/metrics`, `ferretdb_client_requests_total`), and the task rate the database alone would
 * bound the system to, from its measured per-command ceilings.
 */
import type { Ceilings } from './ceilings.js';

export const FERRETDB_DEBUG_URL = process.env['FERRETDB_DEBUG_URL'] ?? 'http://127.0.0.1:8088';

export type CommandCounts = Map<string, number>;

/** The server's command counters so far, by command name; undefined when the server has no such endpoint. */
export async function commandCounts(debugUrl = FERRETDB_DEBUG_URL): Promise<CommandCounts | undefined> {
  const res = await fetch(`${debugUrl}/debug/metrics`).catch(() => undefined);
  if (!res?.ok) return undefined;
  const counts: CommandCounts = new Map();
  for (const m of (await res.text()).matchAll(/^ferretdb_client_requests_total\{command="([^"]+)",opcode="[^"]+"\} (\d+)/gm)) {
    const name = m[1] ?? '';
    counts.set(name, (counts.get(name) ?? 0) + Number(m[2]));
  }
  return counts;
}

export function countsSince(after: CommandCounts, before: CommandCounts): CommandCounts {
  const d: CommandCounts = new Map();
  for (const [k, v] of after) if (v - (before.get(k) ?? 0) > 0) d.set(k, v - (before.get(k) ?? 0));
  return d;
}

/**
 * Commands per task: what a window of `elapsedMs` with `tasks` tasks sent, less what the idle
 * stack sends in that time (pollers, sweepers; `idle` was counted over `idleMs`).
 */
export function perTask(run: CommandCounts, tasks: number, elapsedMs: number, idle: CommandCounts, idleMs: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [cmd, n] of run) {
    const net = Math.max(0, n - ((idle.get(cmd) ?? 0) * elapsedMs) / idleMs);
    if (net > 0) out[cmd] = Math.round((net / tasks) * 100) / 100;
  }
  return out;
}

/** Commands that cost about nothing next to a write (handshakes, pings, session ends). */
const CHEAP = new Set(['hello', 'isMaster', 'ismaster', 'ping', 'endSessions', 'buildInfo', 'unknown']);

/**
 * Tasks per second the database alone could carry: each command priced at its measured ceiling
 * (inserts at the insert rate; updates and deletes at the update rate; reads at the find rate).
 */
export function dbBoundTasksPerS(
  perTaskCounts: Record<string, number>,
  ceilings: Pick<Ceilings, 'db_inserts_per_s' | 'db_updates_per_s' | 'db_find_by_id_per_s'>,
): number {
  let seconds = 0;
  for (const [cmd, n] of Object.entries(perTaskCounts)) {
    if (CHEAP.has(cmd)) continue;
    const rate =
      cmd === 'insert'
        ? ceilings.db_inserts_per_s
        : cmd === 'update' || cmd === 'delete' || cmd === 'findAndModify'
          ? ceilings.db_updates_per_s
          : ceilings.db_find_by_id_per_s;
    seconds += n / rate;
  }
  return seconds > 0 ? Math.round(1 / seconds) : NaN;
}
