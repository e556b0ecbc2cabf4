import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from '@tes/http';
import { startService, startStack, waitFor, type Stack } from '@tes/testing';
import { bearer, newAccount, roomInWindow, type Account } from './conformance.support.js';

interface PlainAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  json: any;
}

/**
 * The gateway's plain-HTTP listener (HTTP_PORT) answers 403 https_required and touches
 * nothing, except for a TLS-terminating proxy listed in TRUSTED_PROXIES that says
 * `X-Forwarded-Proto: https`: its requests go through the whole API. The proxy here is this
 * test at 127.0.0.1; the untrusted peer is this test again, connecting from 127.0.0.2 (on
 * Linux all of 127.0.0.0/8 is loopback), so one gateway decides both by peer address alone.
 */
describe('gateway plain-HTTP listener behind a trusted TLS-terminating proxy', () => {
  let stack: Stack;
  let acct: Account;

  beforeAll(async () => {
    stack = await startStack({ only: ['gateway'], env: { gateway: { TRUSTED_PROXIES: '10.0.0.9, 127.0.0.1' } } });
    acct = await newAccount(stack);
  }, 90_000);

  afterAll(async () => {
    await stack?.stopAll();
  });

  /** One request to the plain-HTTP listener, from the given local address. */
  function plain(path: string, headers: Record<string, string>, from = '127.0.0.1'): Promise<PlainAnswer> {
    return new Promise((resolve, reject) => {
      const req = http.request(`${stack.plainHttpUrl}${path}`, { headers, localAddress: from, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, json: text ? JSON.parse(text) : undefined });
        });
      });
      req.on('error', reject);
      req.end();
    });
  }

  const forwarded = () => ({ ...bearer(acct.api_keys.test), 'x-forwarded-proto': 'https' });

  it('serves a request the trusted proxy forwarded as https through the whole API: key, rate limit, handler', async () => {
    const r = await plain('/tasks?limit=1', forwarded());
    expect([r.status, r.json]).toEqual([200, { data: [], has_more: false }]);
    expect(r.headers['x-ratelimit-limit']).toBe('100');
    expect(r.headers['x-request-id']).toMatch(/^req_/);

    const noKey = await plain('/tasks', { 'x-forwarded-proto': 'https' });
    expect([noKey.status, noKey.json.error.code]).toEqual([401, 'missing_api_key']);
    const spec = await plain('/openapi.json', { 'x-forwarded-proto': 'https' });
    expect([spec.status, spec.json.openapi]).toEqual([200, '3.1.0']);
  });

  it.each([
    ['an untrusted peer saying X-Forwarded-Proto: https', '127.0.0.2', { 'x-forwarded-proto': 'https' }],
    ['the trusted proxy without X-Forwarded-Proto', '127.0.0.1', {}],
    ['the trusted proxy saying X-Forwarded-Proto: http', '127.0.0.1', { 'x-forwarded-proto': 'http' }],
  ])('answers 403 https_required to %s and counts nothing', async (_what, from, proto: Record<string, string>) => {
    await roomInWindow(10);
    const before = await plain('/tasks', forwarded());
    expect(before.status).toBe(200);

    const r = await plain('/tasks', { ...bearer(acct.api_keys.test), ...proto }, from);
    expect([r.status, r.json]).toEqual([403, { error: { code: 'https_required', message: expect.any(String) } }]);
    expect(r.headers['x-ratelimit-limit']).toBeUndefined();
    expect(r.headers['x-request-id']).toMatch(/^req_/);

    // The refused request never reached the rate limit: the next served one is the very next ticket.
    const after = await plain('/tasks', forwarded());
    expect(Number(after.headers['x-ratelimit-remaining'])).toBe(Number(before.headers['x-ratelimit-remaining']) - 1);
  });
});

/**
 * A listen port that is taken ends the boot with exit code 1 and one line naming the
 * variable and the port, instead of an unhandled 'error' event with a stack trace.
 */
describe('gateway with a listen port already in use', () => {
  let stack: Stack;
  let holder: http.Server;
  let taken: number;

  beforeAll(async () => {
    stack = await startStack({ only: [] });
    holder = http.createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    taken = (holder.address() as AddressInfo).port;
  }, 30_000);

  afterAll(() => closeServer(holder));

  it.each(['PORT', 'HTTP_PORT', 'OPS_PORT'])('exits 1 with "gateway: %s <port> is in use (EADDRINUSE)" and no stack', async (variable) => {
    const env = { ...stack.envOf('gateway'), PORT: '0', HTTP_PORT: '0', OPS_PORT: '0', [variable]: String(taken) };
    const proc = startService('gateway', env);
    try {
      await waitFor(() => proc.child.exitCode !== null, { what: 'the gateway to exit', timeoutMs: 20_000 });
    } finally {
      await proc.stop();
    }
    const output = proc.output();
    expect(proc.child.exitCode).toBe(1);
    expect(output).toContain(`gateway: ${variable} ${taken} is in use (EADDRINUSE)\n`);
    expect(output).not.toMatch(/^\s+at /m);
    expect(output).not.toContain("Unhandled 'error' event");
  });
});
