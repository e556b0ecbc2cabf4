import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { Connection } from 'mongoose';
import {
  DEFAULT_PARTITIONS,
  QUEUES,
  type ConnectionChanged,
  type CredentialGet,
  type CredentialReply,
  type Environment,
} from '@tes/contracts';
import { Broker } from '@tes/messaging';
import { connectMongo, ensureIndexes } from '@tes/store';
import { AMQP_URL, freePort, memoryLogger, MONGO_URL, uniqueName } from '@tes/testing';
import { configSchema, type Config } from '../src/config.js';
import { parseEnv } from '@tes/config';
import type { VaultDeps } from '../src/domain/deps.js';
import { KeyRing } from '@tes/sealing';
import { TokenSigner } from '../src/domain/signed-tokens.js';
import { createApp } from '../src/http/app.js';
import { Sweeper } from '../src/jobs/sweeper.js';
import { connectionChangedPublisher } from '../src/messaging/connection-changed.publisher.js';
import { consumeVaultRequests } from '../src/messaging/vault-requests.consumer.js';
import { buildVault } from '../src/composition.js';
import { startAuthServer, type AuthServer } from './auth-server.js';

export const SERVICE = 'github';

export function newKey(): string {
  return randomBytes(32).toString('base64');
}

export interface Harness {
  namespace: string;
  dbName: string;
  baseUrl: string;
  auth: AuthServer;
  deps: VaultDeps;
  mongo: Connection;
  /** Requests as the executor/gateway do (another connection on the same namespace). */
  client: Broker;
  vaultBroker: Broker;
  sweeper: Sweeper;
  env: Record<string, string>;
  keys: string;
  stateSecret: string;
  /** connection.changed messages as the orchestrator would receive them. */
  changes: ConnectionChanged[];
  logLines(): string[];
  credential(q: Partial<CredentialGet> & { user_id: string }): Promise<CredentialReply>;
  list(
    user: string,
    environment?: Environment,
  ): Promise<{ ok: boolean; connections: { service: string; scopes: string[]; status: string; connected_at: string }[] }>;
  revoke(user: string, service?: string): Promise<{ ok: boolean; error?: { code: string; message: string } }>;
  /** A second vault replica (own database connection, own broker connection, own lease holder) on the same queue. */
  addReplica(o?: { keys?: string; consume?: boolean }): Promise<{ deps: VaultDeps; close(): Promise<void> }>;
  close(): Promise<void>;
}

export const ACCOUNT = 'acct_oauth_test';

/**
 * One vault in-process over the real broker (a unique namespace) and the real database (a
 * unique name), its public pages on a real port, and a real authorization server process
 * configured as the `github` provider.
 */
export async function startHarness(
  o: {
    accessTokenTtl?: number;
    env?: Record<string, string>;
    envFrom?: (auth: AuthServer) => Record<string, string>;
    keys?: string;
    sweepIntervalMs?: number;
  } = {},
): Promise<Harness> {
  const namespace = uniqueName('oauth');
  const dbName = namespace;
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const auth = await startAuthServer({ redirectUri: `${baseUrl}/oauth/callback`, accessTokenTtl: o.accessTokenTtl ?? 3600 });
  const keys = o.keys ?? `k1:${newKey()}`;
  const stateSecret = randomBytes(32).toString('base64url');
  const env: Record<string, string> = {
    ...auth.providerEnv(SERVICE),
    PUBLIC_PORT: String(port),
    PUBLIC_BASE_URL: baseUrl,
    PROBE_INTERVAL_S: '0',
    REFRESH_MARGIN_S: '60',
    REFRESH_AHEAD_S: '0',
    LEASE_TTL_MS: '5000',
    PROVIDER_TIMEOUT_MS: '5000',
    // The fake authorization servers listen on 127.0.0.1.
    OUTBOUND_ALLOW_PRIVATE: 'true',
    ...(o.envFrom?.(auth) ?? {}),
    ...(o.env ?? {}),
  };
  const config = parseEnv<Config>(configSchema, {
    ...env,
    MONGO_URL,
    AMQP_URL,
    MONGO_DB: dbName,
    AMQP_NAMESPACE: namespace,
    OPS_PORT: '0',
  });
  const { logger, lines } = memoryLogger('oauth-vault');
  const replica = async (ringSpec = keys, consume = true) => {
    const mongo = await connectMongo({ url: MONGO_URL, dbName, logger });
    const broker = new Broker({ url: AMQP_URL, source: 'oauth-vault', logger, namespace });
    const deps = buildVault({
      config,
      mongo,
      sink: connectionChangedPublisher(broker),
      logger,
      ring: KeyRing.parse(ringSpec),
      signer: new TokenSigner(stateSecret),
    });
    await ensureIndexes(mongo);
    await broker.connect();
    if (consume) await consumeVaultRequests(broker, deps, 64);
    return { mongo, broker, deps };
  };
  const { mongo, broker: vaultBroker, deps } = await replica();
  const server = http.createServer(createApp(deps));
  // Longer than any client's idle reuse: no reset of a socket the client is about to reuse.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const sweeper = new Sweeper(deps, { intervalMs: o.sweepIntervalMs ?? 200, outboxMinAgeMs: 200, retryMs: 500 });

  const client = new Broker({ url: AMQP_URL, source: 'test-client', logger, namespace });
  await client.connect();
  const changes: ConnectionChanged[] = [];
  for (let p = 0; p < DEFAULT_PARTITIONS; p++) {
    await client.consume({ ...QUEUES.orchestratorPartition(p), singleActiveConsumer: true }, async (d) => {
      if (d.type === 'connection.changed') changes.push(d.data);
    });
  }

  return {
    namespace,
    dbName,
    baseUrl,
    auth,
    deps,
    mongo,
    client,
    vaultBroker,
    sweeper,
    env,
    keys,
    stateSecret,
    changes,
    logLines: lines,
    async credential(q) {
      const data: CredentialGet = {
        account_id: ACCOUNT,
        environment: 'live',
        service: SERVICE,
        scopes: ['repo'],
        task_id: 'task_test',
        ...q,
      };
      return await client.request('credential.get', data, { timeoutMs: 20_000 });
    },
    async list(user, environment = 'live') {
      return (await client.request(
        'connections.list',
        { account_id: ACCOUNT, environment, user_id: user },
        { timeoutMs: 10_000 },
      )) as never;
    },
    async revoke(user, service = SERVICE) {
      return await client.request(
        'connection.revoke',
        { account_id: ACCOUNT, environment: 'live', user_id: user, service },
        { timeoutMs: 20_000 },
      );
    },
    async addReplica(ro: { keys?: string; consume?: boolean } = {}) {
      const r = await replica(ro.keys ?? keys, ro.consume ?? true);
      return {
        deps: r.deps,
        async close() {
          await r.broker.close(1000);
          await r.mongo.close();
        },
      };
    },
    async close() {
      await sweeper.stop();
      await new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      });
      await client.close(1000);
      await vaultBroker.close(1000);
      await mongo.dropDatabase().catch(() => undefined);
      await mongo.close();
      await auth.close();
    },
  };
}

/** All string values of a document, deeply (to look for raw tokens). */
export function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) value.forEach((v) => stringsOf(v, out));
  else if (value && typeof value === 'object' && !(value instanceof Date)) Object.values(value).forEach((v) => stringsOf(v, out));
  return out;
}
