import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { Connection } from 'mongoose';
import type { StepRun } from '@tes/contracts';
import { createLogger, type Logger } from '@tes/logger';
import { Broker } from '@tes/messaging';
import { connectMongo, ensureIndexes } from '@tes/store';
import type { RunStepDeps } from '../domain/run-step.use-case.js';
import { SandboxRepository } from '../store/sandbox.repository.js';
import { StepRunRepository } from '../store/step-run.repository.js';
import { DEFAULT_SETTINGS, type EngineSettings } from '../tools/tool.js';

/**
 * In-process executor tests: a real MongoDB-wire database of their own and a real
 * broker on their own namespace (for the credential.get round trip to a stand-in vault).
 */
export interface Harness {
  mongo: Connection;
  broker: Broker;
  steps: StepRunRepository;
  sandbox: SandboxRepository;
  logger: Logger;
  deps(settings?: Partial<EngineSettings>): RunStepDeps;
  step(partial: Partial<StepRun> & Pick<StepRun, 'tool' | 'action' | 'input'>): StepRun;
  close(): Promise<void>;
}

export const AMQP_URL = process.env['AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672';
export const MONGO_URL = process.env['MONGO_URL'] ?? 'mongodb://127.0.0.1:27017';

export function unique(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}

/** Fast retries for tests, the sandbox without consent (SANDBOX_AUTO_CONNECT); everything else as in production. */
export const FAST: Partial<EngineSettings> = {
  sandboxAutoConnect: true,
  backoffMs: 20,
  backoffMaxMs: 100,
  retryAfterMaxMs: 5000,
  requestTimeoutMs: 3000,
  vaultTimeoutMs: 3000,
};

export async function startHarness(options: { broker?: boolean } = {}): Promise<Harness> {
  const logger = createLogger({ service: 'executor-test', stream: new PassThrough(), level: 'error' });
  const dbName = unique('exec');
  const mongo = await connectMongo({ url: MONGO_URL, dbName, logger });
  const steps = new StepRunRepository(mongo);
  const sandbox = new SandboxRepository(mongo);
  await ensureIndexes(mongo);
  const broker = new Broker({ url: AMQP_URL, source: 'executor-test', logger, namespace: unique('exec') });
  if (options.broker !== false) await broker.connect();
  return {
    mongo,
    broker,
    steps,
    sandbox,
    logger,
    deps: (settings = {}) => ({ steps, sandbox, logger, settings: { ...DEFAULT_SETTINGS, ...FAST, ...settings }, broker }),
    step(partial) {
      const taskId = partial.task_id ?? `task_${unique('t')}`;
      const index = partial.step_index ?? 0;
      return {
        task_id: taskId,
        account_id: 'acct_1',
        environment: 'test',
        user_id: 'user_1',
        step_index: index,
        step_count: Math.max(index + 1, 1),
        idempotency_key: `${taskId}:${index}`,
        timeout_ms: 20_000,
        ...partial,
      };
    },
    async close() {
      if (options.broker !== false) await broker.close(2000);
      await mongo.dropDatabase().catch(() => undefined);
      await mongo.close();
    },
  };
}
