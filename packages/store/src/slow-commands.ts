import type { Logger } from '@tes/logger';
import type { Connection } from 'mongoose';

type MongoClient = ReturnType<Connection['getClient']>;

/**
 * DB_SLOW_COMMAND_MS: log every database command that took at least this many milliseconds
 * (0 logs them all). Unset or empty: off. Read here, not in each service's config, so every
 * process that opens the database (the services and their CLIs) honours it alike.
 */
export function slowCommandMsFromEnv(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env['DB_SLOW_COMMAND_MS']?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw)) throw new Error(`DB_SLOW_COMMAND_MS must be a whole number of milliseconds (0 logs every command), got "${raw}"`);
  return Number(raw);
}

interface Started {
  name: string;
  collection: string;
  startedAt: number;
  poolWaitMs: number | undefined;
}

/**
 * Logs each command of `client` that took `thresholdMs` or more (the driver's command monitoring:
 * the client needs `monitorCommands: true`): its name, collection, database, time on the wire and,
 * apart, how long the operation waited for a pool connection before it (pool events), so a slow
 * server and an exhausted pool tell apart. Never the command's documents or filters.
 */
export function logSlowCommands(client: MongoClient, thresholdMs: number, logger: Logger): void {
  // The wait of a connection's latest check-out, given to the first command sent on it.
  const poolWait = new Map<number | string, number>();
  const started = new Map<number, Started>();
  client.on('connectionCheckedOut', (e) => poolWait.set(e.connectionId, e.durationMS));
  client.on('connectionClosed', (e) => poolWait.delete(e.connectionId));
  client.on('commandStarted', (e) => {
    const target = e.command[e.commandName] as unknown;
    const collection = e.command['collection'] as unknown; // getMore names its collection here
    const connection = e.connectionId ?? '';
    started.set(e.requestId, {
      name: e.commandName,
      collection: typeof target === 'string' ? target : typeof collection === 'string' ? collection : '',
      startedAt: Date.now(),
      poolWaitMs: poolWait.get(connection),
    });
    poolWait.delete(connection);
  });
  const finish = (e: { requestId: number; duration: number; databaseName: string }, failed: boolean) => {
    const s = started.get(e.requestId);
    started.delete(e.requestId);
    if (!s || e.duration < thresholdMs) return;
    logger.warn('slow database command', {
      command: s.name,
      collection: s.collection,
      db: e.databaseName,
      duration_ms: Math.round(e.duration * 10) / 10,
      pool_wait_ms: s.poolWaitMs === undefined ? null : Math.round(s.poolWaitMs * 10) / 10,
      started_at: new Date(s.startedAt).toISOString(),
      ...(failed ? { failed: true } : {}),
    });
  };
  client.on('commandSucceeded', (e) => finish(e, false));
  client.on('commandFailed', (e) => finish(e, true));
}
