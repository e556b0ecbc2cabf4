import { TaskServiceClient } from '../client.js';
import { TaskServiceError } from '../errors.js';
import type { Task } from '../types.js';
import { SDK_VERSION } from '../version.js';
import { startWebhookListener } from '../webhooks/listener.js';
import { USAGE, UsageError, parseCommand, type CommonFlags } from './args.js';

export interface CliIo {
  stdout(line: string): void;
  stderr(line: string): void;
  env: Record<string, string | undefined>;
  /** Resolves when a long-running command (webhooks listen) should stop. */
  stopped: Promise<unknown>;
}

/** Exit codes: 0 ok; 1 error (usage, API, network); 2 a waited-for task ended failed or cancelled. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return await run(argv, io);
  } catch (err) {
    io.stderr(JSON.stringify(errorEnvelope(err)));
    return 1;
  }
}

function errorEnvelope(err: unknown): unknown {
  if (err instanceof TaskServiceError) return err.toJSON();
  if (err instanceof UsageError) return { error: { code: err.code, message: err.message } };
  if (err instanceof TypeError) return { error: { code: 'invalid_arguments', message: err.message } };
  return { error: { code: 'cli_error', message: err instanceof Error ? err.message : String(err) } };
}

function clientOf(flags: CommonFlags, env: Record<string, string | undefined>): TaskServiceClient {
  const insecure = flags.insecure || ['1', 'true', 'yes'].includes((env['SERVICE_INSECURE_TLS'] ?? '').toLowerCase());
  return new TaskServiceClient({
    apiKey: env['SERVICE_API_KEY'],
    baseUrl: flags.baseUrl ?? (env['SERVICE_BASE_URL'] || undefined),
    insecure,
    timeoutMs: flags.timeoutMs,
    maxRetries: flags.maxRetries,
  });
}

const print = (io: CliIo, value: unknown) => io.stdout(JSON.stringify(value, null, 2));
const endCode = (task: Task) => (task.status === 'complete' ? 0 : 2);

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const cmd = parseCommand(argv);
  switch (cmd.kind) {
    case 'help':
      io.stdout(USAGE);
      return 0;
    case 'version':
      io.stdout(SDK_VERSION);
      return 0;
    case 'webhooks.listen': {
      const secret = cmd.secret ?? io.env['SERVICE_WEBHOOK_SECRET'];
      if (!secret) throw new UsageError('the webhook secret is required: --secret or SERVICE_WEBHOOK_SECRET');
      const listener = await startWebhookListener({
        port: cmd.port,
        host: cmd.host,
        secret,
        scheme: cmd.scheme,
        ...(cmd.toleranceSeconds === undefined ? {} : { toleranceSeconds: cmd.toleranceSeconds }),
        onEvent: (event) => io.stdout(JSON.stringify(event)),
        onRejected: (r) => io.stderr(JSON.stringify({ rejected: r })),
      });
      io.stderr(JSON.stringify({ listening: listener.url, scheme: cmd.scheme }));
      await io.stopped;
      await listener.close();
      return 0;
    }
    default:
      break;
  }

  const client = clientOf(cmd.common, io.env);
  try {
    switch (cmd.kind) {
      case 'tasks.create': {
        const created = await client.createTask(cmd.params, cmd.idempotencyKey === undefined ? {} : { idempotencyKey: cmd.idempotencyKey });
        if (!cmd.wait) {
          print(io, created);
          return 0;
        }
        const task = await client.waitForTask(created.id, cmd.waitTimeoutMs === undefined ? {} : { timeoutMs: cmd.waitTimeoutMs });
        print(io, task);
        return endCode(task);
      }
      case 'tasks.wait': {
        const task = await client.waitForTask(cmd.taskId, cmd.waitTimeoutMs === undefined ? {} : { timeoutMs: cmd.waitTimeoutMs });
        print(io, task);
        return endCode(task);
      }
      case 'tasks.get':
        print(io, await client.getTask(cmd.taskId));
        return 0;
      case 'tasks.list':
        print(io, await client.listTasks(cmd.params));
        return 0;
      case 'tasks.cancel':
        print(io, await client.cancelTask(cmd.taskId));
        return 0;
      case 'tasks.trace':
        print(io, await client.getTrace(cmd.taskId));
        return 0;
      case 'connections.list':
        print(io, await client.listConnections(cmd.userId));
        return 0;
      case 'connections.revoke':
        await client.revokeConnection(cmd.userId, cmd.service);
        print(io, { user_id: cmd.userId, service: cmd.service, revoked: true });
        return 0;
    }
  } finally {
    client.close();
  }
}
