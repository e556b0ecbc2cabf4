/**
 * An endpoint changed anywhere (through one replica, or by the operator CLI as a real process)
 * reaches every replica's cache at once, through webhook.config_changed on each replica's own
 * queue. The cache keeps entries 10 s without that queue and 10 min with it, so a change that
 * every replica follows within seconds can only have come from the announcement.
 */
import path from 'node:path';
import { AMQP_URL, MONGO_URL, REPO_ROOT, runScript, startReceiver, waitFor } from '@tes/testing';
import { sleep, startHarness, taskEvent, type Harness } from '../test/fixtures.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

const CLI = path.join(REPO_ROOT, 'services', 'webhook-dispatcher', 'dist', 'cli.js');
/** An announcement is published after the change is stored and consumed a moment later: "at once" is this, not a TTL. */
const ANNOUNCEMENT_MS = 300;

describe('webhook configuration changes across replicas', () => {
  let h: Harness;
  const receivers: Receiver[] = [];
  let seq = 0;

  beforeAll(async () => {
    h = await startHarness('wd_cfg', { WEBHOOK_CONFIG_CACHE_MS: '10000', WEBHOOK_CONFIG_CACHE_FOLLOWED_MS: '600000' });
    await h.addReplica();
    for (let i = 0; i < 3; i++) receivers.push(await startReceiver());
  });

  afterAll(async () => {
    await h?.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  /** Which receiver got the delivery of the task's event. */
  const receiverOf = (taskId: string): number =>
    receivers.findIndex((r) => r.received.some((x) => x.headers['webhook-id'] === `evt_${taskId}_1`));

  /**
   * Sends events of the account one at a time until each replica has delivered `perReplica` of
   * them (the replicas take turns on the queue); returns, per delivery, the replica and the receiver.
   */
  async function deliverFromBothReplicas(account: string, perReplica: number): Promise<{ holder: string; receiver: number }[]> {
    const out: { holder: string; receiver: number }[] = [];
    const count = (holder: string) => out.filter((o) => o.holder === holder).length;
    for (let i = 0; i < 40; i++) {
      const task = `task_cfg_${++seq}`;
      await h.publish(taskEvent('completed', { task, account, version: 1 }));
      await waitFor(() => receiverOf(task) >= 0, { timeoutMs: 5000, what: `the delivery of ${task}` });
      const claim = await h.dispatcher.mongo.collection('attempt_claims').findOne({ _id: `evt_${task}_1:1` } as never);
      out.push({ holder: String(claim?.['holder']), receiver: receiverOf(task) });
      const holders = [...new Set(out.map((o) => o.holder))];
      if (holders.length === 2 && holders.every((x) => count(x) >= perReplica)) return out;
    }
    throw new Error(`the two replicas did not both deliver: ${JSON.stringify(out)}`);
  }

  const cli = (env: Record<string, string>, ...args: string[]) =>
    runScript(CLI, args, {
      MONGO_URL,
      MONGO_DB: h.db,
      WEBHOOK_ALLOWED_HOSTS: '',
      OUTBOUND_ALLOW_PRIVATE: 'true',
      AMQP_URL,
      AMQP_NAMESPACE: h.ns,
      ...env,
    });

  it('a change stored through one replica reaches the other replica at once', async () => {
    await h.configure('acc_cfg_a', 'test', receivers[0]!.url);
    const before = await deliverFromBothReplicas('acc_cfg_a', 2);
    expect(before.every((d) => d.receiver === 0)).toBe(true); // both replicas now hold the endpoint in their cache

    await h.configure('acc_cfg_a', 'test', receivers[1]!.url); // through the first replica's repositories
    await sleep(ANNOUNCEMENT_MS);
    const after = await deliverFromBothReplicas('acc_cfg_a', 2);
    expect(after.map((d) => d.receiver)).toEqual(after.map(() => 1));
  });

  it('a change made by the operator CLI reaches every replica at once', async () => {
    await h.configure('acc_cfg_b', 'test', receivers[0]!.url);
    const before = await deliverFromBothReplicas('acc_cfg_b', 2);
    expect(before.every((d) => d.receiver === 0)).toBe(true);

    const run = await cli({}, 'webhooks', 'set', '--account', 'acc_cfg_b', '--env', 'test', '--url', receivers[2]!.url);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    await sleep(ANNOUNCEMENT_MS);
    const after = await deliverFromBothReplicas('acc_cfg_b', 2);
    expect(after.map((d) => d.receiver)).toEqual(after.map(() => 2));
  });

  it('the CLI still stores the change when the broker is unreachable, and says the replicas will see it late', async () => {
    const run = await cli(
      { AMQP_URL: 'amqp://guest:guest@127.0.0.1:1' },
      'webhooks',
      'set',
      '--account',
      'acc_cfg_c',
      '--env',
      'test',
      '--url',
      receivers[0]!.url,
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ url: receivers[0]!.url });
    expect(run.stderr).toContain('could not be told');
    expect(run.ms).toBeLessThan(15_000);
    expect(await h.dispatcher.repos.endpoints.get('acc_cfg_c', 'test')).toMatchObject({ url: receivers[0]!.url });
  });
});
