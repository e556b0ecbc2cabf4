/** This service's side of `pnpm bench:peer`: the whole stack, started as `pnpm bench` starts it. */
import { removeStack, startStack } from '@tes/testing';
import { benchAccountKeys } from '../lib/accounts.js';
import { keepAliveClient } from '../lib/http-client.js';
import { cpuMeter } from '../lib/proc.js';
import { gatewayTlsEnv } from '../lib/tls-files.js';
import type { Side } from './measure.js';

export interface ServiceUnderTest {
  /** A side whose every task is the prompt given. */
  side(prompt: string): Side;
  /** Runs one task of the prompt and answers the actions its trace shows were run (proves the shape). */
  actionsRun(prompt: string): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startThisService(mongoUrl: string, webhookUrl: string, completeAt: Map<string, number>): Promise<ServiceUnderTest> {
  const stack = await startStack({
    mongoUrl,
    env: {
      '*': { LOG_LEVEL: 'warn' },
      gateway: await gatewayTlsEnv(),
      'webhook-dispatcher': { WEBHOOK_RETRY_SCHEDULE_MS: '500,500,500,500', POLL_INTERVAL_MS: '100' },
    },
  });
  const client = keepAliveClient(512);
  try {
    const keys = await benchAccountKeys(stack, 'peerbench', webhookUrl);
    let turn = 0;
    const key = () => keys[turn++ % keys.length] ?? '';
    return {
      async actionsRun(prompt) {
        const k = key();
        const r = await client.request('POST', `${stack.baseUrl}/tasks`, { authorization: `Bearer ${k}` }, JSON.stringify({ prompt }));
        if (r.status !== 201) throw new Error(`create answered ${r.status}: ${r.body}`);
        const id = (JSON.parse(r.body) as { id: string }).id;
        const deadline = Date.now() + 30_000;
        while (!completeAt.has(id) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
        const trace = await client.request('GET', `${stack.baseUrl}/tasks/${id}/trace`, { authorization: `Bearer ${k}` });
        return (JSON.parse(trace.body) as { steps?: { action?: string }[] }).steps?.map((st) => st.action ?? '?') ?? [];
      },
      side: (prompt) => {
        const body = JSON.stringify({ prompt });
        return {
          async fire() {
            const r = await client.request('POST', `${stack.baseUrl}/tasks`, { authorization: `Bearer ${key()}` }, body);
            if (r.status !== 201) throw new Error(`create answered ${r.status}`);
            return (JSON.parse(r.body) as { id: string }).id;
          },
          meter: () => cpuMeter(stack),
          completeAt,
        };
      },
      async stop() {
        client.close();
        await stack.stopAll();
        await removeStack(stack);
      },
    };
  } catch (err) {
    client.close();
    await stack.stopAll();
    await removeStack(stack);
    throw err;
  }
}
