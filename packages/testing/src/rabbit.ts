import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** The RabbitMQ virtual host of AMQP_URL ('/' when the URL names none): scripts/test.sh gives each run its own. */
export function vhostOf(amqpUrl: string): string {
  const path = new URL(amqpUrl).pathname;
  return path.length > 1 ? decodeURIComponent(path.slice(1)) : '/';
}

/**
 * rabbitmqctl, run without blocking the event loop (a broker under test keeps flushing its frames).
 * A broker shared with other work can list many queues and connections, so the output buffer is large.
 */
export async function rabbitmqctl(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)('rabbitmqctl', args, { maxBuffer: 256 * 1024 * 1024, timeout: 60_000 });
  return stdout;
}

/** Ready and unacknowledged counts of one queue of `vhost`, read from the broker itself. */
export async function queueCounts(vhost: string, fullName: string): Promise<{ ready: number; unacked: number } | undefined> {
  const out = await rabbitmqctl(
    'list_queues',
    '--vhost',
    vhost,
    'name',
    'messages_ready',
    'messages_unacknowledged',
    '-q',
    '--no-table-headers',
  );
  const row = out
    .split('\n')
    .map((line) => line.split('\t'))
    .find(([name]) => name === fullName);
  return row && { ready: Number(row[1]), unacked: Number(row[2]) };
}
