import { spawn } from 'node:child_process';
import path from 'node:path';
import amqp from 'amqplib';
import { MongoClient } from 'mongodb';
import { partitionOf } from '@tes/contracts';
import {
  AMQP_URL,
  MONGO_URL,
  REPO_ROOT,
  durableQueueNames,
  freePort,
  removeStack,
  startService,
  startStack,
  waitFor,
  waitReady,
  type ServiceName,
  type ServiceProcess,
  type Stack,
} from '@tes/testing';
import { httpsClient, type Client } from '../chaos/http.js';
import { settleLedger } from '../chaos/ledger.js';
import type { ChaosAccount, Job } from '../chaos/load.js';
import { startChaosReceiver, type ChaosReceiver } from '../chaos/receiver.js';

/**
 * Changing PARTITIONS on a running system, with the five services as real processes under a
 * steady load of creates: grown from 4 to 8, then shrunk back to 4 on the same system, each time
 * following the procedure step by step:
 *  1. new orchestrator and gateway replicas start with PARTITIONS=<new> PARTITIONS_PREVIOUS=<old>
 *     next to the old ones: the old replicas hear the other count and stop consuming, and the new
 *     ones consume nothing either while the old ones beat (never two writers of one account);
 *  2. the old orchestrators and gateway get SIGTERM: a member timeout after their last beat the
 *     new replicas agree and consume, forwarding what sits in a partition its account no longer
 *     maps to (the executor still publishes on the old count) and, when shrinking, draining the
 *     queues past the new count;
 *  3. executor, vault and dispatcher move to PARTITIONS=<new> (a new executor and dispatcher
 *     before the old one stops; the vault, which keeps its public port, just after);
 *  4. the orchestrators and gateway are replaced by replicas without PARTITIONS_PREVIOUS.
 *
 * The load: a create every 1/RATE s, round robin over accounts mapping to partitions that change
 * and that stay, a quarter of them three-step workflows (step results in flight during the
 * switch); a create answered 5xx or not at all is sent again with its Idempotency-Key to a gateway
 * in rotation (a load balancer's: a gateway leaves it just before its SIGTERM). Then the ledger
 * (test/chaos/ledger.ts) must balance: every create accepted, every task complete with its
 * result, each of its events stored once and delivered (a task.complete for every task), GET
 * answers the terminal status (the read model caught up); no dead letter in any queue, nothing
 * left in any partition queue (those past a shrunk count included), every SIGTERM an exit 0, and
 * no process exited unasked.
 *
 * The reaper's stalled-task sweep is made too slow to matter (STALL_AFTER_MS 10 min): a lost step
 * result leaves its task stuck here instead of being re-dispatched a minute later. Its other sweep,
 * of outboxes still stored 5 s after their write, does run: a writer that stops consuming may
 * leave the clear of an outbox it published to the next writer (a duplicate publish, by design);
 * the reconciles it asked for are counted in the report line.
 *
 * The client sends `Connection: close`: the gateway's SIGTERM waits for every connection to close,
 * and an HTTP keep-alive connection that was busy at the SIGTERM stays open after its answer (until
 * the client closes it or keepAliveTimeout, 65 s), so a keep-alive client makes the old gateway
 * run into SHUTDOWN_TIMEOUT_MS and exit 1 (closeServer in packages/http closes idle connections
 * only once, when called).
 */

const RATE = 6;
const ACCOUNTS = 8;
/** The partition group's member timeout (PartitionGroup's default). */
const MEMBER_TIMEOUT_MS = 3500;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const PAUSED = 'a replica of the group runs with another partition count: consuming nothing until they agree';
const AGREED = 'partition group agrees on the partition count: consuming';

interface LogLine {
  at: number;
  level: string;
  message: string;
}

/** A service process and every line it wrote since it was started (ServiceProcess.output keeps only a tail). */
interface Watched {
  name: string;
  proc: ServiceProcess;
  lines: () => LogLine[];
}

interface Gateway extends Watched {
  url: string;
}

function watch(proc: ServiceProcess, name: string = proc.name): Watched {
  let text = proc.output();
  const keep = (c: Buffer) => (text += c.toString());
  proc.child.stdout?.on('data', keep);
  proc.child.stderr?.on('data', keep);
  return {
    name,
    proc,
    lines: () =>
      text.split('\n').flatMap((l) => {
        if (!l.startsWith('{')) return [];
        try {
          const j = JSON.parse(l) as { timestamp?: string; level?: string; message?: string };
          return [{ at: Date.parse(j.timestamp ?? ''), level: j.level ?? '', message: j.message ?? '' }];
        } catch {
          return [];
        }
      }),
  };
}

/** When the process first logged `message` at or after `since`, if it did. */
function logged(w: Watched, message: string, since = 0): number | undefined {
  return w.lines().find((l) => l.message === message && l.at >= since)?.at;
}

const alive = (p: ServiceProcess) => p.child.exitCode === null && p.child.signalCode === null;

/** SIGTERM, and SIGKILL if it has not exited 20 s later: nothing outlives the suite. */
async function stopProcess(p: ServiceProcess): Promise<number | null> {
  const kill = setTimeout(() => p.child.kill('SIGKILL'), 20_000);
  try {
    return await p.stop('SIGTERM');
  } finally {
    clearTimeout(kill);
  }
}

/**
 * The operator CLI (scripts/admin.mjs) as `admin()` of @tes/testing runs it, but without blocking,
 * so that accounts are made several at once. Standard input is empty (the CLI reads it).
 */
function adminAsync(stack: Stack, args: string[]): Promise<unknown> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'scripts', 'admin.mjs'), ...args], {
    env: { ...process.env, OUTBOUND_ALLOW_PRIVATE: 'true', ...stack.adminEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  return new Promise((resolve, reject) =>
    child.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`admin ${args.join(' ')} failed (${code}): ${err}`)),
    ),
  );
}

/** The webhook bodies the receiver got, with its answer. */
function hooks(receiver: ChaosReceiver): { event?: string; task_id?: string; timestamp?: string; answered: number }[] {
  return receiver.hits.flatMap((h) => {
    try {
      return [{ ...(JSON.parse(h.rawBody) as { event?: string; task_id?: string; timestamp?: string }), answered: h.answered }];
    } catch {
      return [];
    }
  });
}

/**
 * Open-model load (the schedule never waits for answers), as test/chaos/load.ts but with tasks
 * that all complete, and each attempt of a create sent to a gateway in `rotation()`.
 */
class SteadyLoad {
  readonly jobs: Job[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private seq = 0;
  step = 'before';

  constructor(
    private readonly o: {
      client: Client;
      rotation: () => readonly string[];
      accounts: ChaosAccount[];
      runId: string;
      giveUpAfterMs: number;
    },
  ) {}

  start(): void {
    const t0 = Date.now();
    let sent = 0;
    this.timer = setInterval(() => {
      const due = Math.floor(((Date.now() - t0) / 1000) * RATE);
      for (; sent < due; sent++) this.launch();
    }, 20);
  }

  /** Stops scheduling and waits until every create has its final answer. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  private launch(): void {
    const n = this.seq++;
    const ref = `${this.o.runId}-${n}`;
    const account = this.o.accounts[n % this.o.accounts.length]!;
    const base = { ref, account, scenario: this.step, firstSentAt: 0, answers: [], outcome: 'in_flight' as const };
    const job: Job =
      n % 4 === 3
        ? {
            ...base,
            kind: 'multi',
            body: { prompt: 'For each number from 1 to 3, echo it', metadata: { ref } },
            expect: { status: 'complete' },
          }
        : {
            ...base,
            kind: 'echo',
            body: { prompt: `Echo "pcc ${ref}"`, metadata: { ref } },
            expect: { status: 'complete', text: `pcc ${ref}` },
          };
    this.jobs.push(job);
    const p = this.run(job, n).finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  private async run(job: Job, n: number): Promise<void> {
    job.firstSentAt = Date.now();
    const body = JSON.stringify(job.body);
    let delay = 200;
    for (let attempt = 0; ; attempt++) {
      const rotation = this.o.rotation();
      const a = await this.o.client.send('POST', `${rotation[(n + attempt) % rotation.length]}/tasks`, {
        headers: {
          authorization: `Bearer ${job.account.apiKey}`,
          'content-type': 'application/json',
          'idempotency-key': job.ref,
          connection: 'close',
        },
        body,
        timeoutMs: 15_000,
      });
      const code = (a.json as { error?: { code?: string } } | undefined)?.error?.code;
      job.answers.push({ at: Date.now(), status: a.status, code, error: a.error, ms: a.ms });
      if (a.status === 201) {
        const created = a.json as { id: string; status: string };
        Object.assign(job, { outcome: 'accepted', taskId: created.id, createdStatus: created.status });
        return;
      }
      const retryable = a.status === 0 || a.status >= 500 || code === 'idempotency_key_in_progress' || code === 'rate_limit_exceeded';
      if (!retryable) {
        job.outcome = 'rejected';
        return;
      }
      if (Date.now() - job.firstSentAt > this.o.giveUpAfterMs) {
        job.outcome = 'gave_up';
        return;
      }
      await sleep(delay);
      delay = Math.min(delay * 2, 2000);
    }
  }
}

describe('changing PARTITIONS on a running system, under load', () => {
  let stack: Stack;
  let receiver: ChaosReceiver;
  let client: Client;
  let mongo: MongoClient;
  let accounts: ChaosAccount[];
  const extras: ServiceProcess[] = [];
  const loads: SteadyLoad[] = [];
  /** Every process of the run, with its log. */
  const watched: Watched[] = [];
  /** The processes running now, and their partition count. */
  let dep: {
    partitions: number;
    orchestrators: Watched[];
    gateways: Gateway[];
    executor: Watched;
    vault: Watched;
    dispatcher: Watched;
  };
  /** The gateways the load balancer sends to. */
  let rotation: string[];

  beforeAll(async () => {
    receiver = await startChaosReceiver(48);
    client = httpsClient({ maxSockets: 64 });
    mongo = await MongoClient.connect(MONGO_URL, { serverSelectionTimeoutMS: 10_000 });
    stack = await startStack({
      env: {
        '*': { PARTITIONS: '4', SHUTDOWN_TIMEOUT_MS: '15000' },
        'task-orchestrator': { STALL_AFTER_MS: '600000' },
      },
    });
    const of = (name: ServiceName) => {
      const w = watch(stack.procs.get(name)!);
      watched.push(w);
      return w;
    };
    dep = {
      partitions: 4,
      orchestrators: [of('task-orchestrator')],
      gateways: [{ ...of('gateway'), url: stack.baseUrl }],
      executor: of('executor'),
      vault: of('oauth-vault'),
      dispatcher: of('webhook-dispatcher'),
    };
    rotation = [stack.baseUrl];
    // Accounts (enterprise plan, webhooks to the receiver) whose partitions do and do not change between 4 and 8.
    const one = async (i: number): Promise<ChaosAccount> => {
      const acct = (await adminAsync(stack, ['accounts', 'create', '--name', `pcc-${i}`, '--plan', 'enterprise'])) as {
        account_id: string;
        api_keys: { test: string };
        webhook_secrets: { test: string };
      };
      await adminAsync(stack, ['webhooks', 'set', '--account', acct.account_id, '--env', 'test', '--url', receiver.url]);
      return { accountId: acct.account_id, apiKey: acct.api_keys.test, webhookSecret: acct.webhook_secrets.test, label: `pcc-${i}` };
    };
    const moves = (a: ChaosAccount) => partitionOf(a.accountId, 4) !== partitionOf(a.accountId, 8);
    accounts = [];
    while (accounts.length < ACCOUNTS || !accounts.some(moves) || accounts.every(moves)) {
      accounts.push(...(await Promise.all([0, 1, 2, 3].map((j) => one(accounts.length + j)))));
      if (accounts.length > 40) throw new Error('40 accounts and still not both kinds');
    }
  }, 300_000);

  afterAll(async () => {
    for (const load of loads) await load.stop();
    // The client's keep-alive connections first: the gateways' SIGTERM waits for them.
    client?.close();
    await Promise.all([...extras, ...(stack ? stack.procs.values() : [])].map(stopProcess));
    if (stack) await removeStack(stack);
    await mongo?.close();
    await receiver?.close();
  }, 120_000);

  /** Another process of `name` on the stack's namespace and databases, with `env` over the stack's, and its own ops (and API) ports. */
  async function start(name: ServiceName, env: Record<string, string>): Promise<Gateway> {
    const ports: Record<string, string> = { OPS_PORT: String(await freePort()) };
    if (name === 'gateway') Object.assign(ports, { PORT: String(await freePort()), HTTP_PORT: String(await freePort()) });
    const proc = startService(name, { ...stack.envOf(name), ...env, ...ports });
    extras.push(proc);
    const w = watch(
      proc,
      `${name} (${Object.entries(env)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')})`,
    );
    watched.push(w);
    await waitReady(Number(ports['OPS_PORT']), proc);
    return { ...w, url: `https://127.0.0.1:${ports['PORT']}/v1` };
  }

  /** Exit codes of SIGTERMs sent at once. */
  const stop = (ws: Watched[]) => Promise.all(ws.map((w) => stopProcess(w.proc)));

  /** Dead-letter queues and partition queues of the namespace (up to 16 partitions) with what they hold; a queue never declared holds nothing. */
  async function queueDepths(): Promise<{ dead: Record<string, number>; partitions: Record<string, number> }> {
    const conn = await amqp.connect(AMQP_URL);
    const dead: Record<string, number> = {};
    const partitions: Record<string, number> = {};
    try {
      for (const name of durableQueueNames()) {
        const isDead = name.endsWith('.dead');
        if (!isDead && !/\.p\d+$/.test(name)) continue;
        // A channel per check: checkQueue of a missing queue closes its channel.
        const ch = await conn.createChannel();
        ch.on('error', () => undefined);
        const count = await ch.checkQueue(`${stack.namespace}.${name}`).then(
          (q) => q.messageCount,
          () => 0,
        );
        await ch.close().catch(() => undefined);
        (isDead ? dead : partitions)[name] = count;
      }
    } finally {
      await conn.close();
    }
    return { dead, partitions };
  }

  /** The procedure, from the partition count running now to `to`, under load; then everything must balance. */
  async function changeCount(to: number): Promise<void> {
    const from = dep.partitions;
    const t0 = Date.now();
    const load = new SteadyLoad({ client, rotation: () => rotation, accounts, runId: `pcc${from}to${to}`, giveUpAfterMs: 90_000 });
    loads.push(load);
    /** When each task.complete the receiver got says its task completed (the orchestrator's clock: this machine's). */
    const completions = () => hooks(receiver).flatMap((b) => (b.event === 'task.complete' ? [Date.parse(b.timestamp ?? '')] : []));
    load.start();
    await waitFor(() => completions().filter((t) => t >= t0).length >= 10, {
      timeoutMs: 60_000,
      what: `tasks completing on ${from} partitions`,
    });

    // 1. New orchestrator and gateway replicas, with the count before: the old replicas stop consuming.
    load.step = '1 new replicas';
    const joinedAt = Date.now();
    const mixed = { PARTITIONS: String(to), PARTITIONS_PREVIOUS: String(from) };
    const joined = await Promise.all([start('task-orchestrator', mixed), start('task-orchestrator', mixed), start('gateway', mixed)]);
    const readyAt = Date.now();
    const [, , newGateway] = joined;
    rotation.push(newGateway.url);
    const old = [...dep.orchestrators, ...dep.gateways];
    const pausedAt = await waitFor(
      () => {
        const at = old.map((w) => logged(w, PAUSED, joinedAt));
        return at.every((t) => t !== undefined) && Math.max(...at);
      },
      { timeoutMs: 30_000, what: 'the old orchestrators and gateway to stop consuming' },
    );
    // Past the new replicas' listening time, still nobody consumes while the old replicas beat.
    await sleep(MEMBER_TIMEOUT_MS + 1000);
    expect(joined.map((w) => logged(w, AGREED) ?? 'not consuming')).toEqual(['not consuming', 'not consuming', 'not consuming']);
    const waiting = await queueDepths();

    // 2. The old orchestrators and gateway stop; the new ones agree a member timeout later.
    load.step = '2 old replicas stop';
    rotation = rotation.filter((u) => !dep.gateways.some((g) => g.url === u));
    const stoppedAt = Date.now();
    expect(await stop(old)).toEqual(old.map(() => 0));
    const exitedAt = Date.now();
    await waitFor(() => joined.every((w) => logged(w, AGREED) !== undefined), {
      timeoutMs: 45_000,
      what: 'the new replicas to agree on the partition count',
    });
    // Never two writers: the old replicas never consumed again once paused; the new ones began after the old ones were told to stop.
    expect(old.map((w) => logged(w, AGREED, joinedAt) ?? 'never again')).toEqual(old.map(() => 'never again'));
    for (const w of joined) expect(logged(w, AGREED)).toBeGreaterThanOrEqual(stoppedAt);
    await waitFor(() => completions().some((t) => t >= stoppedAt), { timeoutMs: 60_000, what: `tasks completing on ${to} partitions` });
    const consumingAt = Date.now();

    // 3. The publishers move to the new count, in any order.
    load.step = '3 publishers restart';
    const now = { PARTITIONS: String(to) };
    const executor = await start('executor', now);
    expect(await stop([dep.executor])).toEqual([0]);
    expect(await stop([dep.vault])).toEqual([0]);
    const vault = await start('oauth-vault', now);
    const dispatcher = await start('webhook-dispatcher', now);
    expect(await stop([dep.dispatcher])).toEqual([0]);
    await sleep(2000);

    // 4. PARTITIONS_PREVIOUS dropped: replacements without it, then the replicas with it stop.
    load.step = '4 without PARTITIONS_PREVIOUS';
    const replacements = await Promise.all([start('task-orchestrator', now), start('task-orchestrator', now), start('gateway', now)]);
    const [, , lastGateway] = replacements;
    rotation = [lastGateway.url];
    expect(await stop(joined)).toEqual([0, 0, 0]);
    dep = {
      partitions: to,
      orchestrators: replacements.slice(0, 2),
      gateways: [lastGateway],
      executor,
      vault,
      dispatcher,
    };
    load.step = 'after';
    await sleep(4000);
    await load.stop();
    const loadedMs = Date.now() - t0;

    const jobs = loads.flatMap((l) => l.jobs);
    const report = await settleLedger(
      {
        jobs,
        orchestrator: mongo.db(stack.envOf('task-orchestrator')['MONGO_DB']),
        dispatcher: mongo.db(stack.envOf('webhook-dispatcher')['MONGO_DB']),
        hits: receiver.hits,
        client,
        baseUrl: lastGateway.url,
      },
      90_000,
    );
    const queues = await queueDepths();
    const running = [...dep.orchestrators, ...dep.gateways, dep.executor, dep.vault, dep.dispatcher];
    const exitedUnasked = running
      .filter((w) => !alive(w.proc))
      .map((w) => `${w.name} exited ${w.proc.child.exitCode ?? w.proc.child.signalCode}`);
    const worrying = watched.flatMap((w) =>
      w
        .lines()
        .filter((l) => /dead-lettered|without a partition key|shutdown timed out/.test(l.message))
        .map((l) => `${w.name}: ${l.message}`),
    );

    const reconciles = watched.reduce(
      (n, w) => n + w.lines().filter((l) => l.message === 'reaper asked for reconcile' && l.at >= t0).length,
      0,
    );
    const times = completions().sort((a, b) => a - b);
    const firstAfter = times.find((t) => t >= stoppedAt) ?? NaN;
    const lastBefore = times.filter((t) => t < stoppedAt).at(-1) ?? NaN;
    const tasks = load.jobs.filter((j) => j.outcome === 'accepted');
    const completeHooks = new Set(
      hooks(receiver)
        .filter((b) => b.answered === 200 && b.event === 'task.complete')
        .map((b) => b.task_id),
    );
    const held = Object.entries(waiting.partitions)
      .filter(([, n]) => n > 0)
      .map(([q, n]) => `${q.replace('orchestrator.', 'o.').replace('gateway.task-events.', 'g.')}:${n}`)
      .join(' ');
    const movers = accounts.filter((a) => partitionOf(a.accountId, 4) !== partitionOf(a.accountId, 8)).length;
    process.stdout.write(
      `partition count ${from} → ${to}: pause ${firstAfter - stoppedAt} ms from SIGTERM of the last old orchestrator to the next task completed ` +
        `(old replicas exited in ${exitedAt - stoppedAt} ms, new ones consuming and completing ${consumingAt - stoppedAt} ms after; ` +
        `no completion for ${firstAfter - lastBefore} ms in all, the old replicas paused ${pausedAt - joinedAt} ms after the new ones were started, which took ${readyAt - joinedAt} ms to be ready); ` +
        `reaper sweeps asking for reconciles: ${reconciles}; ` +
        `${load.jobs.length} creates over ${loadedMs} ms, ${tasks.length} accepted (${load.jobs.filter((j) => j.answers.length > 1).length} after retries, ` +
        `${tasks.filter((j) => j.kind === 'multi').length} three-step), ${tasks.filter((j) => completeHooks.has(j.taskId)).length} task.complete delivered; ` +
        `ledger so far: ${JSON.stringify(report.counts.tasks)}, ${report.counts.delivered} webhook events delivered, GET checked ${report.counts.apiChecked}; ` +
        `held in partition queues while paused: ${held || 'nothing'}; ${accounts.length} accounts (${movers} change partition) on ${new Set(accounts.map((a) => partitionOf(a.accountId, 8))).size} of 8 partitions\n`,
    );

    expect(report.problems.map((p) => `${p.kind}: ${p.what}`)).toEqual([]);
    expect(tasks).toHaveLength(load.jobs.length);
    expect(report.counts.tasks).toEqual({ complete: jobs.length });
    expect(tasks.filter((j) => !completeHooks.has(j.taskId)).map((j) => j.taskId)).toEqual([]);
    expect(report.counts.apiChecked).toBe(jobs.length);
    expect(Object.entries(queues.dead).filter(([, n]) => n > 0)).toEqual([]);
    expect(Object.entries(queues.partitions).filter(([, n]) => n > 0)).toEqual([]);
    expect(exitedUnasked).toEqual([]);
    expect(worrying).toEqual([]);
  }

  it('grows from 4 to 8 partitions under load: every create accepted, every task complete and delivered, nothing dead-lettered', async () => {
    await changeCount(8);
  }, 420_000);

  it('shrinks back from 8 to 4 partitions under load, draining the queues past the new count', async () => {
    if (dep.partitions !== 8) throw new Error('the growth to 8 partitions did not complete');
    await changeCount(4);
  }, 420_000);
});
