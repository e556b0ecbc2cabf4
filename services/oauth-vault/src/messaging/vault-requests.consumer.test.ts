import type { AnyDelivery, Broker, Handler } from '@tes/messaging';
import { memoryLogger } from '@tes/testing';
import type { VaultDeps } from '../domain/deps.js';
import { consumeVaultRequests } from './vault-requests.consumer.js';

/**
 * The consumer alone, with a broker that hands it messages directly: every line it and the
 * use cases write for a request carries the requester's correlation id, and none a token.
 */
describe('vault requests consumer', () => {
  const { logger, lines } = memoryLogger('oauth-vault');
  let handle: Handler | undefined;
  const broker = {
    consume: async (_queue: unknown, handler: Handler) => {
      handle = handler;
    },
  } as unknown as Broker;
  const deps = {
    logger,
    providers: { isDeployed: () => false },
    customProviders: { delete: async () => true },
    connections: {
      deleteForService: async () => 1,
      listFor: async () => {
        throw new Error('store refused the query with Bearer ya29.leaked-token');
      },
    },
    pending: { deleteForService: async () => 0 },
  } as unknown as VaultDeps;

  beforeAll(async () => {
    await consumeVaultRequests(broker, deps, 1);
  });

  const deliver = async (type: string, data: object, correlationId: string): Promise<unknown[]> => {
    const replies: unknown[] = [];
    const d = {
      type,
      data,
      envelope: {
        id: `msg_${correlationId}`,
        type,
        source: 'test',
        occurred_at: new Date().toISOString(),
        correlation_id: correlationId,
        data,
      },
      redelivered: false,
      reply: async (body: object) => {
        replies.push(body);
      },
    } as unknown as AnyDelivery;
    await handle!(d);
    return replies;
  };
  const linesOf = (correlationId: string) =>
    lines()
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l['message_id'] === `msg_${correlationId}`);

  it("logs a use case's own line with the request's correlation id", async () => {
    const replies = await deliver('provider.delete', { account_id: 'acct_1', environment: 'test', service: 'my_tool' }, 'req_vault_1');
    expect(replies).toEqual([{ ok: true }]);
    const logged = linesOf('req_vault_1');
    expect(logged.map((l) => l['message'])).toEqual(['vault request', 'custom provider deleted']);
    for (const l of logged) expect(l).toMatchObject({ correlation_id: 'req_vault_1', type: 'provider.delete' });
  });

  it('logs a failed request with its correlation id, redacted, and answers temporarily_unavailable', async () => {
    const replies = await deliver('connections.list', { account_id: 'acct_1', environment: 'test', user_id: 'u1' }, 'req_vault_2');
    expect(replies).toEqual([{ ok: false, error: { code: 'temporarily_unavailable', message: expect.any(String) } }]);
    const failed = linesOf('req_vault_2').find((l) => l['message'] === 'vault request failed');
    expect(failed).toMatchObject({ level: 'error', correlation_id: 'req_vault_2' });
    expect(lines().join('\n')).not.toContain('ya29.leaked-token');
  });
});
