import type { LookupAddress } from 'node:dns';
import { checkAddress, checkDestination, checkUrl, classifyAddress, guardedLookup, UnsafeDestinationError } from './ssrf-guard.js';

const none = { allowedHosts: new Set<string>() };

describe('destination guard', () => {
  it('classifies addresses', () => {
    expect(classifyAddress('127.0.0.1')).toBe('loopback');
    expect(classifyAddress('::1')).toBe('loopback');
    expect(classifyAddress('::ffff:127.0.0.1')).toBe('loopback');
    expect(classifyAddress('10.1.2.3')).toBe('private');
    expect(classifyAddress('172.20.0.1')).toBe('private');
    expect(classifyAddress('192.168.1.1')).toBe('private');
    expect(classifyAddress('100.64.0.1')).toBe('private');
    expect(classifyAddress('fd00::1')).toBe('private');
    expect(classifyAddress('169.254.169.254')).toBe('link_local');
    expect(classifyAddress('fe80::1')).toBe('link_local');
    expect(classifyAddress('0.0.0.0')).toBe('unspecified');
    expect(classifyAddress('224.0.0.1')).toBe('multicast');
    expect(classifyAddress('8.8.8.8')).toBe('public');
    expect(classifyAddress('2606:4700::1111')).toBe('public');
  });

  it('refuses a live endpoint over plain http', () => {
    expect(() => checkUrl('http://hooks.example.com/x', 'live', none)).toThrow('live endpoints must use https');
  });

  it('refuses a live https endpoint on loopback, private or link-local addresses, in any spelling', () => {
    for (const url of [
      'https://127.0.0.1/x',
      'https://[::1]/x',
      'https://2130706433/x',
      'https://0x7f.0.0.1/x',
      'https://10.0.0.5/x',
      'https://169.254.169.254/latest',
      'https://[::ffff:10.0.0.1]/x',
    ]) {
      expect(() => checkUrl(url, 'live', none)).toThrow(UnsafeDestinationError);
    }
    expect(checkUrl('https://93.184.215.14/x', 'live', none).hostname).toBe('93.184.215.14');
  });

  it('lets test endpoints use http on loopback and private addresses, never link-local', () => {
    expect(checkUrl('http://127.0.0.1:8080/hook', 'test', none).port).toBe('8080');
    expect(checkUrl('http://192.168.1.10/hook', 'test', none).protocol).toBe('http:');
    expect(() => checkUrl('http://169.254.169.254/latest/meta-data', 'test', none)).toThrow('link-local');
  });

  it('refuses other schemes, credentials in the URL and garbage', () => {
    expect(() => checkUrl('ftp://example.com/x', 'test', none)).toThrow('scheme');
    expect(() => checkUrl('https://user:pw@example.com/x', 'live', none)).toThrow('credentials');
    expect(() => checkUrl('not a url', 'test', none)).toThrow('not a valid URL');
  });

  it('exempts hosts of WEBHOOK_ALLOWED_HOSTS from the address check, not from https', () => {
    const allowed = { allowedHosts: new Set(['127.0.0.1', 'localhost']) };
    expect(() => checkUrl('https://127.0.0.1/x', 'live', allowed)).not.toThrow();
    expect(() => checkAddress('LocalHost', '127.0.0.1', 'live', allowed)).not.toThrow();
    expect(() => checkUrl('http://127.0.0.1/x', 'live', allowed)).toThrow('https');
  });

  it('resolves host names at set time: localhost is refused for live, allowed for test', async () => {
    await expect(checkDestination('https://localhost/x', 'live', none)).rejects.toThrow(/localhost resolves to a loopback address/);
    await expect(checkDestination('http://localhost:9/x', 'test', none)).resolves.toBeInstanceOf(URL);
    await expect(checkDestination('https://no-such-host.invalid/x', 'live', none)).rejects.toThrow('does not resolve');
  });

  it('checks at connect time the addresses the connection will use', async () => {
    const run = (env: 'test' | 'live', all: boolean) =>
      new Promise<{ err: NodeJS.ErrnoException | null; addr: string | LookupAddress[] }>((resolve) =>
        guardedLookup(env, none)('localhost', { all }, (err: NodeJS.ErrnoException | null, addr: string | LookupAddress[]) =>
          resolve({ err, addr }),
        ),
      );
    const live = await run('live', false);
    expect(live.err).toBeInstanceOf(UnsafeDestinationError);
    const test = await run('test', false);
    expect(test.err).toBeNull();
    expect(['127.0.0.1', '::1']).toContain(test.addr);
    const testAll = await run('test', true);
    expect(Array.isArray(testAll.addr)).toBe(true);
  });
});
