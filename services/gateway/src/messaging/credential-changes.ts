import { QUEUES } from '@tes/contracts';
import type { Broker } from '@tes/messaging';
import type { CredentialsCache } from '../domain/credentials-cache.js';

/**
 * This replica's own queue of `gateway.credentials_changed`: whoever revokes a key or changes an
 * account (any replica's dashboard, the operator CLI) has every replica drop its cached copy at
 * once. The cache serves entries only while this queue stays attached.
 */
export async function followCredentialChanges(broker: Broker, cache: CredentialsCache, replica: string): Promise<void> {
  const handle = await broker.consume(
    QUEUES.gatewayCredentialChanges(replica),
    async (d) => {
      cache.invalidate(d.data.account_id);
    },
    { prefetch: 64 },
  );
  cache.followChanges(() => handle.attachment()?.id);
}
