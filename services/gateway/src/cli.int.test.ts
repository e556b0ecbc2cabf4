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
});
