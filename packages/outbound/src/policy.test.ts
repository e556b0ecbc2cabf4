import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OutboundPolicy, OutboundRefusedError, REFUSED_MESSAGE, type Resolver } from './policy.js';
import { outboundRequest } from './request.js';

const live = new OutboundPolicy({ httpsOnly: true });
const test = new OutboundPolicy({ httpsOnly: false });
const dev = new OutboundPolicy({ httpsOnly: true, allowPrivate: true });

function reasonOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(OutboundRefusedError);
    expect((err as Error).message).toBe(REFUSED_MESSAGE);
    return (err as OutboundRefusedError).reason;
  }
  throw new Error('not refused');
}

/** A resolver answering from a table; `answers` is consumed one entry per lookup (DNS rebinding). */
function fakeDns(answers: string[][]): Resolver & { calls: number } {
  const r = Object.assign(
    (_host: string, cb: (e: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) => {
      const list = answers[Math.min(r.calls++, answers.length - 1)] ?? [];
      setImmediate(() =>
        cb(
          null,
          list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
        ),
      );
    },
    { calls: 0 },
  );
  return r;
}

describe('OutboundPolicy', () => {
  it('refuses loopback, private, link-local and reserved literals in any spelling, with a generic message', () => {
    for (const url of [
      'https://127.0.0.1/x',
      'https://[::1]/x',
      'https://2130706433/x',
      'https://0x7f.0.0.1/x',
      'https://10.0.0.5/x',
      'https://100.64.1.1/x',
      'https://169.254.169.254/latest',
      'https://[::ffff:10.0.0.1]/x',
      'https://[::ffff:7f00:1]/x',
      'https://[64:ff9b::a9fe:a9fe]/x',
      'https://[fd12::1]/x',
      'https://0.0.0.0/x',
      'https://192.0.2.1/x',
    ]) {
      expect(reasonOf(() => live.checkUrl(url))).toMatch(/ is an? \w+ address$/);
      expect(reasonOf(() => test.checkUrl(url))).toMatch(/ is an? \w+ address$/);
    }
    expect(live.checkUrl('https://93.184.215.14/x').hostname).toBe('93.184.215.14');
  });

  it('wants https when httpsOnly (live), http otherwise; no other scheme, no credentials', () => {
    expect(reasonOf(() => live.checkUrl('http://hooks.example.com/x'))).toBe('only https is allowed');
    expect(test.checkUrl('http://hooks.example.com/x').protocol).toBe('http:');
    expect(reasonOf(() => test.checkUrl('ftp://example.com/x'))).toMatch(/scheme ftp:/);
    expect(reasonOf(() => test.checkUrl('file:///etc/passwd'))).toMatch(/scheme file:/);
    expect(reasonOf(() => live.checkUrl('https://user:pw@example.com/x'))).toBe('credentials in the URL are not allowed');
    expect(reasonOf(() => live.checkUrl('https://user@example.com/x'))).toBe('credentials in the URL are not allowed');
    expect(reasonOf(() => live.checkUrl('not a url'))).toBe('not a valid URL');
  });

  it('OUTBOUND_ALLOW_PRIVATE opens loopback and private targets (http to literals too), never link-local or reserved', () => {
    expect(dev.checkUrl('http://127.0.0.1:8080/hook').port).toBe('8080');
    expect(dev.checkUrl('https://10.1.2.3/hook').hostname).toBe('10.1.2.3');
    expect(dev.checkUrl('http://localhost:9/x').hostname).toBe('localhost');
    expect(reasonOf(() => dev.checkUrl('http://hooks.example.com/x'))).toBe('only https is allowed');
    expect(reasonOf(() => dev.checkUrl('https://169.254.169.254/latest'))).toMatch(/linkLocal/);
    expect(reasonOf(() => dev.checkUrl('https://0.0.0.0/'))).toMatch(/unspecified/);
  });

  it('exempts allow-listed hosts, IPs and CIDRs from the address check, not from https', () => {
    const allowed = new OutboundPolicy({ httpsOnly: true, allowHosts: ['localhost', '10.0.0.0/8', '127.0.0.1'] });
    expect(allowed.checkUrl('https://127.0.0.1/x').hostname).toBe('127.0.0.1');
    expect(allowed.checkUrl('https://10.9.9.9/x').hostname).toBe('10.9.9.9');
    expect(() => allowed.checkAddress('LocalHost', '::1')).not.toThrow();
    expect(reasonOf(() => allowed.checkUrl('https://192.168.0.1/x'))).toMatch(/private/);
    expect(reasonOf(() => allowed.checkUrl('http://127.0.0.1/x'))).toBe('only https is allowed');
  });

  it('resolves host names when a URL is registered: a private answer is refused, no answer passes (checked again at connect)', async () => {
    await expect(live.checkDestination('https://localhost/x')).rejects.toMatchObject({
      reason: expect.stringMatching(/localhost resolves to a loopback address/),
    });
    await expect(
      new OutboundPolicy({ httpsOnly: true }, fakeDns([['93.184.215.14', '10.0.0.1']])).checkDestination('https://mixed.test/'),
    ).rejects.toThrow(OutboundRefusedError);
    await expect(new OutboundPolicy({ httpsOnly: true }, fakeDns([[]])).checkDestination('https://nowhere.test/')).resolves.toBeInstanceOf(
      URL,
    );
  });
});

describe('outboundRequest', () => {
  let server: http.Server;
  let port: number;
  const hits: string[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/redirect') res.writeHead(302, { location: `http://127.0.0.1:${port}/secret` }).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => hits.splice(0));

  it('never connects to a refused address', async () => {
    await expect(outboundRequest(`http://127.0.0.1:${port}/x`, { method: 'GET', timeoutMs: 1000 }, test)).rejects.toThrow(REFUSED_MESSAGE);
    await expect(outboundRequest(`http://localhost:${port}/x`, { method: 'GET', timeoutMs: 1000 }, test)).rejects.toThrow(REFUSED_MESSAGE);
    expect(hits).toEqual([]);
  });

  it('checks the address at connect time: a host that rebinds to loopback after the registration check is refused', async () => {
    const dns = fakeDns([['93.184.215.14'], ['127.0.0.1']]);
    const policy = new OutboundPolicy({ httpsOnly: false }, dns);
    await expect(policy.checkDestination(`http://rebind.test:${port}/x`)).resolves.toBeInstanceOf(URL);
    await expect(outboundRequest(`http://rebind.test:${port}/x`, { method: 'GET', timeoutMs: 1000 }, policy)).rejects.toMatchObject({
      reason: 'rebind.test resolves to a loopback address',
    });
    expect(dns.calls).toBe(2);
    expect(hits).toEqual([]);
    // The same host answered with an allowed address is reached through that address.
    const ok = new OutboundPolicy({ httpsOnly: false, allowPrivate: true }, fakeDns([['127.0.0.1']]));
    const res = await outboundRequest(`http://rebind.test:${port}/x`, { method: 'GET', timeoutMs: 1000 }, ok);
    expect([res.status, res.body.toString()]).toEqual([200, '{"ok":true}']);
  });

  it('does not follow redirects', async () => {
    const res = await outboundRequest(`http://127.0.0.1:${port}/redirect`, { method: 'POST', body: 'a=1', timeoutMs: 1000 }, dev);
    expect([res.status, res.headers['location']]).toEqual([302, `http://127.0.0.1:${port}/secret`]);
    expect(hits).toEqual(['/redirect']);
  });
});
