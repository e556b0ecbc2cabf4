import { QUEUES, type CredentialGet, type CredentialReply } from '@tes/contracts';
import type { Broker } from '@tes/messaging';

/**
 * A stand-in for the oauth-vault's credential.get consumer, on the test's own broker
 * namespace: every request makes a real round trip over RabbitMQ. `answer` decides
 * the reply; `requests` keeps what was asked (to check force_refresh).
 */
export interface FakeVault {
  requests: CredentialGet[];
  answer: (q: CredentialGet) => CredentialReply;
}

export async function startFakeVault(
  broker: Broker,
  answer: FakeVault['answer'] = () => ({ status: 'ok', access_token: 'tok-valid' }),
): Promise<FakeVault> {
  const vault: FakeVault = { requests: [], answer };
  await broker.consume(QUEUES.vaultRequests, async (d) => {
    if (d.type !== 'credential.get') return;
    const q = d.data;
    vault.requests.push(q);
    await d.reply(vault.answer(q));
  });
  return vault;
}
