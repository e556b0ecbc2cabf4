import { spawn } from 'node:child_process';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { DEFAULT_PARTITIONS, partitionOf } from '@tes/contracts';
import {
  MONGO_URL,
  REPO_ROOT,
  freePort,
  removeStack,
  request,
  startService,
  startStack,
  waitReady,
  type ServiceProcess,
  type Stack,
} from '@tes/testing';
import { httpsClient, type Client } from '../chaos/http.js';
import { describeProblems, settleLedger, type LedgerReport, type LedgerSources } from '../chaos/ledger.js';
import { LoadGenerator, type ChaosAccount } from '../chaos/load.js';
import { startChaosReceiver, type ChaosReceiver } from '../chaos/receiver.js';

/**
 * Issue 24, item 4: the orchestrator scales out. Three orchestrator replicas, real processes on
 * one stack, share the eight single-active-consumer partition queues (packages/messaging
 * partition-group.ts), each within one partition of the mean; under a steady load of creates one
 * replica is killed with -9 and the two survivors take its partitions over at once and rebalance
 * to 4/4; a fourth replica started afterwards gets its share (2 or 3 of each of the three live
 * ones). Ownership is read from each replica's /metrics (`partitions_owned`) and checked against
 * its 'partition ownership' log lines (every partition named by exactly one live replica). Through
 * all of it the chaos ledger (test/chaos/ledger.ts) balances: every create accepted (retried with
 * the same Idempotency-Key on 5xx and transport errors), every task complete, every webhook event
 * delivered to the receiver.
 *
 * The four tests run in order on one stack and one load. The measured times, and the hand-overs
 * the replicas logged in each phase, are printed in one line ("orchestrator-replicas: ...").
 * The orchestrator's reaper runs fast (STALL_AFTER_MS 3000), the gateway's idempotency lease is
 * short and the dispatcher retries quickly, as in the chaos suite, so a task caught by the kill
 * settles within seconds.
 */
const PARTITIONS = DEFAULT_PARTITIONS;
const RATE_PER_SEC = 4;
/** Accounts are created until their tasks use this many partitions (or MAX_ACCOUNTS exist). */
const PARTITIONS_WITH_TRAFFIC = 6;
const MAX_ACCOUNTS = 12;
const TAKEOVER_BOUND_MS = 10_000;
const REBALANCE_BOUND_MS = 15_000;
const SHARE_BOUND_MS = 15_000;
const SETTLE_TIMEOUT_MS = 60_000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** A timer that does not keep the test process alive (the bound of a clean-up step). */
const within = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

interface OwnershipLine {
  at: number;
  owned: number[];
  members: number;
}

interface Replica {
  name: string;
  proc: ServiceProcess;
  opsPort: number;
  /** Its 'partition ownership' log lines, in order. */
  ownership: OwnershipLine[];
  /** Its 'partition handed on to the next replica in line' log lines. */
  handedOn: number;
}

/** What `accounts create` prints (the parts used here). */
interface CreatedAccount {
  account_id: string;
  api_keys: { test: string };
  webhook_secrets: { test: string };
}

interface Reading {
  owned: number;
  members: number;
}

/** Follows a replica's JSON log lines (from what its process wrote so far on) for its ownership reports. */
function follow(name: string, proc: ServiceProcess, opsPort: number): Replica {
  const replica: Replica = { name, proc, opsPort, ownership: [], handedOn: 0 };
  let rest = '';
  const take = (text: string) => {
    const lines = (rest + text).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      let entry: { message?: unknown; owned?: unknown; members?: unknown };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        continue;
      }
      if (entry.message === 'partition ownership' && Array.isArray(entry.owned))
        replica.ownership.push({ at: Date.now(), owned: entry.owned.map(Number), members: Number(entry.members) });
      else if (entry.message === 'partition handed on to the next replica in line') replica.handedOn++;
    }
  };
  take(proc.output());
  proc.child.stdout?.on('data', (c: Buffer) => take(c.toString()));
  return replica;
}

/** A replica's partition-group gauges, scraped from its ops port. */
async function scrape(r: Replica): Promise<Reading> {
  const res = await request('GET', `http://127.0.0.1:${r.opsPort}/metrics`);
  if (res.status !== 200) throw new Error(`${r.name} /metrics answered ${res.status}`);
  const gauge = (name: string) => {
    const m = new RegExp(`^${name}\\{[^}]*group="orchestrator"[^}]*\\} (\\d+)$`, 'm').exec(res.text);
    if (!m) throw new Error(`${r.name} /metrics has no ${name} of the orchestrator group`);
    return Number(m[1]);
  };
  return { owned: gauge('partitions_owned'), members: gauge('partition_group_members') };
}

/** Every live replica owns floor or ceil of P / live, and together all P. */
function balanced(readings: readonly Reading[]): boolean {
  const mean = PARTITIONS / readings.length;
  return readings.reduce((s, r) => s + r.owned, 0) === PARTITIONS && readings.every((r) => Math.abs(r.owned - mean) < 1);
}

/** The latest reported ownership of each replica, for a failure message. */
function history(replicas: readonly Replica[], since: number): string {
  return replicas
    .map(
      (r) =>
        `  ${r.name}${r.proc.child.signalCode ? ` (${r.proc.child.signalCode})` : ''}: ${r.ownership
          .filter((o) => o.at >= since - 2000)
          .map((o) => `+${o.at - since}ms [${o.owned.join(',')}]/${o.members}`)
          .join(' ')}`,
    )
    .join('\n');
}

describe('orchestrator replicas: partitions shared, taken over after kill -9, shared again with a new replica', () => {
  let stack: Stack | undefined;
  const extra: ServiceProcess[] = [];
  const replicas: Replica[] = [];
  let receiver: ChaosReceiver | undefined;
  let client: Client | undefined;
  let mongo: MongoClient | undefined;
  let load: LoadGenerator | undefined;
  let sources: LedgerSources;
  let accounts: ChaosAccount[] = [];
  let partitionsWithTraffic: number[] = [];
  const figures: Record<string, string | number> = {};
  /** When the fault and the new replica happened, to place the creates that were not answered 201 at once. */
  const marks: { what: string; at: number }[] = [];

  /** Hand-overs logged by all replicas so far. */
  const handOvers = () => replicas.reduce((sum, r) => sum + r.handedOn, 0);
  const live = () => replicas.filter((r) => r.proc.child.exitCode === null && r.proc.child.signalCode === null);

  /** When the answers other than 201 came, after which mark (e.g. `kill+1200ms:503`), in order. */
  function notAcceptedAt(): string {
    const answers = load!.jobs.flatMap((j) => j.answers.filter((a) => a.status !== 201));
    return (
      answers
        .sort((a, b) => a.at - b.at)
        .map((a) => {
          const mark = marks.filter((m) => m.at <= a.at).at(-1);
          const when = mark ? `${mark.what}+${a.at - mark.at}` : `-${(marks[0]?.at ?? a.at) - a.at}`;
          return `${when}ms:${a.status || 'transport'}(in ${a.ms}ms)`;
        })
        .join(',') || 'none'
    );
  }

  /** Starts one more orchestrator process on the stack, on an ops port of its own. */
  async function startReplica(name: string): Promise<Replica> {
    const opsPort = await freePort();
    const proc = startService('task-orchestrator', { ...stack!.envOf('task-orchestrator'), OPS_PORT: String(opsPort) });
    extra.push(proc);
    const replica = follow(name, proc, opsPort);
    replicas.push(replica);
    await waitReady(opsPort, proc);
    return replica;
  }

  /**
   * Scrapes `of` every 100 ms until `done` holds for their readings; answers how long after `since`
   * that was first seen. Waits up to twice `boundMs`, so a slow convergence is still measured (the
   * caller asserts the bound), then fails with the ownership every replica logged.
   */
  async function until(
    what: string,
    of: () => Replica[],
    done: (readings: Reading[]) => boolean,
    since: number,
    boundMs: number,
  ): Promise<{ ms: number; readings: Reading[] }> {
    let last = 'no reading';
    for (;;) {
      const now = Date.now();
      const replicasNow = of();
      const readings = await Promise.all(replicasNow.map(scrape)).catch((err: unknown) => {
        last = String(err);
        return undefined;
      });
      if (readings && done(readings)) return { ms: now - since, readings };
      if (readings) last = readings.map((r, i) => `${replicasNow[i]?.name}=${r.owned}/${r.members}`).join(' ');
      if (now - since > 2 * boundMs)
        throw new Error(
          `${what}: not yet ${now - since} ms after the start (last ${last}); ownership logged:\n${history(replicas, since)}`,
        );
      await sleep(100);
    }
  }

  /** Until the live replicas are balanced (see `until`), then checks their log lines agree: each partition named by exactly one. */
  async function untilBalanced(what: string, since: number, boundMs: number): Promise<{ ms: number; readings: Reading[] }> {
    const result = await until(what, live, balanced, since, boundMs);
    await expectLogsAgree(what, since);
    return result;
  }

  /** Within a beat or two of the metrics, the live replicas' latest log lines name every partition exactly once. */
  async function expectLogsAgree(what: string, since: number): Promise<void> {
    const deadline = Date.now() + 3000;
    for (;;) {
      const named = live().flatMap((r) => r.ownership.at(-1)?.owned ?? []);
      const ok = named.length === PARTITIONS && new Set(named).size === PARTITIONS;
      if (ok) return;
      if (Date.now() > deadline)
        throw new Error(`${what}: the ownership logs name [${named.sort((a, b) => a - b).join(',')}]:\n${history(replicas, since)}`);
      await sleep(100);
    }
  }

  /** The live replicas' member counts once each counts `n` (the last reading after 3 s otherwise: a beat and a half of slack). */
  async function untilMembers(n: number): Promise<number[]> {
    const deadline = Date.now() + 3000;
    for (;;) {
      const members = (await Promise.all(live().map(scrape))).map((r) => r.members);
      if (members.every((m) => m === n) || Date.now() > deadline) return members;
      await sleep(100);
    }
  }

  /** scripts/admin.mjs as its own process, several at once (the `admin` of @tes/testing runs one at a time); no standard input. */
  function adminJson<T>(args: string[]): Promise<T> {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'scripts', 'admin.mjs'), ...args], {
      env: { ...process.env, ...stack!.adminEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    return new Promise((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0 ? resolve(JSON.parse(out) as T) : reject(new Error(`admin ${args.join(' ')} failed (${code}): ${err}`)),
      );
    });
  }

  async function createAccount(label: string): Promise<ChaosAccount> {
    const acct = await adminJson<CreatedAccount>(['accounts', 'create', '--name', `replicas-${label}`, '--plan', 'enterprise']);
    await adminJson<unknown>(['webhooks', 'set', '--account', acct.account_id, '--env', 'test', '--url', receiver!.url]);
    return { accountId: acct.account_id, apiKey: acct.api_keys.test, webhookSecret: acct.webhook_secrets.test, label };
  }

  beforeAll(async () => {
    const t0 = Date.now();
    receiver = await startChaosReceiver(24);
    stack = await startStack({
      env: {
        gateway: { IDEMPOTENCY_LEASE_MS: '6000' },
        'task-orchestrator': { STALL_AFTER_MS: '3000', REAPER_INTERVAL_MS: '500' },
        'webhook-dispatcher': {
          WEBHOOK_RETRY_SCHEDULE_MS: '500,1000,2000,4000',
          WEBHOOK_TIMEOUT_MS: '3000',
          CLAIM_MARGIN_MS: '2000',
          POLL_INTERVAL_MS: '200',
        },
      },
    });
    replicas.push(follow('orchestrator-1', stack.procs.get('task-orchestrator')!, stack.opsPorts['task-orchestrator']));
    // Accounts land on partitions by their id: enough of them that most partitions see traffic.
    const used = new Set<number>();
    while (used.size < PARTITIONS_WITH_TRAFFIC && accounts.length < MAX_ACCOUNTS) {
      const batch = await Promise.all([0, 1, 2, 3].map((i) => createAccount(`${accounts.length + i}`)));
      accounts = [...accounts, ...batch];
      for (const a of batch) used.add(partitionOf(a.accountId, PARTITIONS));
    }
    partitionsWithTraffic = [...used].sort((a, b) => a - b);
    client = httpsClient({ maxSockets: 32 });
    mongo = await MongoClient.connect(MONGO_URL, { serverSelectionTimeoutMS: 5000 });
    load = new LoadGenerator({
      client,
      baseUrl: stack.baseUrl,
      accounts,
      ratePerSec: RATE_PER_SEC,
      giveUpAfterMs: 60_000,
      runId: `rep${Date.now().toString(36)}`,
      // Tasks that complete without third-party services: one echo, or three echo steps (two progress webhooks).
      mix: (n) => (n % 3 === 2 ? 'multi' : 'echo'),
    });
    sources = {
      jobs: load.jobs,
      orchestrator: mongo.db(stack.envOf('task-orchestrator')['MONGO_DB']),
      dispatcher: mongo.db(stack.envOf('webhook-dispatcher')['MONGO_DB']),
      hits: receiver.hits,
      client,
      baseUrl: stack.baseUrl,
    };
    figures['setup_ms'] = Date.now() - t0;
  }, 180_000);

  afterAll(async () => {
    process.stdout.write(
      `orchestrator-replicas: ${Object.entries(figures)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}\n`,
    );
    // Bounded: a create still retrying must not keep the clean-up waiting.
    await Promise.race([load?.stop(), within(20_000)]).catch(() => undefined);
    const stopped = (p: ServiceProcess) => {
      const kill = setTimeout(() => p.child.kill('SIGKILL'), 20_000);
      return p.stop().finally(() => clearTimeout(kill));
    };
    await Promise.all(extra.map(stopped)).catch(() => undefined);
    await stack?.stopAll().catch(() => undefined);
    if (stack) await removeStack(stack);
    client?.close();
    await mongo?.close().catch(() => undefined);
    await receiver?.close();
  }, 90_000);

  it('spreads the eight partitions over three replicas, each owning 2 or 3', async () => {
    const t0 = Date.now();
    await Promise.all([startReplica('orchestrator-2'), startReplica('orchestrator-3')]);
    const readyAt = Date.now();
    figures['two_more_ready_ms'] = readyAt - t0;
    const { ms, readings } = await untilBalanced('three replicas', readyAt, SHARE_BOUND_MS);
    figures['balance_ms'] = ms;
    figures['balance'] = readings.map((r) => r.owned).join('/');
    figures['hand_overs_balance'] = handOvers();
    expect(readings.map((r) => r.owned).sort()).toEqual([2, 3, 3]);
    expect(ms).toBeLessThanOrEqual(SHARE_BOUND_MS);
    // Each replica hears the other two.
    expect(await untilMembers(3)).toEqual([3, 3, 3]);
  }, 60_000);

  it("under load, hands a kill -9'd replica's partitions to the survivors at once, then balances them 4/4", async () => {
    load!.start('replicas');
    figures['accounts'] = accounts.length;
    figures['partitions_with_traffic'] = `[${partitionsWithTraffic.join(',')}]`;
    // Steady load over the three replicas first: every partition with traffic has had messages.
    await sleep(3000);
    const before = await Promise.all(live().map(scrape));
    const victim = live()[before.indexOf(before.reduce((a, b) => (b.owned > a.owned ? b : a)))]!;
    const victimOwned = before[live().indexOf(victim)]!.owned;
    const survivors = live().filter((r) => r !== victim);

    const killedAt = Date.now();
    marks.push({ what: 'kill', at: killedAt });
    await victim.proc.stop('SIGKILL');
    expect(victim.proc.child.signalCode).toBe('SIGKILL');
    figures['killed'] = `${victim.name}(owned ${victimOwned}: [${victim.ownership.at(-1)?.owned.join(',')}])`;

    // Takeover: the broker makes the next consumer in line active at once; the survivors learn
    // it from the next message, or from a probe once the dead replica's beats have timed out.
    const { ms: takeoverMs } = await until(
      'the survivors own every partition',
      () => survivors,
      (readings) => readings.reduce((sum, r) => sum + r.owned, 0) === PARTITIONS,
      killedAt,
      TAKEOVER_BOUND_MS,
    );
    figures['takeover_ms'] = takeoverMs;

    const { ms, readings } = await untilBalanced('two survivors', killedAt, REBALANCE_BOUND_MS);
    figures['rebalance_ms'] = ms;
    figures['hand_overs_after_kill'] = handOvers() - Number(figures['hand_overs_balance']);
    expect(readings.map((r) => r.owned)).toEqual([4, 4]);
    expect(takeoverMs).toBeLessThanOrEqual(TAKEOVER_BOUND_MS);
    expect(ms).toBeLessThanOrEqual(REBALANCE_BOUND_MS);
    // The dead replica is no member any more (each survivor drops it 3.5 s after its last beat, on its own clock).
    expect(await untilMembers(2)).toEqual([2, 2]);
  }, 90_000);

  it('gives a new replica its share: each of the three live ones owns 2 or 3', async () => {
    const t0 = Date.now();
    const fresh = await startReplica('orchestrator-4');
    const readyAt = Date.now();
    marks.push({ what: 'new', at: readyAt });
    figures['new_replica_ready_ms'] = readyAt - t0;
    const { ms, readings } = await untilBalanced('a new replica', readyAt, SHARE_BOUND_MS);
    figures['new_share_ms'] = ms;
    figures['new_share'] = readings.map((r) => r.owned).join('/');
    figures['hand_overs_new'] = handOvers() - Number(figures['hand_overs_balance']) - Number(figures['hand_overs_after_kill']);
    expect(readings.map((r) => r.owned).sort()).toEqual([2, 3, 3]);
    expect((await scrape(fresh)).owned).toBeGreaterThanOrEqual(2);
    expect(ms).toBeLessThanOrEqual(SHARE_BOUND_MS);
    // Load on the new ownership for a moment before the creates stop.
    await sleep(2000);
  }, 60_000);

  it(
    'balances the ledger: every create accepted, every task complete, every webhook event delivered',
    async () => {
      const loadStopped = Date.now();
      await load!.stop();
      const report: LedgerReport = await settleLedger(sources, SETTLE_TIMEOUT_MS);
      const c = report.counts;
      figures['settle_ms'] = Date.now() - loadStopped;
      figures['creates'] = c.creates;
      figures['accepted'] = c.accepted;
      figures['retried_creates'] = c.retriedCreates;
      figures['create_answers'] = JSON.stringify(c.createAnswers);
      figures['complete'] = c.tasks['complete'] ?? 0;
      figures['webhook_events'] = c.webhookEvents;
      figures['delivered'] = c.delivered;
      figures['receiver_requests'] = c.receiverRequests;
      figures['not_201_at'] = notAcceptedAt();

      expect(describeProblems(report)).toBe('0 problem(s):\n  ');
      expect(c.creates).toBeGreaterThanOrEqual(RATE_PER_SEC * 10);
      expect(c.accepted).toBe(c.creates);
      expect(c.tasks).toEqual({ complete: c.accepted });
      expect(c.webhookEvents).toBeGreaterThanOrEqual(c.accepted);
      expect(c.delivered).toBe(c.webhookEvents);
      // Every live replica is still running; only the killed one is gone.
      expect(live()).toHaveLength(3);
    },
    SETTLE_TIMEOUT_MS + 30_000,
  );
});
