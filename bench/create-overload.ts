/**
 * Creates beyond what the stack carries, with and without load shedding: the whole stack, open
 * load at RATE creates/s over 4 accounts for 10 s (2 s warm-up discarded), once per value of the
 * gateway's CREATE_SHED_AFTER_MS in SHED (a fresh stack each). Prints, per value, the 201s and
 * their latency, and the errors (the gateway's 503s) and how fast they were answered.
 *
 *   RATE=50 SHED=0,1000 pnpm exec tsx bench/create-overload.ts
 */
import { removeStack, startStack } from '@tes/testing';
import { keepAliveClient } from './lib/http-client.js';
import { benchAccountKeys } from './lib/accounts.js';
import { startWebhookReceiver } from './lib/receiver.js';
import { gatewayTlsEnv } from './lib/tls-files.js';
import { openLoad, summarize } from './lib/load.js';

const RATE = Number(process.env['RATE'] ?? 50);
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 10);

for (const shed of (process.env['SHED'] ?? '0,1000').split(',')) {
  const receiver = await startWebhookReceiver();
  const stack = await startStack({
    env: { '*': { LOG_LEVEL: 'warn' }, gateway: { ...(await gatewayTlsEnv()), CREATE_SHED_AFTER_MS: shed } },
  });
  try {
    const keys = await benchAccountKeys(stack, 'overload', `${receiver.base}/ok/main`, 4);
    const client = keepAliveClient(256);
    await new Promise((r) => setTimeout(r, 3000));
    let i = 0;
    const r = await openLoad({
      ratePerSec: RATE,
      durationMs: SECONDS * 1000,
      warmupMs: 2000,
      fire: async () => {
        const key = keys[i++ % keys.length] ?? '';
        const res = await client.request('POST', `${stack.baseUrl}/tasks`, { authorization: `Bearer ${key}` }, '{"prompt":"Echo \\"x\\""}');
        if (res.status !== 201) throw new Error(`create answered ${res.status}`);
        return '201';
      },
    });
    console.log(
      JSON.stringify({
        create_shed_after_ms: Number(shed),
        rate_per_s: RATE,
        sent: r.sent,
        statuses: r.statuses,
        created_latency_ms: summarize(r.latenciesMs),
        errors_answered_in_ms: summarize(r.errorLatenciesMs),
      }),
    );
  } finally {
    await stack.stopAll();
    await removeStack(stack);
    await receiver.close();
  }
}
