import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { addressKey, clientAddressOf, normalizeAddress } from './client-address.js';

describe('client address', () => {
  async function seen(trusted: string[], headers: Record<string, string>): Promise<string> {
    const of = clientAddressOf(trusted);
    const server = http.createServer((req, res) => res.end(of(req)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { headers });
      return await res.text();
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  }

  it('is the socket peer when no proxy is trusted, whatever X-Forwarded-For says', async () => {
    expect(await seen([], { 'x-forwarded-for': '203.0.113.7' })).toBe('127.0.0.1');
  });

  it('believes X-Forwarded-For only from a trusted proxy, skipping trusted hops', async () => {
    expect(await seen(['127.0.0.1'], { 'x-forwarded-for': '198.51.100.1, 203.0.113.7' })).toBe('203.0.113.7');
    expect(await seen(['127.0.0.1', '203.0.113.7'], { 'x-forwarded-for': '198.51.100.1, 203.0.113.7' })).toBe('198.51.100.1');
    expect(await seen(['10.9.9.9'], { 'x-forwarded-for': '203.0.113.7' })).toBe('127.0.0.1');
  });

  it('counts IPv4 addresses singly and IPv6 by /64', () => {
    expect(normalizeAddress('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(addressKey('192.0.2.1')).toBe('192.0.2.1');
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:2:bbbb::9')).toBe(addressKey('2001:db8:1:2:aaaa::1'));
  });
});
