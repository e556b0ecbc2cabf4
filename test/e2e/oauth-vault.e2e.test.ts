import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { DEFAULT_PARTITIONS, QUEUES, type ConnectionChanged, type CredentialGet } from '@tes/contracts';
import { Broker } from '@tes/messaging';
import { connectMongo } from '@tes/store';
import {
  AMQP_URL,
  freePort,
  memoryLogger,
  MONGO_URL,
  REPO_ROOT,
  startService,
  startStack,
  waitFor,
  waitReady,
  type ServiceProcess,
  type Stack,
} from '@tes/testing';
import { startAuthServer, type AuthServer } from '../../services/oauth-vault/test/auth-server.js';
import { Browser, consent } from '../../services/oauth-vault/test/browser.js';

/**
 * The built oauth-vault as real processes (two replicas) on an isolated broker namespace and
 * database, with a real OAuth 2.0 authorization server (oidc-provider) as the github provider,
 * driven over the broker as the executor and gateway do, and through its pages as a browser does.
 */
describe('oauth-vault service (real processes)', () => {
  const ACCOUNT = 'acct_e2e_oauth';
  const keys = `k1:${randomBytes(32).toString('base64')}`;
  const stateSecret = randomBytes(32).toString('base64url');
  let auth: AuthServer;
  let stack: Stack;
  let client: Broker;
  let replica: ServiceProcess | undefined;
  let publicUrl: string;
  const changes: ConnectionChanged[] = [];
  const handedOut = new Set<string>();

  beforeAll(async () => {
    const publicPort = await freePort();
    publicUrl = `http://127.0.0.1:${publicPort}`;
    auth = await startAuthServer({ redirectUri: `${publicUrl}/oauth/callback`, accessTokenTtl: 30 });
    stack = await startStack({
      only: ['oauth-vault'],
      env: {
        'oauth-vault': {
          ...auth.providerEnv('github'),
          PUBLIC_PORT: String(publicPort),
          PUBLIC_BASE_URL: publicUrl,
          NODE_ENV: 'production',
          VAULT_KEYS: keys,
          VAULT_STATE_SECRET: stateSecret,
          SWEEP_INTERVAL_MS: '200',
          LOG_LEVEL: 'debug',
        },
      },
    });
    client = new Broker({ url: AMQP_URL, source: 'e2e', logger: memoryLogger().logger, namespace: stack.namespace });
    await client.connect();
    for (let p = 0; p < DEFAULT_PARTITIONS; p++) {
      await client.consume({ ...QUEUES.orchestratorPartition(p), singleActiveConsumer: true }, async (d) => {
        if (d.type === 'connection.changed') changes.push(d.data);
      });
    }
  }, 90_000);

  afterAll(async () => {
    await replica?.stop();
    await client?.close(1000);
    await stack?.stopAll();
    await auth?.close();
  });

  const credential = async (q: Partial<CredentialGet> & { user_id: string }) => {
    const reply = await client.request(
      'credential.get',
      { account_id: ACCOUNT, environment: 'live', service: 'github', scopes: ['repo'], task_id: 'task_e2e', ...q },
      { timeoutMs: 20_000 },
    );
    if (reply.access_token) handedOut.add(reply.access_token);
    return reply;
  };

  it('connects a user through consent, then serves a token', async () => {
    const first = await credential({ user_id: 'e2e-user' });
    expect(first.status).toBe('authorization_required');
    expect(first.auth_url?.startsWith(`${publicUrl}/oauth/consent/`)).toBe(true);
    const page = await consent(new Browser(), first.auth_url ?? '');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Connected — you may close this window');
    const ev = await waitFor(() => changes.find((c) => c.user_id === 'e2e-user'), { what: 'connection.changed' });
    expect(ev).toMatchObject({ outcome: 'authorized', service: 'github', account_id: ACCOUNT });
    const ok = await credential({ user_id: 'e2e-user' });
    expect(ok.status).toBe('ok');
    expect(await auth.apiStatus(ok.access_token as string)).toBe(200);
    const list = await client.request(
      'connections.list',
      { account_id: ACCOUNT, environment: 'live', user_id: 'e2e-user' },
      { timeoutMs: 10_000 },
    );
    expect(list).toEqual({ ok: true, connections: [expect.objectContaining({ service: 'github', status: 'connected' })] });
  });

  it('makes one refresh for 20 parallel requests spread over two replicas', async () => {
    const opsPort = await freePort();
    replica = startService('oauth-vault', {
      ...stack.envOf('oauth-vault'),
      OPS_PORT: String(opsPort),
      PUBLIC_PORT: String(await freePort()),
    });
    await waitReady(opsPort, replica);
    // As if 25 of the token's 30 s had passed: it is now close to expiry.
    const mongo = await connectMongo({
      url: MONGO_URL,
      dbName: stack.envOf('oauth-vault')['MONGO_DB'] as string,
      logger: memoryLogger().logger,
    });
    await mongo.db!.collection('connections').updateOne({ user_id: 'e2e-user' }, { $set: { expires_at: new Date(Date.now() + 5000) } });
    await mongo.close();
    const before = await auth.stats();
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => credential({ user_id: 'e2e-user', task_id: `task_${i}` })));
    const after = await auth.stats();
    expect(replies.every((r) => r.status === 'ok')).toBe(true);
    expect(new Set(replies.map((r) => r.access_token)).size).toBe(1);
    expect(after.refresh_token - before.refresh_token).toBe(1);
    expect(after.refresh_errors - before.refresh_errors).toBe(0);
    expect(await auth.apiStatus(replies[0]?.access_token as string)).toBe(200);
    // Both replicas took a share of the requests.
    for (const proc of [stack.procs.get('oauth-vault'), replica]) expect(proc?.output()).toMatch(/"task_id":"task_1?\d"/);
  });

  it('revokes through the settings page reached by a CLI-made link', async () => {
    const ok = await credential({ user_id: 'e2e-user' });
    const cli = spawnSync(
      process.execPath,
      [
        path.join(REPO_ROOT, 'services/oauth-vault/dist/cli.js'),
        'settings-link',
        '--account',
        ACCOUNT,
        '--env',
        'live',
        '--user',
        'e2e-user',
      ],
      {
        env: { ...process.env, VAULT_STATE_SECRET: stateSecret, PUBLIC_BASE_URL: publicUrl },
        encoding: 'utf8',
      },
    );
    expect(cli.status).toBe(0);
    const browser = new Browser();
    const page = await browser.get(JSON.parse(cli.stdout).url);
    expect(page.text).toContain('GitHub');
    const after = await browser.submit(page, {}, browser.formIndex(page, 'service', 'github'));
    expect(after.text).toContain('GitHub has been disconnected');
    await waitFor(() => changes.find((c) => c.user_id === 'e2e-user' && c.outcome === 'revoked'), { what: 'revoked event' });
    expect(await auth.apiStatus(ok.access_token as string)).toBe(401);
    expect((await credential({ user_id: 'e2e-user' })).status).toBe('authorization_required');
  });

  it('never writes a token to its logs, and stops cleanly on SIGTERM', async () => {
    const proc = stack.procs.get('oauth-vault') as ServiceProcess;
    const secrets = [...(await auth.revokedTokens()), ...handedOut];
    expect(secrets.length).toBeGreaterThan(2);
    const logs = proc.output() + (replica?.output() ?? '');
    expect(logs).toContain('token refreshed');
    for (const t of secrets) expect(logs).not.toContain(t);
    expect(await replica?.stop()).toBe(0);
    replica = undefined;
    expect(await stack.stop('oauth-vault')).toBe(0);
  });

  it('refuses to start in production without its key ring and state secret', async () => {
    const proc = startService('oauth-vault', {
      ...stack.envOf('oauth-vault'),
      VAULT_KEYS: '',
      VAULT_STATE_SECRET: '',
      OPS_PORT: String(await freePort()),
      PUBLIC_PORT: '0',
    });
    expect(await new Promise((r) => proc.child.once('close', r))).toBe(1);
    expect(proc.output()).toMatch(/VAULT_KEYS and VAULT_STATE_SECRET must be set in production/);
  });
});
