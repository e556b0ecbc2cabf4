import { writeFileSync } from 'node:fs';
import path from 'node:path';
import mongoose, { type Connection } from 'mongoose';
import type { Logger } from '@tes/logger';
import { logSlowCommands, slowCommandMsFromEnv } from './slow-commands.js';

export interface MongoOptions {
  url: string;
  /** Each service owns its database on the shared server. */
  dbName: string;
  logger: Logger;
  /**
   * Benchmarks only (a service's TES_DB_COMMAND_STATS): counts every database command this
   * process sends, by command and collection (the driver's command monitoring), and writes the
   * counts to `<dir>/<db name>.json` on SIGUSR2 and at exit. Off when unset.
   */
  commandStatsDir?: string | undefined;
  /**
   * Log every command taking at least this many ms (0: all), with its wait for a pool connection
   * apart. When not given, DB_SLOW_COMMAND_MS's value (unset: off; docs/operations.md#logs).
   */
  slowCommandMs?: number | undefined;
  /**
   * The most connections (so commands in flight) this process keeps to the server; by default
   * DEFAULT_MAX_POOL_SIZE. On FerretDB v1 the sum over every client of the server must stay below
   * FerretDB's PostgreSQL pool (docs/operations.md, "Database pools").
   */
  maxPoolSize?: number | undefined;
}

/**
 * A service's connections to the database when not configured (MONGO_MAX_POOL_SIZE). FerretDB v1
 * deadlocks when the commands in flight hold every connection of its PostgreSQL pool: an update
 * holds one while it waits for a second, or for the metadata lock a collection or index creation
 * holds while it waits for a connection. Five services of 6 each keep 30 commands in flight at most,
 * below the 40 connections scripts/infra.sh gives FerretDB (docs/operations.md, "Database pools").
 */
export const DEFAULT_MAX_POOL_SIZE = 6;

/**
 * One connection per service. Only features both MongoDB and FerretDB v1 support
 * are used: no transactions, no change streams, TTL enforced in code.
 */
export async function connectMongo(options: MongoOptions): Promise<Connection> {
  const slowMs = options.slowCommandMs ?? slowCommandMsFromEnv();
  const conn = mongoose.createConnection(options.url, {
    dbName: options.dbName,
    serverSelectionTimeoutMS: 10_000,
    maxPoolSize: options.maxPoolSize ?? DEFAULT_MAX_POOL_SIZE,
    autoIndex: false,
    autoCreate: false,
    ...(options.commandStatsDir || slowMs !== undefined ? { monitorCommands: true } : {}),
  });
  conn.on('disconnected', () => options.logger.warn('mongo disconnected'));
  conn.on('reconnected', () => options.logger.info('mongo reconnected'));
  // Before the first command (mongoose's connect sends none of its own): none is missed.
  if (slowMs !== undefined) logSlowCommands(conn.getClient(), slowMs, options.logger);
  await conn.asPromise();
  if (options.commandStatsDir) countCommands(conn, path.join(options.commandStatsDir, `${options.dbName}.json`));
  options.logger.info('mongo connected', { db: options.dbName });
  return conn;
}

/** Creates the declared indexes of every model (idempotent; run at boot). */
export async function ensureIndexes(conn: Connection): Promise<void> {
  for (const model of Object.values(conn.models)) {
    await model.createCollection().catch((err: unknown) => {
      if (!isNamespaceExists(err)) throw err;
    });
    await model.createIndexes();
  }
}

function isNamespaceExists(err: unknown): boolean {
  const e = err as { code?: number; codeName?: string };
  return e.code === 48 || e.codeName === 'NamespaceExists';
}

export function isDuplicateKey(err: unknown): boolean {
  const e = err as { code?: number; writeErrors?: { code?: number }[] };
  return e.code === 11000 || (e.writeErrors?.some((w) => w.code === 11000) ?? false);
}

/**
 * Claims, leases, dedup and idempotency are inserts into a uniquely indexed
 * collection: exactly one insert wins, on MongoDB and FerretDB alike.
 * Returns true for the winner.
 */
export async function claim(conn: Connection, collection: string, doc: { _id: string } & Record<string, unknown>): Promise<boolean> {
  try {
    await conn.collection(collection).insertOne(doc as never);
    return true;
  } catch (err) {
    if (isDuplicateKey(err)) return false;
    throw err;
  }
}

export function isConnected(conn: Connection): boolean {
  return conn.readyState === mongoose.ConnectionStates.connected;
}

function countCommands(conn: Connection, file: string): void {
  const counts: Record<string, number> = {};
  const write = () => writeFileSync(file, `${JSON.stringify(counts)}\n`);
  const client = conn.getClient();
  client.on('commandStarted', (e: { commandName: string; command: Record<string, unknown> }) => {
    const target = e.command[e.commandName];
    const collection = e.command['collection']; // getMore names its collection here
    const key = `${e.commandName} ${typeof target === 'string' ? target : typeof collection === 'string' ? collection : ''}`;
    counts[key] = (counts[key] ?? 0) + 1;
  });
  process.on('SIGUSR2', write);
  process.on('exit', write);
}
