/**
 * The operator CLI as a real process (dist/cli.js) on its own database; the secondary checks run
 * the same parse + command code in-process (a process costs about a second).
 */
import path from 'node:path';
import mongoose from 'mongoose';
import { MONGO_URL, REPO_ROOT, runScript, uniqueName, type ProcessRun } from '@tes/testing';
import { UsageError } from '@tes/cli';
import { isAppError } from '@tes/errors';
import { KeyRing } from '@tes/sealing';
import { parseCommand, runCommand } from './cli/commands.js';
import { createRepositories, type Repositories } from './store/repositories.js';
import { dropDatabase } from '../test/fixtures.js';
import { DEVELOPMENT_KEYS } from './secret-keys.js';

const CLI = path.join(REPO_ROOT, 'services', 'webhook-dispatcher', 'dist', 'cli.js');

describe('operator CLI (real process)', () => {
  const db = uniqueName('wd_cli');
  let conn: mongoose.Connection;
  let repos: Repositories;

  // As deployed: private targets refused (OUTBOUND_ALLOW_PRIVATE off); `devCli` as a local stack runs it.
  const cli = (...args: string[]): Promise<ProcessRun> => runScript(CLI, args, { MONGO_URL, MONGO_DB: db, WEBHOOK_ALLOWED_HOSTS: '' });
  const devCli = (...args: string[]): Promise<ProcessRun> =>
    runScript(CLI, args, { MONGO_URL, MONGO_DB: db, WEBHOOK_ALLOWED_HOSTS: '', OUTBOUND_ALLOW_PRIVATE: 'true' });

  async function inProcess(...args: string[]): Promise<{ ok?: unknown; error?: { code: string; message: string } }> {
    try {
      const command = parseCommand(args);
      if (command.name === 'help') return {};
      return { ok: await runCommand(command, { repos, guard: { allowedHosts: new Set() } }) };
    } catch (err) {
      if (isAppError(err) || err instanceof UsageError) return { error: { code: err.code, message: err.message } };
      throw err;
    }
  }

  function errorOf(run: ProcessRun): { code: string; message: string } {
    return (JSON.parse(run.stderr.trim()) as { error: { code: string; message: string } }).error;
  }

  beforeAll(async () => {
    conn = await mongoose.createConnection(MONGO_URL, { dbName: db }).asPromise();
    repos = createRepositories(conn, KeyRing.parse(DEVELOPMENT_KEYS));
  });

  afterAll(async () => {
    await conn?.close();
    await dropDatabase(db);
  });

  it('secrets init creates a test and a live secret, and a second call prints the same ones', async () => {
    const first = await cli('secrets', 'init', '--account', 'acc_cli');
    expect(first.code).toBe(0);
    const out = JSON.parse(first.stdout) as { account_id: string; webhook_secrets: { test: string; live: string } };
    expect(out.account_id).toBe('acc_cli');
    expect(out.webhook_secrets.test).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(out.webhook_secrets.live).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(out.webhook_secrets.live).not.toBe(out.webhook_secrets.test);
    const second = await cli('secrets', 'init', '--account', 'acc_cli');
    expect(JSON.parse(second.stdout)).toEqual(out);
    expect(second.stderr).toBe('');
  });

  it('webhooks set refuses a live endpoint over http and a live https endpoint on 127.0.0.1 (exit 1, error on stderr)', async () => {
    const http = await cli('webhooks', 'set', '--account', 'acc_cli', '--env', 'live', '--url', 'http://hooks.example.com/x');
    expect(http.code).toBe(1);
    expect(http.stdout).toBe('');
    expect(errorOf(http)).toEqual({ code: 'invalid_request', message: 'webhook URL refused: only https is allowed' });
    const loop = await cli('webhooks', 'set', '--account', 'acc_cli', '--env', 'live', '--url', 'https://127.0.0.1:8443/x');
    expect(loop.code).toBe(1);
    expect(errorOf(loop).message).toContain('loopback');
    const local = await inProcess('webhooks', 'set', '--account', 'acc_cli', '--env', 'live', '--url', 'https://localhost/x');
    expect(local.error?.message).toContain('localhost resolves to a loopback address');
    expect((await inProcess('webhooks', 'get', '--account', 'acc_cli', '--env', 'live')).error?.code).toBe('not_found');
  });

  it('webhooks set accepts a test endpoint on http loopback only with OUTBOUND_ALLOW_PRIVATE, and webhooks get reads it', async () => {
    // Issue 20, finding 3: a private test endpoint is refused too, unless the development setting is on.
    const refused = await cli('webhooks', 'set', '--account', 'acc_cli', '--env', 'test', '--url', 'http://127.0.0.1:9999/hooks');
    expect(errorOf(refused)).toEqual({ code: 'invalid_request', message: 'webhook URL refused: 127.0.0.1 is a loopback address' });
    const set = await devCli('webhooks', 'set', '--account', 'acc_cli', '--env', 'test', '--url', 'http://127.0.0.1:9999/hooks');
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ account_id: 'acc_cli', environment: 'test', url: 'http://127.0.0.1:9999/hooks' });
    expect((await inProcess('webhooks', 'get', '--account', 'acc_cli', '--env', 'test')).ok).toMatchObject({
      url: 'http://127.0.0.1:9999/hooks',
    });
  });

  it('secrets rotate prints a new secret that init then reports as current', async () => {
    const before = JSON.parse((await cli('secrets', 'init', '--account', 'acc_cli')).stdout) as {
      webhook_secrets: { test: string; live: string };
    };
    const rot = await cli('secrets', 'rotate', '--account', 'acc_cli', '--env', 'test', '--grace-hours', '2');
    expect(rot.code).toBe(0);
    const out = JSON.parse(rot.stdout) as { webhook_secret: string; version: number; previous_valid_until: string };
    expect(out.webhook_secret).not.toBe(before.webhook_secrets.test);
    expect(out.version).toBe(2);
    expect(Date.parse(out.previous_valid_until) - Date.now()).toBeGreaterThan(7_100_000);
    const after = JSON.parse((await cli('secrets', 'init', '--account', 'acc_cli')).stdout) as {
      webhook_secrets: { test: string; live: string };
    };
    expect(after.webhook_secrets).toEqual({ test: out.webhook_secret, live: before.webhook_secrets.live });
    expect((await inProcess('secrets', 'rotate', '--account', 'acc_nobody', '--env', 'test')).error?.code).toBe('not_found');
  });

  it('deliveries list shows events with their attempts; redeliver restarts an undeliverable event and refuses others', async () => {
    const now = new Date();
    const base = {
      account_id: 'acc_cli',
      environment: 'test' as const,
      task_id: 'task_cli',
      occurred_at: now.toISOString(),
      received_at: now,
      schedule_base: 0,
      delivered_at: null,
      updated_at: now,
    };
    await repos.events.insert({
      ...base,
      _id: 'evt_task_cli_1',
      version: 1,
      kind: 'created',
      event: null,
      body: null,
      status: 'skipped',
      attempts_made: 0,
      next_attempt_at: null,
      last_status_code: null,
      last_error: null,
    });
    await repos.events.insert({
      ...base,
      _id: 'evt_task_cli_2',
      version: 2,
      kind: 'completed',
      event: 'task.complete',
      body: '{}',
      status: 'undeliverable',
      attempts_made: 1,
      next_attempt_at: null,
      last_status_code: 500,
      last_error: 'HTTP 500',
    });
    await repos.attempts.record({
      _id: 'evt_task_cli_2:1',
      event_id: 'evt_task_cli_2',
      task_id: 'task_cli',
      account_id: 'acc_cli',
      environment: 'test',
      attempt: 1,
      url: 'http://127.0.0.1:9999/hooks',
      started_at: now,
      finished_at: now,
      ok: false,
      status_code: 500,
      latency_ms: 7,
      error: 'HTTP 500',
    });

    const list = await cli('deliveries', 'list', '--task', 'task_cli');
    expect(list.code).toBe(0);
    const data = (JSON.parse(list.stdout) as { data: unknown[] }).data;
    expect(data).toEqual([
      expect.objectContaining({
        id: 'evt_task_cli_2',
        event: 'task.complete',
        status: 'undeliverable',
        attempts: [{ attempt: 1, at: now.toISOString(), status_code: 500, latency_ms: 7, error: 'HTTP 500' }],
      }),
    ]);
    const byAccount = (await inProcess('deliveries', 'list', '--account', 'acc_cli', '--env', 'test')).ok as { data: { id: string }[] };
    expect(byAccount.data.map((d) => d.id)).toEqual(['evt_task_cli_2']);

    const re = await cli('deliveries', 'redeliver', '--event', 'evt_task_cli_2');
    expect(re.code).toBe(0);
    expect(JSON.parse(re.stdout)).toMatchObject({ id: 'evt_task_cli_2', status: 'pending', attempts_made: 1 });
    expect(await repos.events.get('evt_task_cli_2')).toMatchObject({ status: 'pending', schedule_base: 1 });

    const again = await inProcess('deliveries', 'redeliver', '--event', 'evt_task_cli_2');
    expect(again.error).toEqual({
      code: 'invalid_request',
      message: expect.stringContaining('only undeliverable or no_endpoint') as string,
    });
    expect((await inProcess('deliveries', 'redeliver', '--event', 'evt_nope')).error?.code).toBe('not_found');
  });

  it('answers bad input with exit 1 and a JSON error, without touching the database', async () => {
    const run = await cli('webhooks', 'set', '--account', 'acc_cli', '--env', 'staging', '--url', 'https://x.example.com');
    expect(run.code).toBe(1);
    expect(errorOf(run)).toEqual({ code: 'invalid_request', message: '--env must be test or live' });
    expect((await inProcess('secrets', 'delete', '--account', 'acc_cli')).error?.code).toBe('invalid_request');
  });
});
