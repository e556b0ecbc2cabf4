/**
 * The operator CLI as a real process against the real database and broker: a revocation or an
 * account change is stored, then announced (gateway.credentials_changed) so every gateway drops
 * its cached copy. That the replicas act on it is proven end to end in
 * test/e2e/conformance.limits.e2e.test.ts (two gateway replicas).
 */
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { QUEUES, type GatewayCredentialsChanged } from '@tes/contracts';
import { createLogger } from '@tes/logger';
import { Broker } from '@tes/messaging';
import { AMQP_URL, MONGO_URL, REPO_ROOT, runScript, uniqueName, waitFor } from '@tes/testing';

const CLI = path.join(REPO_ROOT, 'services', 'gateway', 'dist', 'cli.js');

describe('gateway operator CLI: credential changes', () => {
  const db = uniqueName('gw_cli');
  const ns = uniqueName('gwcli');
  let mongo: MongoClient;
  let broker: Broker;
  const heard: GatewayCredentialsChanged[] = [];

  beforeAll(async () => {
    mongo = await MongoClient.connect(MONGO_URL);
    broker = new Broker({ url: AMQP_URL, source: 'test', logger: createLogger({ service: 'test', level: 'error' }), namespace: ns });
    await broker.connect();
    await broker.consume(QUEUES.gatewayCredentialChanges('listener'), async (d) => {
      heard.push(d.data);
    });
  });

  afterAll(async () => {
    await broker?.close(2000);
    await mongo?.db(db).dropDatabase();
    await mongo?.close();
  });

  const cli = (env: Record<string, string>, ...args: string[]) =>
    runScript(CLI, args, { MONGO_URL, MONGO_DB: db, AMQP_URL, AMQP_NAMESPACE: ns, ...env });

  async function newAccount(): Promise<{ account_id: string }> {
    const run = await cli({}, 'accounts', 'create', '--name', 'cli-test');
    expect(run.code).toBe(0);
    return JSON.parse(run.stdout) as { account_id: string };
  }

  it('announces a revoked key, a disabled or enabled account and new limits to the gateways', async () => {
    const { account_id } = await newAccount();
    const listed = await cli({}, 'keys', 'list', '--account', account_id);
    const keyId = (JSON.parse(listed.stdout) as { key_id: string }[])[0]!.key_id;
    for (const args of [
      ['keys', 'revoke', '--key', keyId],
      ['accounts', 'disable', account_id],
      ['accounts', 'enable', account_id],
      ['accounts', 'set-limits', account_id, '--rpm', '5'],
    ]) {
      const before = heard.length;
      const run = await cli({}, ...args);
      expect([run.code, run.stderr]).toEqual([0, '']);
      await waitFor(() => heard.length > before, { timeoutMs: 5000, what: `the announcement of ${args.join(' ')}` });
      expect(heard.at(-1)).toEqual({ account_id });
    }
  });

  it('still stores a revocation when the broker is unreachable, and warns that the gateways will see it late', async () => {
    const { account_id } = await newAccount();
    const listed = await cli({}, 'keys', 'list', '--account', account_id);
    const keyId = (JSON.parse(listed.stdout) as { key_id: string }[])[0]!.key_id;
    const run = await cli({ AMQP_URL: 'amqp://guest:guest@127.0.0.1:1' }, 'keys', 'revoke', '--key', keyId);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ key_id: keyId, status: 'revoked' });
    expect(run.stderr).toContain('could not be told');
    expect(run.ms).toBeLessThan(15_000);
    expect(
      await mongo
        .db(db)
        .collection('api_keys')
        .findOne({ _id: keyId } as never),
    ).toMatchObject({ status: 'revoked' });
  });

  it('creates a named key, rolls it with an expiry (announced), lists names, last use and expiry, and refuses bad values', async () => {
    const { account_id } = await newAccount();
    const created = await cli({}, 'keys', 'create', '--account', account_id, '--env', 'live', '--name', '  billing worker ');
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout) as { key_id: string; api_key: string; name: string; status: string };
    expect(key).toMatchObject({ name: 'billing worker', status: 'active' });
    expect(key.api_key).toMatch(/^pk_live_/);

    const before = heard.length;
    const t0 = Date.now();
    const rolled = await cli({}, 'keys', 'roll', '--key', key.key_id, '--expires-in', '24h');
    expect([rolled.code, rolled.stderr]).toEqual([0, '']);
    const out = JSON.parse(rolled.stdout) as { key_id: string; api_key: string; name: string; replaced: Record<string, unknown> };
    expect(out.name).toBe('billing worker');
    expect(out.api_key).toMatch(/^pk_live_/);
    expect(out.api_key).not.toBe(key.api_key);
    expect(out.replaced).toMatchObject({ key_id: key.key_id, status: 'expiring' });
    const expiresAt = Date.parse(String(out.replaced['expires_at']));
    expect(expiresAt).toBeGreaterThanOrEqual(t0 + 86_400_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 86_400_000);
    await waitFor(() => heard.length > before, { timeoutMs: 5000, what: 'the announcement of the roll' });
    expect(heard.at(-1)).toEqual({ account_id });

    const listed = JSON.parse((await cli({}, 'keys', 'list', '--account', account_id)).stdout) as Record<string, unknown>[];
    expect(listed.map((k) => Object.keys(k).sort())[0]).toEqual(
      [
        'account_id',
        'created_at',
        'environment',
        'expires_at',
        'key_id',
        'last4',
        'last_used_at',
        'name',
        'prefix',
        'revoked_at',
        'status',
      ].sort(),
    );
    expect(listed.find((k) => k['key_id'] === key.key_id)).toMatchObject({ status: 'expiring', last_used_at: null });
    expect(listed.find((k) => k['key_id'] === out.key_id)).toMatchObject({ status: 'active', name: 'billing worker', expires_at: null });
    // The key itself is printed at creation and roll only.
    expect(JSON.stringify(listed)).not.toContain(key.api_key.slice(8));

    for (const args of [
      ['keys', 'roll', '--key', out.key_id, '--expires-in', '2h'],
      ['keys', 'create', '--account', account_id, '--env', 'test', '--name', 'x'.repeat(65)],
    ]) {
      const bad = await cli({}, ...args);
      expect(bad.code).toBe(1);
      expect(JSON.parse(bad.stderr)).toMatchObject({ error: { code: 'invalid_request' } });
    }
    // Revoked: it cannot be rolled.
    expect((await cli({}, 'keys', 'revoke', '--key', out.key_id)).code).toBe(0);
    const again = await cli({}, 'keys', 'roll', '--key', out.key_id);
    expect([again.code, JSON.parse(again.stderr).error.message]).toEqual([
      1,
      `key ${out.key_id} is revoked or expired: create a new one instead`,
    ]);
  });
});
