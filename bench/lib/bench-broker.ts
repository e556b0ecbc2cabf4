/**
 * The bench's own broker connection outlives a transient broker problem. Its Broker recovers a
 * lost connection by itself (amqplib's recovery: a new connection, channels and topology), but
 * what was in flight fails with BrokerUnavailableError and nothing is sent meanwhile: a publish
 * waits for the connection and is sent again, a queue read waits for it too.
 */
import { BrokerUnavailableError, type Broker } from '@tes/messaging';

/** How long the bench waits for its broker connection to come back before it gives up. */
const RECOVERY_MS = 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once the broker is connected; throws after `timeoutMs` without it. */
export async function brokerConnected(broker: Broker, timeoutMs = RECOVERY_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!broker.isConnected) {
    if (Date.now() > deadline) throw new BrokerUnavailableError(`the bench's broker connection did not come back within ${timeoutMs} ms`);
    await sleep(100);
  }
}

/**
 * Runs `publish` (a confirmed publish with a fixed message id) until the broker confirms it: on
 * BrokerUnavailableError it waits for the connection and sends the message again. A message
 * that did reach the broker before its confirm was lost arrives twice under one id, which the
 * consumers' dedup absorbs. Returns how many attempts failed.
 */
export async function publishConfirmed(broker: Broker, publish: () => Promise<unknown>, timeoutMs = RECOVERY_MS): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (let failed = 0; ; failed++) {
    try {
      await publish();
      return failed;
    } catch (err) {
      if (!(err instanceof BrokerUnavailableError) || Date.now() > deadline) throw err;
      // Not at once: a publish can fail while the connection still counts as up (its channel alone closed).
      await sleep(Math.min(100 * 2 ** failed, 2000));
      await brokerConnected(broker, Math.max(0, deadline - Date.now()));
    }
  }
}
