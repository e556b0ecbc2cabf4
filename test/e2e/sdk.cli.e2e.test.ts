import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import path from 'node:path';
import { REPO_ROOT, admin, freePort, startStack, waitFor, type Stack } from '@tes/testing';

/**
 * The `tes` CLI (packages/sdk/dist/cli.js, built by `tsc -b`) as real processes: the task
 * commands against the running services, and `webhooks listen` receiving a real signed
 * delivery from the webhook-dispatcher.
 */
const CLI = path.join(REPO_ROOT, 'packages', 'sdk', 'dist', 'cli.js');

/** The environment of this test run without any SERVICE_* variable of the caller's. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SERVICE_')) env[k] = v;
  return { ...env, ...extra };
}

function tes(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('tes CLI as a process', () => {
  let stack: Stack;
  let account: { account_id: string; api_keys: { test: string; live: string }; webhook_secrets: { test: string; live: string } };
  let api: Record<string, string>;
  let listener: ChildProcess;
  let listenerPort = 0;
  const events: string[] = [];
  const logs: string[] = [];
  let listenerExit: Promise<number | null>;

  beforeAll(async () => {
    stack = await startStack({ env: { 'webhook-dispatcher': { WEBHOOK_RETRY_SCHEDULE_MS: '200,200,200,200' } } });
    account = await admin(['accounts', 'create', '--name', 'sdk-cli-e2e'], stack.adminEnv);
    api = { SERVICE_API_KEY: account.api_keys.test, SERVICE_BASE_URL: stack.baseUrl };

    listenerPort = await freePort();
    listener = spawn(process.execPath, [CLI, 'webhooks', 'listen', '--port', String(listenerPort)], {
      env: cleanEnv({ SERVICE_WEBHOOK_SECRET: account.webhook_secrets.test }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines = (into: string[]) => {
      let buf = '';
      return (c: Buffer) => {
        buf += c.toString();
        const parts = buf.split('\n');
        buf = parts.pop() ?? '';
        into.push(...parts.filter(Boolean));
      };
    };
    listener.stdout?.on('data', lines(events));
    listener.stderr?.on('data', lines(logs));
    listenerExit = new Promise((r) => listener.on('exit', (code) => r(code)));
    await waitFor(() => logs.find((l) => l.includes('"listening"')), { what: 'tes webhooks listen to start', timeoutMs: 10_000 });
    expect(JSON.parse(logs[0] ?? '')).toEqual({ listening: `http://127.0.0.1:${listenerPort}/`, scheme: 'standard' });
    await admin(
      ['webhooks', 'set', '--account', account.account_id, '--env', 'test', '--url', `http://127.0.0.1:${listenerPort}/webhooks`],
      stack.adminEnv,
    );
  }, 120_000);

  afterAll(async () => {
    if (listener && listener.exitCode === null) listener.kill('SIGKILL');
    await stack?.stopAll();
  });

  let taskId = '';

  it('tasks create "Echo \\"x\\"" --wait --insecure prints the complete task with its result', async () => {
    const r = await tes(['tasks', 'create', 'Echo "x"', '--wait', '--insecure', '--metadata', 'ref=cli-1'], api);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const task = JSON.parse(r.stdout);
    expect(task).toMatchObject({ status: 'complete', tool: 'text', result: { text: 'x' }, metadata: { ref: 'cli-1' } });
    expect(task.id).toMatch(/^task_/);
    taskId = task.id;
  });

  it('webhooks listen receives the signed delivery of that task, verifies it, answers 200 and prints the event as one JSON line', async () => {
    const line = await waitFor(() => events.find((l) => (JSON.parse(l) as { task_id: string }).task_id === taskId), {
      what: 'the task.complete event printed by tes webhooks listen',
      timeoutMs: 20_000,
    });
    expect(JSON.parse(line)).toEqual({
      event: 'task.complete',
      task_id: taskId,
      timestamp: expect.stringMatching(/Z$/),
      data: { text: 'x' },
    });
    const log = await waitFor(
      async () => {
        const d = await admin(['deliveries', 'list', '--task', taskId], stack.adminEnv);
        const text = JSON.stringify(d);
        return text.includes('"delivered"') ? text : undefined;
      },
      { what: 'the delivery recorded as delivered', timeoutMs: 10_000 },
    );
    expect(log).toContain('"status_code":200');
    expect(logs.filter((l) => l.includes('"rejected"'))).toEqual([]);
  });

  it('webhooks listen answers 401 to a forged, a replayed (stale) and an unsigned delivery, and prints none of them', async () => {
    const before = events.length;
    const body = JSON.stringify({
      event: 'task.complete',
      task_id: 'task_forged',
      timestamp: new Date().toISOString(),
      data: { text: 'evil' },
    });
    const sign = (secret: string, ts: number, id = 'evt_forged') => ({
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(ts),
      'webhook-signature': `v1,${createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
        .update(`${id}.${ts}.${body}`)
        .digest('base64')}`,
      'x-service-signature': createHmac('sha256', secret).update(body).digest('hex'),
    });
    const now = Math.floor(Date.now() / 1000);
    const url = `http://127.0.0.1:${listenerPort}/webhooks`;
    const post = async (headers: Record<string, string>) => (await fetch(url, { method: 'POST', body, headers })).status;
    expect(await post(sign(`whsec_${randomBytes(32).toString('base64')}`, now))).toBe(401);
    expect(await post(sign(account.webhook_secrets.test, now - 3600))).toBe(401);
    expect(await post({ 'content-type': 'application/json' })).toBe(401);
    // the same request signed with the real secret and a fresh timestamp is accepted
    expect(await post(sign(account.webhook_secrets.test, now))).toBe(200);
    await waitFor(() => events.length === before + 1, { what: 'the one valid event printed' });
    expect(JSON.parse(events.at(-1) ?? '')).toMatchObject({ task_id: 'task_forged' });
    const rejected = logs
      .filter((l) => l.includes('"rejected"'))
      .map((l) => (JSON.parse(l) as { rejected: { status: number; code: string } }).rejected);
    expect(rejected.map((r) => [r.status, r.code])).toEqual([
      [401, 'invalid_signature'],
      [401, 'stale_timestamp'],
      [401, 'missing_signature'],
    ]);
  });

  it('tasks get, list, trace (SERVICE_INSECURE_TLS=1) print JSON; cancel of a complete task exits 1 with the error envelope', async () => {
    const env = { ...api, SERVICE_INSECURE_TLS: '1' };
    const got = await tes(['tasks', 'get', taskId], env);
    expect([got.code, JSON.parse(got.stdout).status]).toEqual([0, 'complete']);
    const list = await tes(['tasks', 'list', '--status', 'complete', '--limit', '1', '--offset', '0'], env);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual({ data: [expect.objectContaining({ id: taskId, status: 'complete' })], has_more: false });
    const trace = await tes(['tasks', 'trace', taskId], env);
    expect(JSON.parse(trace.stdout)).toMatchObject({ task_id: taskId, steps: [{ tool: 'text', action: 'echo', status: 'complete' }] });
    const cancel = await tes(['tasks', 'cancel', taskId], env);
    expect(cancel.code).toBe(1);
    expect(cancel.stdout).toBe('');
    expect(JSON.parse(cancel.stderr)).toEqual({
      error: { code: 'task_already_complete', message: expect.any(String), status: 409, request_id: expect.any(String) },
    });
  });

  it('tasks create --test-mode previews without running; a bad key and an unknown task exit 1 with typed errors', async () => {
    const preview = await tes(['tasks', 'create', 'Echo "y"', '--test-mode', '--wait', '--insecure'], api);
    expect(preview.code).toBe(0);
    expect(JSON.parse(preview.stdout)).toMatchObject({ status: 'complete', result: { preview: { tool: 'text' } } });

    const bad = await tes(['tasks', 'list', '--insecure'], { ...api, SERVICE_API_KEY: 'pk_test_00000000000000000000000000000000' });
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr).error).toMatchObject({ code: 'invalid_api_key', status: 401 });
    const missing = await tes(['tasks', 'get', 'task_doesnotexist', '--insecure'], api);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr).error).toMatchObject({ code: 'task_not_found', status: 404 });
  });

  it('webhooks listen stops cleanly on SIGTERM', async () => {
    listener.kill('SIGTERM');
    expect(await listenerExit).toBe(0);
  });
});
