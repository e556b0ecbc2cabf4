import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { MONGO_URL, REPO_ROOT } from '@tes/testing';
import { Browser, consent } from '../test/browser.js';
import { ACCOUNT, newKey, SERVICE, startHarness, type Harness } from '../test/harness.js';
import { aadOf } from './domain/connection-docs.js';
import { getCredential } from './domain/get-credential.use-case.js';
import { refreshConnection } from './domain/refresh-connection.js';
import type { ConnectionDoc } from './domain/connection.js';

/**
 * Key rotation without downtime: a vault with the ring "k2,k1" writes under k2 and still reads
 * k1; `cli reencrypt` (the built CLI, as a process) moves every token and every custom tool's
 * client secret to k2; then k1 can go.
 */
describe('key rotation', () => {
  const k1 = `k1:${newKey()}`;
  const k2 = `k2:${newKey()}`;
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ keys: k1 });
  }, 60_000);

  afterAll(async () => {
    await h?.close();
  });

  const q = (user: string) => ({
    account_id: ACCOUNT,
    environment: 'live' as const,
    user_id: user,
    service: SERVICE,
    scopes: ['repo'],
    task_id: 'task_rot',
  });
  const all = async () =>
    (await h.mongo.db!.collection('connections').find({}).sort({ user_id: 1 }).toArray()) as unknown as ConnectionDoc[];
  const cli = (args: string[], keys: string) =>
    spawnSync(process.execPath, [path.join(REPO_ROOT, 'services/oauth-vault/dist/cli.js'), ...args], {
      env: { ...process.env, MONGO_URL, MONGO_DB: h.dbName, VAULT_KEYS: keys },
      encoding: 'utf8',
    });

  it('reads old keys, writes the current one, and re-encrypts everything with the CLI', async () => {
    for (const user of ['k-ann', 'k-ben', 'k-cat']) {
      const reply = await h.credential({ user_id: user, scopes: ['repo'] });
      expect((await consent(new Browser(), reply.auth_url as string)).text).toContain('Connected');
    }
    const tool = { account_id: ACCOUNT, environment: 'live' as const, service: 'rot_tool' };
    const registered = await h.client.request(
      'provider.register',
      {
        ...tool,
        display_name: 'Rotating tool',
        authorize_url: `${h.auth.issuer}/auth`,
        token_url: `${h.auth.issuer}/token`,
        client_id: 'rot-client',
        client_secret: 'rot-secret-0123456789',
      },
      { timeoutMs: 20_000 },
    );
    expect(registered).toEqual({ ok: true });
    const before = await all();
    expect(before.map((d) => d.key_id)).toEqual(['k1', 'k1', 'k1']);
    const plain = (d: ConnectionDoc, ring = h.deps.ring) => ({
      access: ring.decrypt(d.access_token_enc as string, aadOf(d._id, 'access_token')),
      refresh: ring.decrypt(d.refresh_token_enc as string, aadOf(d._id, 'refresh_token')),
    });
    const originals = before.map((d) => plain(d));

    // Deploy the ring "k2,k1": old tokens still decrypt; a new write (a refresh) uses k2.
    const rotated = await h.addReplica({ keys: `${k2},${k1}`, consume: false });
    try {
      const ok = await getCredential(q('k-ann'), rotated.deps);
      expect(ok).toMatchObject({ status: 'ok', access_token: originals[0]?.access });
      const ben = before[1] as ConnectionDoc;
      const refreshed = await refreshConnection(ben, rotated.deps, 'test');
      expect(refreshed.key_id).toBe('k2');
      expect((await all()).map((d) => d.key_id)).toEqual(['k1', 'k2', 'k1']);

      // Re-encrypt: the two k1 connections move to k2; tokens unchanged.
      const res = cli(['reencrypt'], `${k2},${k1}`);
      expect(res.status).toBe(0);
      expect(JSON.parse(res.stdout)).toEqual({
        current_key_id: 'k2',
        scanned: 2,
        rewritten: 2,
        failed: [],
        custom_providers: { scanned: 1, rewritten: 1, failed: [] },
      });
      expect(await h.mongo.db!.collection('custom_providers').findOne({ service: 'rot_tool' })).toMatchObject({
        key_id: 'k2',
        client_secret_enc: expect.stringMatching(/^v1\.k2\./),
      });
      const after = await all();
      expect(after.map((d) => d.key_id)).toEqual(['k2', 'k2', 'k2']);
      for (const d of after) {
        expect(d.access_token_enc).toMatch(/^v1\.k2\./);
        expect(d.refresh_token_enc).toMatch(/^v1\.k2\./);
      }
      expect(plain(after[0] as ConnectionDoc, rotated.deps.ring)).toEqual(originals[0]);
      expect(plain(after[2] as ConnectionDoc, rotated.deps.ring)).toEqual(originals[2]);
      expect(after[0]?.generation).toBe((before[0]?.generation ?? 0) + 1);
      // Nothing left to do the second time.
      expect(JSON.parse(cli(['reencrypt'], `${k2},${k1}`).stdout)).toMatchObject({
        scanned: 0,
        rewritten: 0,
        custom_providers: { scanned: 0, rewritten: 0 },
      });
    } finally {
      await rotated.close();
    }

    // k1 can now be dropped: a vault with only k2 serves every connection.
    const onlyK2 = await h.addReplica({ keys: k2, consume: false });
    try {
      for (const user of ['k-ann', 'k-ben', 'k-cat']) expect((await getCredential(q(user), onlyK2.deps)).status).toBe('ok');
      expect(await onlyK2.deps.providers.resolve('rot_tool', tool)).toMatchObject({ clientSecret: 'rot-secret-0123456789' });
    } finally {
      await onlyK2.close();
    }
    // And the old key alone no longer opens them.
    const onlyK1 = await h.addReplica({ keys: k1, consume: false });
    try {
      await expect(getCredential(q('k-ann'), onlyK1.deps)).rejects.toThrow(/not in the key ring/);
      await expect(onlyK1.deps.providers.resolve('rot_tool', tool)).rejects.toThrow(/not in the key ring/);
    } finally {
      await onlyK1.close();
    }
  });

  it('refuses to run without a key ring, and rejects malformed keys', () => {
    const none = spawnSync(process.execPath, [path.join(REPO_ROOT, 'services/oauth-vault/dist/cli.js'), 'reencrypt'], {
      env: { ...process.env, MONGO_DB: h.dbName, VAULT_KEYS: '' },
      encoding: 'utf8',
    });
    expect(none.status).toBe(1);
    expect(JSON.parse(none.stderr).error.message).toMatch(/VAULT_KEYS/);
    const bad = cli(['reencrypt'], 'k1:c2hvcnQ=');
    expect(bad.status).toBe(1);
    expect(JSON.parse(bad.stderr).error.message).toMatch(/32 bytes/);
  });
});
