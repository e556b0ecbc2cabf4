import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { COMMANDS, parseCommand, parseMetadata, USAGE, UsageError } from './args.js';
import { runCli } from './main.js';

describe('tes argument parsing', () => {
  it('parses tasks create with every option', () => {
    expect(
      parseCommand([
        'tasks',
        'create',
        'Echo "x"',
        '--user-id',
        'u1',
        '--metadata',
        'a=1',
        '--metadata',
        'b=x=y',
        '--test-mode',
        '--wait',
        '--wait-timeout-ms',
        '5000',
        '--insecure',
        '--base-url',
        'https://h/v1',
      ]),
    ).toEqual({
      kind: 'tasks.create',
      common: { insecure: true, baseUrl: 'https://h/v1' },
      params: { prompt: 'Echo "x"', user_id: 'u1', metadata: { a: '1', b: 'x=y' }, mode: 'test' },
      wait: true,
      waitTimeoutMs: 5000,
    });
    expect(parseCommand(['tasks', 'create', '--', '-starts with a dash'])).toMatchObject({
      params: { prompt: '-starts with a dash' },
      wait: false,
    });
  });

  it('parses get, list, cancel, trace, wait, connections and webhooks listen', () => {
    expect(parseCommand(['tasks', 'get', 'task_1'])).toEqual({ kind: 'tasks.get', common: { insecure: false }, taskId: 'task_1' });
    expect(parseCommand(['tasks', 'cancel', 'task_1', '--max-retries', '0', '--timeout-ms', '100'])).toEqual({
      kind: 'tasks.cancel',
      common: { insecure: false, maxRetries: 0, timeoutMs: 100 },
      taskId: 'task_1',
    });
    expect(parseCommand(['tasks', 'trace', 'task_1'])).toMatchObject({ kind: 'tasks.trace', taskId: 'task_1' });
    expect(parseCommand(['tasks', 'wait', 'task_1', '--wait-timeout-ms', '9'])).toMatchObject({ kind: 'tasks.wait', waitTimeoutMs: 9 });
    expect(parseCommand(['tasks', 'list', '--status', 'complete', '--limit', '5', '--offset', '0', '--user-id', 'u'])).toMatchObject({
      kind: 'tasks.list',
      params: { status: 'complete', limit: 5, offset: 0, user_id: 'u' },
    });
    expect(parseCommand(['connections', 'revoke', 'u1', 'github'])).toMatchObject({
      kind: 'connections.revoke',
      userId: 'u1',
      service: 'github',
    });
    expect(parseCommand(['webhooks', 'listen', '--port', '0', '--secret', 'whsec_x'])).toEqual({
      kind: 'webhooks.listen',
      port: 0,
      host: '127.0.0.1',
      secret: 'whsec_x',
      scheme: 'standard',
    });
    expect(parseCommand([])).toEqual({ kind: 'help' });
    expect(parseCommand(['tasks', 'get', '--help'])).toEqual({ kind: 'help' });
  });

  it.each([
    [['tasks', 'create']],
    [['tasks', 'create', 'a', 'b']],
    [['tasks', 'create', 'p', '--metadata', 'novalue']],
    [['tasks', 'create', 'p', '--wait-timeout-ms', '5']],
    [['tasks', 'get']],
    [['tasks', 'list', '--status', 'done']],
    [['tasks', 'list', '--limit', '-1']],
    [['tasks', 'list', '--bogus']],
    [['tasks', 'explode', 'x']],
    [['webhooks', 'listen']],
    [['webhooks', 'listen', '--port', '99999']],
    [['webhooks', 'listen', '--port', '1', '--scheme', 'v2']],
  ])('refuses %j with a usage error', (argv) => {
    expect(() => parseCommand(argv)).toThrow(UsageError);
  });

  it('tes --help names every command and every option the parser takes', () => {
    for (const [name, spec] of Object.entries(COMMANDS)) {
      expect(USAGE).toContain(`tes ${name}`);
      for (const option of Object.keys(spec.options)) expect(USAGE).toContain(`--${option}`);
    }
  });

  it('splits metadata at the first =', () => {
    expect(parseMetadata(['k=v', 'url=https://x/?a=b', 'empty='])).toEqual({ k: 'v', url: 'https://x/?a=b', empty: '' });
    expect(() => parseMetadata(['=v'])).toThrow(UsageError);
  });
});

describe('tes (in process) against a local fake API', () => {
  let server: http.Server;
  let baseUrl: string;
  const answers: Record<string, { status: number; body?: unknown }> = {
    'POST /v1/tasks': { status: 201, body: { id: 'task_1', status: 'running', tool: 'text', created_at: 't', metadata: {} } },
    'GET /v1/tasks/task_1': {
      status: 200,
      body: {
        id: 'task_1',
        status: 'failed',
        tool: 'text',
        created_at: 't',
        metadata: {},
        error: { code: 'step_failed', message: 'm', tool: 'text', recoverable: false },
      },
    },
    'GET /v1/tasks/task_missing': { status: 404, body: { error: { code: 'task_not_found', message: 'No task task_missing' } } },
  };
  const bodies: string[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        bodies.push(body);
        const a = answers[`${req.method} ${req.url}`] ?? { status: 404, body: { error: { code: 'not_found', message: 'no route' } } };
        res.writeHead(a.status, { 'content-type': 'application/json', 'x-request-id': 'req_cli' }).end(JSON.stringify(a.body));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  async function tes(argv: string[], env: Record<string, string | undefined> = {}) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(argv, {
      stdout: (l) => out.push(l),
      stderr: (l) => err.push(l),
      env: { SERVICE_API_KEY: 'pk_test_k', SERVICE_BASE_URL: baseUrl, ...env },
      stopped: Promise.resolve(),
    });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  it('prints the created task as JSON and sends metadata and mode', async () => {
    const r = await tes(['tasks', 'create', 'Echo "x"', '--metadata', 'ref=1', '--test-mode']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ id: 'task_1', status: 'running' });
    expect(JSON.parse(bodies.at(-1) ?? '')).toEqual({ prompt: 'Echo "x"', metadata: { ref: '1' }, mode: 'test' });
  });

  it('--wait prints the final task and exits 2 when it failed', async () => {
    const r = await tes(['tasks', 'create', 'Echo "x"', '--wait']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.out)).toMatchObject({ id: 'task_1', status: 'failed', error: { code: 'step_failed' } });
  });

  it('prints API errors as the envelope on stderr, with status and request id, and exits 1', async () => {
    const r = await tes(['tasks', 'get', 'task_missing']);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(JSON.parse(r.err)).toEqual({
      error: { code: 'task_not_found', message: 'No task task_missing', status: 404, request_id: 'req_cli' },
    });
  });

  it('exits 1 with a JSON error for usage errors, a missing key and a missing webhook secret', async () => {
    const usage = await tes(['tasks', 'nope']);
    expect([usage.code, JSON.parse(usage.err).error.code]).toEqual([1, 'invalid_arguments']);
    const noKey = await tes(['tasks', 'get', 'task_1'], { SERVICE_API_KEY: undefined });
    expect([noKey.code, JSON.parse(noKey.err).error.code]).toEqual([1, 'missing_api_key']);
    const noSecret = await tes(['webhooks', 'listen', '--port', '0']);
    expect([noSecret.code, JSON.parse(noSecret.err).error.code]).toEqual([1, 'invalid_arguments']);
    const help = await tes(['--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/tes tasks create/);
  });
});
