/**
 * Does one client's schema change hold up another client's updates on the MongoDB-wire server?
 * FerretDB v1.24 guards its metadata with one lock for the whole server
 * (internal/backends/postgresql/metadata/registry.go, `rw sync.RWMutex`, "acts like a global
 * lock"), and takes it exclusively in every insert and update (`CollectionCreate`, to create the
 * collection if missing), and for as long as a create, createIndexes or dropDatabase runs its
 * PostgreSQL statements. A probe sends one update at a time by _id on its own collection while a
 * second client, in turn: does nothing (quiet), inserts into an existing collection back to back
 * (load without schema changes: the control), inserts one document into a new collection each
 * time (FerretDB creates it: what a fresh stack does on the first write of each collection), or
 * creates a collection with an index and drops its database back to back (what test suites do). ROUNDS rounds of the three
 * phases, PHASE_SECONDS each, so the machine's other load falls on all three alike.
 *
 *   PHASE_SECONDS=10 ROUNDS=2 pnpm exec tsx bench/ferretdb-schema-lock.ts
 */
import os from 'node:os';
import { MongoClient } from 'mongodb';
import { MONGO_URL, uniqueName } from '@tes/testing';
import { summarize } from './lib/load.js';

const PHASE_MS = Number(process.env['PHASE_SECONDS'] ?? 10) * 1000;
const ROUNDS = Number(process.env['ROUNDS'] ?? 2);
const PHASES = [
  'quiet',
  'inserts (no schema change)',
  'first insert into a new collection',
  'create collection + index, drop database',
] as const;

const NEW_PER_DB = 200;

const base = uniqueName('lockprobe');
let created = 0;
const probeClient = await MongoClient.connect(MONGO_URL, { maxPoolSize: 2 });
const otherClient = await MongoClient.connect(MONGO_URL, { maxPoolSize: 2 });
const probe = probeClient.db(`${base}_probe`).collection<{ _id: string; n: number }>('probe');
const filler = otherClient.db(`${base}_filler`).collection<{ _id: string }>('filler');
try {
  await probe.insertOne({ _id: 'p', n: 0 });
  await filler.insertOne({ _id: 'first' });
  const latencies = new Map<string, number[]>(PHASES.map((p) => [p, []]));
  const otherOps = new Map<string, number>(PHASES.map((p) => [p, 0]));
  const loads: number[] = [];
  let n = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const phase of PHASES) {
      const end = Date.now() + PHASE_MS;
      const other = (async () => {
        while (Date.now() < end && phase !== 'quiet') {
          if (phase === 'inserts (no schema change)') {
            await filler.insertOne({ _id: `f${n++}` });
          } else if (phase === 'first insert into a new collection') {
            // At most NEW_PER_DB collections a database: dropping one takes a PostgreSQL lock per table and index.
            const k = created++;
            await otherClient
              .db(`${base}_new${Math.floor(k / NEW_PER_DB)}`)
              .collection(`c${k}`)
              .insertOne({});
          } else {
            const db = otherClient.db(`${base}_ddl${n++}`);
            await db.collection('c').createIndex({ k: 1 });
            await db.dropDatabase();
          }
          otherOps.set(phase, (otherOps.get(phase) ?? 0) + 1);
        }
      })();
      while (Date.now() < end) {
        const start = performance.now();
        await probe.updateOne({ _id: 'p' }, { $inc: { n: 1 } });
        latencies.get(phase)?.push(performance.now() - start);
        await new Promise((r) => setTimeout(r, 20));
      }
      await other;
      loads.push(os.loadavg()[0] ?? NaN);
    }
  }
  console.log(
    `${ROUNDS} rounds of ${PHASES.length} phases of ${PHASE_MS / 1000} s; load average (1 min) ${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)} on ${os.cpus().length} cores`,
  );
  console.log('Probe updates (one at a time, by _id, own collection), ms, by what the second client did:');
  console.table(
    Object.fromEntries(PHASES.map((p) => [p, { ...summarize(latencies.get(p) ?? []), 'second client ops': otherOps.get(p) ?? 0 }])),
  );
} finally {
  await probeClient.db(`${base}_probe`).dropDatabase();
  await otherClient.db(`${base}_filler`).dropDatabase();
  for (let d = 0; d * NEW_PER_DB < created; d++) await otherClient.db(`${base}_new${d}`).dropDatabase();
  await probeClient.close();
  await otherClient.close();
}
