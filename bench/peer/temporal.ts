/**
 * The peer: Temporal's development server (`temporal server start-dev`, one process with an
 * in-memory SQLite) and a TypeScript SDK worker (bench/peer/temporal/*.cjs), both installed by
 * bench/peer/install.sh into ~/.cache/tes/peer, outside the workspace. The SDK is loaded from
 * there at run time, so the workspace neither depends on it nor type-checks against it: the
 * few client calls the bench makes are typed here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const PEER_DIR = process.env['TES_PEER_DIR'] ?? path.join(os.homedir(), '.cache/tes/peer');
const TASK_QUEUE = 'tes-peer';

/** The part of @temporalio/client the bench uses. */
interface TemporalClientModule {
  Connection: { connect(options: { address: string }): Promise<{ close(): Promise<void> }> };
  Client: new (options: { connection: unknown }) => {
    workflow: {
      start(workflow: string, options: { taskQueue: string; workflowId: string; args: unknown[] }): Promise<{ workflowId: string }>;
    };
  };
}

export type PeerWorkflow = 'oneStep' | 'threeSteps';

export interface TemporalPeer {
  /** Starts a workflow; resolves once the server accepted it (as a create answers 201). */
  start(workflow: PeerWorkflow, workflowId: string, input: { text: string; webhook: string }): Promise<void>;
  /** The processes whose CPU is the peer's: the server and the worker. */
  processes: Map<number, string>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

/** A child whose output goes to a log file (never to the bench's own streams), ended by `stop`. */
function spawnLogged(cmd: string, args: string[], logFile: string, env: NodeJS.ProcessEnv = process.env): ChildProcess {
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = createWriteStream(logFile);
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  return child;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

export async function startTemporalPeer(log: (msg: string) => void): Promise<TemporalPeer> {
  const cli = path.join(PEER_DIR, 'bin/temporal');
  const nodeModules = path.join(PEER_DIR, 'node/node_modules');
  if (!existsSync(cli) || !existsSync(path.join(nodeModules, '@temporalio/worker')))
    throw new Error(`the peer is not installed in ${PEER_DIR}: run bash bench/peer/install.sh`);
  const logs = path.join(PEER_DIR, 'logs');
  mkdirSync(logs, { recursive: true });

  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const server = spawnLogged(
    cli,
    [
      'server',
      'start-dev',
      '--headless',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--http-port',
      String(await freePort()),
      '--metrics-port',
      String(await freePort()),
      '--log-level',
      'error',
    ],
    path.join(logs, 'server.log'),
  );
  const children: ChildProcess[] = [server];
  const stop = async () => {
    for (const c of children.reverse()) await stopChild(c);
  };
  try {
    const { Client, Connection } = createRequire(path.join(PEER_DIR, 'node/package.json'))('@temporalio/client') as TemporalClientModule;
    // The server answers once its frontend is up; the default namespace is created at start.
    const deadline = Date.now() + 60_000;
    let connection: Awaited<ReturnType<TemporalClientModule['Connection']['connect']>> | undefined;
    while (!connection) {
      if (server.exitCode !== null) throw new Error(`temporal server exited ${server.exitCode} (see ${logs}/server.log)`);
      try {
        connection = await Connection.connect({ address });
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    const conn = connection;

    const worker = spawnLogged(
      process.execPath,
      [path.join(import.meta.dirname, 'temporal/worker.cjs'), address, TASK_QUEUE],
      path.join(logs, 'worker.log'),
      {
        ...process.env,
        NODE_PATH: nodeModules,
      },
    );
    children.push(worker);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the peer's worker was not ready in 120 s (see ${logs}/worker.log)`)), 120_000);
      worker.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) {
          clearTimeout(timer);
          resolve();
        }
      });
      worker.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the peer's worker exited ${String(code)} (see ${logs}/worker.log)`));
      });
    });
    log(`temporal dev server on ${address} (pid ${server.pid ?? '?'}), worker pid ${worker.pid ?? '?'}`);

    const client = new Client({ connection: conn });
    return {
      async start(workflow, workflowId, input) {
        await client.workflow.start(workflow, { taskQueue: TASK_QUEUE, workflowId, args: [input] });
      },
      processes: new Map([
        [server.pid ?? 0, 'temporal server'],
        [worker.pid ?? 0, 'temporal worker'],
      ]),
      async stop() {
        await conn.close();
        await stop();
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
