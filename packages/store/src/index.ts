import mongoose, { type Connection } from 'mongoose';
import type { Logger } from '@tes/logger';

export interface MongoOptions {
  url: string;
  /** Each service owns its database on the shared server. */
  dbName: string;
  logger: Logger;
}

/**
 * One connection per service. Only features both MongoDB and FerretDB v1 support
 * are used: no transactions, no change streams, TTL enforced in code.
 */
export async function connectMongo(options: MongoOptions): Promise<Connection> {
  const conn = mongoose.createConnection(options.url, {
    dbName: options.dbName,
    serverSelectionTimeoutMS: 10_000,
    maxPoolSize: 20,
    autoIndex: false,
    autoCreate: false,
  });
  conn.on('disconnected', () => options.logger.warn('mongo disconnected'));
  conn.on('reconnected', () => options.logger.info('mongo reconnected'));
  await conn.asPromise();
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
