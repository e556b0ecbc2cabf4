import { admin, type Stack } from '@tes/testing';

/**
 * `n` enterprise accounts without practical rate or concurrency limits, each sending its test
 * webhooks to `webhookUrl`; returns their test keys. Several accounts, as on a real platform: each
 * account's changes are serialized on its own orchestrator partition (the single-writer rule), so
 * one account is not the unit of scale.
 */
export async function benchAccountKeys(stack: Stack, prefix: string, webhookUrl: string, n = 8): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < n; i++) {
    const account = (await admin(['accounts', 'create', '--name', `${prefix}${i}`, '--plan', 'enterprise'], stack.adminEnv)) as {
      account_id: string;
      api_keys: { test: string };
    };
    await admin(['accounts', 'set-limits', account.account_id, '--rpm', '100000000', '--concurrency', '1000000'], stack.adminEnv);
    await admin(['webhooks', 'set', '--account', account.account_id, '--env', 'test', '--url', webhookUrl], stack.adminEnv);
    keys.push(account.api_keys.test);
  }
  return keys;
}
