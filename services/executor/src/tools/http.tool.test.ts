import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import type { StepRun } from '@tes/contracts';
import { createLogger } from '@tes/logger';
import { classifyAddress } from '@tes/outbound';
import { httpActions } from './http.tool.js';
import { DEFAULT_SETTINGS, ToolError, type ToolContext } from './tool.js';

/** The http tool over real loopback HTTP: the SSRF guard, redirects, size and time limits. */
describe('http tool', () => {
  let server: http.Server;
  let port: number;
  const received: { path: string; headers: http.IncomingHttpHeaders; body: string }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
        const p = req.url ?? '';
        if (p === '/json') res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true,"n":3}');
        else if (p === '/big') res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(5000));
        else if (p === '/slow') setTimeout(() => res.writeHead(200).end('late'), 1500);
        else if (p === '/to-loopback-ip') res.writeHead(302, { location: `http://127.0.0.1:${port}/json` }).end();
        else if (p === '/loop') res.writeHead(302, { location: '/loop' }).end();
        else if (p === '/post')
          res
            .writeHead(201, { 'content-type': 'application/json' })
            .end(JSON.stringify({ got: JSON.parse(Buffer.concat(chunks).toString()) }));
        else res.writeHead(404, { 'content-type': 'text/plain' }).end('nope');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  function ctx(
    allowHosts: string[] = [],
    extra: Partial<typeof DEFAULT_SETTINGS.http> = {},
    environment: 'test' | 'live' = 'live',
  ): ToolContext {
    const step: StepRun = {
      task_id: 'task_x',
      account_id: 'a',
      environment,
      user_id: null,
      step_index: 0,
      step_count: 1,
      tool: 'http',
      action: 'fetch',
      input: {},
      idempotency_key: 'task_x:0',
      timeout_ms: 10_000,
    };
    return {
      step,
      signal: new AbortController().signal,
      env: {
        settings: { ...DEFAULT_SETTINGS, http: { ...DEFAULT_SETTINGS.http, allowHosts, ...extra } },
        logger: createLogger({ service: 't', stream: new PassThrough(), level: 'error' }),
        sandbox: undefined as never,
      },
    };
  }
  const fetchUrl = (url: string, c: ToolContext) => httpActions['fetch']!({ url }, c);
  async function failure(p: Promise<unknown>): Promise<ToolError> {
    try {
      await p;
    } catch (err) {
      if (err instanceof ToolError) return err;
      throw err;
    }
    throw new Error('expected a failure');
  }

  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '64:ff9b::a9fe:a9fe',
  ])('treats %s as private', (ip) => expect(classifyAddress(ip)).not.toBe('public'));
  it.each(['8.8.8.8', '1.1.1.1', '140.82.112.3', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('treats %s as public', (ip) =>
    expect(classifyAddress(ip)).toBe('public'),
  );

  it('refuses a loopback IP literal', async () => {
    const e = await failure(fetchUrl(`http://127.0.0.1:${port}/json`, ctx()));
    expect(e).toMatchObject({
      code: 'step_failed',
      recoverable: false,
      message: expect.stringContaining('destination not allowed (127.0.0.1 is a loopback address)'),
    });
  });

  it('refuses a host name that resolves to loopback (checked at connect time)', async () => {
    const e = await failure(fetchUrl(`http://localhost:${port}/json`, ctx()));
    expect(e.message).toMatch(/destination not allowed \(localhost resolves to a loopback address\)/);
    expect(received.some((r) => r.path === '/json')).toBe(false);
  });

  it.each(['file:///etc/passwd', 'ftp://example.com/x', 'gopher://example.com', 'http://user:pw@example.com/'])(
    'refuses %s',
    async (url) => {
      const e = await failure(fetchUrl(url, ctx()));
      expect(e.code).toBe('step_failed');
    },
  );

  it('fetches an allow-listed address: status, content type, body and parsed JSON', async () => {
    const out = await fetchUrl(`http://127.0.0.1:${port}/json`, ctx(['127.0.0.0/8']));
    expect(out).toEqual({
      url: `http://127.0.0.1:${port}/json`,
      status: 200,
      content_type: 'application/json',
      body: '{"ok":true,"n":3}',
      json: { ok: true, n: 3 },
      bytes: 17,
    });
    const byName = await fetchUrl(`http://localhost:${port}/nothing`, ctx(['localhost']));
    expect(byName).toMatchObject({ status: 404, body: 'nope' });
  });

  it('checks every redirect hop: an allowed host redirecting to a private IP is refused', async () => {
    const e = await failure(fetchUrl(`http://localhost:${port}/to-loopback-ip`, ctx(['localhost'])));
    expect(e.message).toMatch(/127\.0\.0\.1 is a loopback address/);
    const ok = await fetchUrl(`http://127.0.0.1:${port}/to-loopback-ip`, ctx(['127.0.0.1']));
    expect(ok).toMatchObject({ status: 200, json: { ok: true } });
    const loop = await failure(fetchUrl(`http://127.0.0.1:${port}/loop`, ctx(['127.0.0.1'])));
    expect(loop.message).toMatch(/more than 3 redirects/);
  });

  it('limits the response size and the time', async () => {
    const big = await failure(fetchUrl(`http://127.0.0.1:${port}/big`, ctx(['127.0.0.1'], { maxBytes: 1024 })));
    expect(big).toMatchObject({ code: 'step_failed', message: expect.stringContaining('larger than 1024 bytes') });
    const slow = await failure(fetchUrl(`http://127.0.0.1:${port}/slow`, ctx(['127.0.0.1'], { timeoutMs: 200 })));
    expect(slow).toMatchObject({ code: 'service_unavailable', message: expect.stringContaining('did not answer within 200 ms') });
  });

  it('posts JSON with the step’s Idempotency-Key with live keys', async () => {
    const out = await httpActions['post']!({ url: `http://127.0.0.1:${port}/post`, json: { a: 1 } }, ctx(['127.0.0.1']));
    expect(out).toMatchObject({ status: 201, json: { got: { a: 1 } } });
    expect(received.find((r) => r.path === '/post')?.headers['idempotency-key']).toBe('task_x:0');
  });

  it('does not send anything with test keys but still refuses a private URL', async () => {
    const before = received.length;
    const out = await httpActions['post']!({ url: 'https://hooks.example.com/x', json: { a: 1 } }, ctx([], {}, 'test'));
    expect(out).toMatchObject({ status: 200, json: { sandbox: true } });
    expect(received.length).toBe(before);
    await expect(httpActions['post']!({ url: 'http://169.254.169.254/latest', json: {} }, ctx([], {}, 'test'))).rejects.toThrow(
      /destination not allowed/,
    );
  });
});
