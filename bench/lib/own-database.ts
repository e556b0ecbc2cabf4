/**
 * The MongoDB-wire server a benchmark's stack runs on: by default a FerretDB of its own
 * (@tes/testing's OwnMongo, the binary and flags scripts/infra.sh gives the shared server) on a
 * PostgreSQL database of its own, with its debug metrics on a port of its own. FerretDB v1 holds
 * one global lock during any schema change (create collection, createIndexes, dropDatabase) by any
 * client of the server, which stalls every other client: on the machine's shared server the other
 * test suites' databases stalled the benchmarks' tasks (docs/performance.md, "The mechanism,
 * isolated"). BENCH_SHARED_DB=1 runs on the shared server (MONGO_URL, FERRETDB_DEBUG_URL) instead.
 *
 * The server is stopped and its PostgreSQL database dropped by `close()`, and also whenever the
 * process exits without it (an error, process.exit) or is interrupted (Ctrl-C, SIGTERM, SIGHUP).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MONGO_URL, OwnMongo } from '@tes/testing';
import { FERRETDB_DEBUG_URL } from './db-commands.js';

export interface BenchDatabase {
  /** True for a server of the bench's own, false for the machine's shared one. */
  own: boolean;
  /** What the stack is given as MONGO_URL. */
  mongoUrl: string;
  /** FerretDB's debug handler: `${debugUrl}/debug/metrics` counts the server's commands. */
  debugUrl: string;
  /** FerretDB's PostgreSQL database (its activity and autovacuum, for the stall signals). */
  pgDatabase: string;
  /** A line for the bench's log: which server. */
  describe: string;
  /** Stops a private server and drops its PostgreSQL database (nothing for the shared one). */
  close(): Promise<void>;
}

/** The PostgreSQL database of the shared FerretDB (scripts/infra.sh). */
const SHARED_PG_DATABASE = 'ferretdb';

/** The signals that end a bench with its server stopped, and the exit code of each (128 + its number). */
const SIGNALS: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

export async function benchDatabase(): Promise<BenchDatabase> {
  if (process.env['BENCH_SHARED_DB'] === '1') {
    return {
      own: false,
      mongoUrl: MONGO_URL,
      debugUrl: FERRETDB_DEBUG_URL,
      pgDatabase: SHARED_PG_DATABASE,
      describe: `the machine's shared server at ${MONGO_URL} (BENCH_SHARED_DB=1)`,
      close: async () => undefined,
    };
  }
  const unavailable = OwnMongo.unavailable('ferretdb');
  if (unavailable) throw new Error(`cannot start a FerretDB of the bench's own: ${unavailable} (BENCH_SHARED_DB=1 uses the shared one)`);
  const root = mkdtempSync(path.join(os.tmpdir(), 'tes-bench-db-'));
  const server = new OwnMongo(root, { kind: 'ferretdb', name: 'bench' });
  let gone = false;
  // Whatever ends the process without close(): an exit hook cannot wait, so kill -9 and dropdb, synchronously.
  // The directory goes first: on Ctrl-C, pnpm and tsx may kill this process during the slower
  // dropdb (which then finishes on its own).
  const onExit = () => {
    if (gone) return;
    gone = true;
    rmSync(root, { recursive: true, force: true, maxRetries: 2 });
    server.destroyNow();
  };
  // A listener replaces Node's own exit on these signals: exit as it would have, the hook above included.
  const onSignal = (signal: NodeJS.Signals) => {
    process.stderr.write(`bench: ${signal}: stopping the bench's FerretDB and dropping its database ${server.pgDatabase}\n`);
    process.exit(SIGNALS[signal] ?? 1);
  };
  const signals = Object.keys(SIGNALS) as NodeJS.Signals[];
  process.on('exit', onExit);
  for (const signal of signals) process.on(signal, onSignal);
  try {
    await server.start();
  } catch (err) {
    onExit();
    throw err;
  }
  const debugUrl = server.debugUrl;
  if (!debugUrl) throw new Error('the bench FerretDB has no debug address');
  return {
    own: true,
    mongoUrl: server.url,
    debugUrl,
    pgDatabase: server.pgDatabase,
    describe: `a FerretDB of its own at ${server.url} (PostgreSQL database ${server.pgDatabase}, metrics at ${debugUrl})`,
    async close() {
      if (gone) return;
      await server.destroy();
      gone = true;
      rmSync(root, { recursive: true, force: true });
      process.removeListener('exit', onExit);
      for (const signal of signals) process.removeListener(signal, onSignal);
    },
  };
}
