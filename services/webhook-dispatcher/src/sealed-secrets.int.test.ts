import { randomBytes } from 'node:crypto';
import mongoose from 'mongoose';
import { KeyRing } from '@tes/sealing';
import { MONGO_URL, memoryLogger, startReceiver, waitFor } from '@tes/testing';
import { startDispatcher } from './composition.js';
import { setEndpoint } from './domain/manage-endpoint.use-case.js';
import { rotateSecret } from './domain/manage-secrets.use-case.js';
import { generateSecret } from './domain/secret.js';
import { DEVELOPMENT_KEYS } from './secret-keys.js';
import { SecretRepository } from './store/secret.repository.js';
import { hexHmac, startHarness, taskEvent, testConfig, webhookOf, type Harness } from '../test/fixtures.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * Signing secrets at rest: sealed with the key ring (WEBHOOK_SECRET_KEYS), never in plaintext in
 * the database; plaintext versions from before sealing are sealed at boot or on first read and
 * still sign; a rotated key ring still opens what the old key sealed. Real database, broker, receiver.
 */
describe('sealed webhook secrets', () => {
  let h: Harness;
  let receiver: Receiver;
  let conn: mongoose.Connection;
  // The receiver listens on 127.0.0.1: a private target, allowed here as in the test stacks.
  const guard = { allowedHosts: new Set<string>(), allowPrivate: true };

  beforeAll(async () => {
    h = await startHarness('wd_sealed');
    receiver = await startReceiver();
    conn = await mongoose.createConnection(MONGO_URL, { dbName: h.db }).asPromise();
  });

  afterAll(async () => {
    await conn?.close();
    await h?.close();
    await receiver?.close();
  });

  const raw = () => conn.collection('webhook_secrets');
  const delivered = (task: string) =>
    waitFor(() => receiver.received.find((r) => webhookOf(r.rawBody).task_id === task) ?? null, { what: `the delivery of ${task}` });

  /** A version as written before sealing: the secret in plaintext. */
  async function insertLegacy(account: string, secret = generateSecret()): Promise<string> {
    const doc = { _id: `${account}:test:1`, account_id: account, environment: 'test', version: 1, secret, created_at: new Date() };
    await raw().insertOne({ ...doc, previous_valid_until: null } as never);
    return secret;
  }

  it('keeps no whsec_ anywhere in the database after an endpoint is set, its secret rotated and a webhook sent', async () => {
    const first = await h.configure('acc_sealed', 'test', receiver.url);
    const rotated = await rotateSecret(h.dispatcher.repos.secrets, 'acc_sealed', 'test', 24);
    await h.publish(taskEvent('completed', { task: 'task_sealed', account: 'acc_sealed', version: 1 }));
    const req = await delivered('task_sealed');
    // Signing uses the opened secrets: the new one and, within the grace period, the previous one.
    expect((req.headers['x-service-signature'] as string).split(',')).toEqual([
      hexHmac(rotated.webhook_secret, req.rawBody),
      hexHmac(first, req.rawBody),
    ]);

    const bodies = [first, rotated.webhook_secret].map((s) => s.slice('whsec_'.length));
    for (const c of await conn.db!.listCollections().toArray()) {
      for (const doc of await conn.collection(c.name).find().toArray()) {
        const text = JSON.stringify(doc);
        expect(text).not.toContain('whsec_');
        for (const b of bodies) expect(text).not.toContain(b);
      }
    }
    const stored = await raw().find({ account_id: 'acc_sealed' }).toArray();
    expect(stored).toHaveLength(3); // test v1 and v2, live v1
    for (const d of stored) {
      expect(d['sealed']).toMatch(/^v1\.dev\./);
      expect(d).not.toHaveProperty('secret');
    }
  });

  it('seals a plaintext secret on its first read, and it still signs', async () => {
    const legacy = await insertLegacy('acc_legacy');
    // Setting the endpoint reads the environment's secret: that read seals it.
    await setEndpoint({ ...h.dispatcher.repos, guard }, 'acc_legacy', 'test', receiver.url);
    const doc = await raw().findOne({ _id: 'acc_legacy:test:1' as never });
    expect(doc).not.toHaveProperty('secret');
    expect(doc?.['sealed']).toMatch(/^v1\.dev\./);

    await h.publish(taskEvent('completed', { task: 'task_legacy', account: 'acc_legacy', version: 1 }));
    const req = await delivered('task_legacy');
    expect(req.headers['x-service-signature']).toBe(hexHmac(legacy, req.rawBody));
  });

  it('competing replicas reading one plaintext secret get the same value and leave one sealed form', async () => {
    const legacy = await insertLegacy('acc_race');
    const second = h.replicas[1] ?? (await h.addReplica());
    const reads = await Promise.all([h.dispatcher, second, h.dispatcher, second].map((d) => d.repos.secrets.latest('acc_race', 'test', 1)));
    expect(reads.map((r) => r[0]?.secret)).toEqual([legacy, legacy, legacy, legacy]);
    const doc = await raw().findOne({ _id: 'acc_race:test:1' as never });
    expect(doc).not.toHaveProperty('secret');
    expect((await h.dispatcher.repos.secrets.latest('acc_race', 'test', 1))[0]?.secret).toBe(legacy);
  });

  it('seals every plaintext secret at boot, read or not', async () => {
    const legacy = await insertLegacy('acc_boot');
    const replica = await h.addReplica();
    const doc = await raw().findOne({ _id: 'acc_boot:test:1' as never });
    expect(doc).not.toHaveProperty('secret');
    expect(JSON.stringify(doc)).not.toContain(legacy);
    expect((await replica.repos.secrets.latest('acc_boot', 'test', 1))[0]?.secret).toBe(legacy);
  });

  it('after a key rotation opens what the old key sealed, seals with the new key, and reseal moves everything to it', async () => {
    const before = await h.configure('acc_rekey', 'test', receiver.url);
    const k2 = `k2:${randomBytes(32).toString('base64')}`;
    const { logger } = memoryLogger('webhook-dispatcher');
    // A replica deployed with the new key first and the old one still in the ring.
    const rotatedRing = await startDispatcher(testConfig(h.ns, h.db, { WEBHOOK_SECRET_KEYS: `${k2},${DEVELOPMENT_KEYS}` }), logger);
    try {
      expect((await rotatedRing.repos.secrets.latest('acc_rekey', 'test', 1))[0]?.secret).toBe(before);
      const next = await rotateSecret(rotatedRing.repos.secrets, 'acc_rekey', 'test', 24);
      expect((await raw().findOne({ _id: 'acc_rekey:test:2' as never }))?.['sealed']).toMatch(/^v1\.k2\./);

      // Signing during the grace period opens both: the new version (k2) and the old one (dev).
      const [current, previous] = await rotatedRing.repos.secrets.latest('acc_rekey', 'test', 2);
      expect([current?.secret, previous?.secret]).toEqual([next.webhook_secret, before]);

      const res = await rotatedRing.repos.secrets.sealAll(true);
      expect(res.resealed).toBeGreaterThan(0);
      const kids = (await raw().find().toArray()).map((d) => KeyRing.kidOf(String(d['sealed'])));
      expect(new Set(kids)).toEqual(new Set(['k2']));
      // A second reseal has nothing left to do.
      expect(await rotatedRing.repos.secrets.sealAll(true)).toEqual({ sealed: 0, resealed: 0 });

      // The old key can now be dropped: a ring of k2 alone opens every version.
      const own = await mongoose.createConnection(MONGO_URL, { dbName: h.db }).asPromise();
      try {
        const onlyNew = new SecretRepository(own, KeyRing.parse(k2));
        const versions = await onlyNew.latest('acc_rekey', 'test', 2);
        expect(versions.map((v) => v.secret)).toEqual([next.webhook_secret, before]);
        // ...and a ring without the key a version was sealed with refuses it rather than guess.
        const wrong = new SecretRepository(own, KeyRing.parse(`k3:${randomBytes(32).toString('base64')}`));
        await expect(wrong.latest('acc_rekey', 'test', 1)).rejects.toThrow(/not in the key ring/);
      } finally {
        await own.close();
      }
    } finally {
      await rotatedRing.stop(2000);
    }
  });
});
