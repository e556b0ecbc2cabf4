import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { Environment } from '@tes/contracts';

/**
 * Where a webhook may go (server-side request forgery guard), checked when an endpoint is set
 * and again at every delivery, on the addresses the connection will actually use:
 * - live endpoints: https only, and every address the host resolves to must be public
 *   (not loopback, private, link-local, CGNAT, unspecified, multicast or reserved), unless
 *   the host is listed in WEBHOOK_ALLOWED_HOSTS;
 * - test endpoints: http or https, loopback and private addresses allowed (local receivers),
 *   but never link-local (cloud metadata at 169.254.169.254), unspecified, multicast or reserved.
 * URLs with credentials (`user:pass@`) are refused everywhere.
 */
export class UnsafeDestinationError extends Error {
  readonly code = 'unsafe_destination';
  constructor(message: string) {
    super(message);
    this.name = 'UnsafeDestinationError';
  }
}

export interface GuardOptions {
  /** Lower-case host names exempt from the address checks. */
  allowedHosts: ReadonlySet<string>;
}

export type AddressClass = 'public' | 'loopback' | 'private' | 'link_local' | 'unspecified' | 'multicast' | 'reserved';

function blockList(entries: readonly [string, number, 'ipv4' | 'ipv6'][]): BlockList {
  const list = new BlockList();
  for (const [net, prefix, type] of entries) list.addSubnet(net, prefix, type);
  return list;
}

const RANGES: readonly [Exclude<AddressClass, 'public'>, BlockList][] = [
  [
    'loopback',
    blockList([
      ['127.0.0.0', 8, 'ipv4'],
      ['::1', 128, 'ipv6'],
    ]),
  ],
  [
    'unspecified',
    blockList([
      ['0.0.0.0', 8, 'ipv4'],
      ['::', 128, 'ipv6'],
    ]),
  ],
  [
    'link_local',
    blockList([
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ]),
  ],
  [
    'private',
    blockList([
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
      ['100.64.0.0', 10, 'ipv4'],
      ['fc00::', 7, 'ipv6'],
    ]),
  ],
  [
    'multicast',
    blockList([
      ['224.0.0.0', 4, 'ipv4'],
      ['ff00::', 8, 'ipv6'],
    ]),
  ],
  [
    'reserved',
    blockList([
      ['192.0.0.0', 24, 'ipv4'],
      ['192.0.2.0', 24, 'ipv4'],
      ['198.18.0.0', 15, 'ipv4'],
      ['198.51.100.0', 24, 'ipv4'],
      ['203.0.113.0', 24, 'ipv4'],
      ['240.0.0.0', 4, 'ipv4'],
      ['64:ff9b::', 96, 'ipv6'],
      ['64:ff9b:1::', 48, 'ipv6'],
      ['100::', 64, 'ipv6'],
      ['2001:db8::', 32, 'ipv6'],
    ]),
  ],
];

/** `::ffff:10.0.0.1` is 10.0.0.1. */
function unmap(ip: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return m?.[1] ?? ip;
}

export function classifyAddress(address: string): AddressClass {
  const ip = unmap(address);
  const family = isIP(ip);
  if (family === 0) throw new UnsafeDestinationError(`${address} is not an IP address`);
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const [cls, list] of RANGES) if (list.check(ip, type)) return cls;
  return 'public';
}

const ALLOWED_IN_TEST: ReadonlySet<AddressClass> = new Set(['public', 'loopback', 'private']);

/** Throws unless `address` (what `host` resolved to) may be connected to for this environment. */
export function checkAddress(host: string, address: string, environment: Environment, options: GuardOptions): void {
  if (options.allowedHosts.has(host.toLowerCase())) return;
  const cls = classifyAddress(address);
  const ok = environment === 'live' ? cls === 'public' : ALLOWED_IN_TEST.has(cls);
  if (ok) return;
  const what = `a ${cls.replace('_', '-')} address`;
  throw new UnsafeDestinationError(
    host === address
      ? `${host} is ${what}, not allowed for ${environment} endpoints`
      : `${host} resolves to ${what} (${address}), not allowed for ${environment} endpoints`,
  );
}

function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

/**
 * The URL rules that need no DNS: scheme, credentials, and the address when the host is an IP
 * literal (connections to literals never go through a lookup).
 */
export function checkUrl(raw: string, environment: Environment, options: GuardOptions): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeDestinationError(`${JSON.stringify(raw)} is not a valid URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new UnsafeDestinationError(`scheme ${url.protocol} is not allowed: use https`);
  if (environment === 'live' && url.protocol !== 'https:') throw new UnsafeDestinationError('live endpoints must use https');
  if (url.username || url.password) throw new UnsafeDestinationError('credentials in the URL are not allowed');
  const host = bareHost(url);
  if (!host) throw new UnsafeDestinationError('the URL has no host');
  if (isIP(host)) checkAddress(host, host, environment, options);
  return url;
}

/** Full check with DNS (endpoint set time): every address the host resolves to must pass. */
export async function checkDestination(raw: string, environment: Environment, options: GuardOptions): Promise<URL> {
  const url = checkUrl(raw, environment, options);
  const host = bareHost(url);
  if (isIP(host) || options.allowedHosts.has(host)) return url;
  let addresses: LookupAddress[];
  try {
    addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
      dnsLookup(host, { all: true, verbatim: true }, (err, list) => (err ? reject(err) : resolve(list))),
    );
  } catch (err) {
    throw new UnsafeDestinationError(`${host} does not resolve: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  for (const a of addresses) checkAddress(host, a.address, environment, options);
  return url;
}

/**
 * A `lookup` for http(s).request that refuses the connection when any address of the host
 * fails the rules, so the address checked is the address connected to (no DNS rebinding
 * between the check and the connect).
 */
export function guardedLookup(environment: Environment, options: GuardOptions): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    dnsLookup(hostname, { ...lookupOptions, all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      try {
        for (const a of addresses) checkAddress(hostname, a.address, environment, options);
      } catch (guardErr) {
        return callback(guardErr as NodeJS.ErrnoException, '', 0);
      }
      if (lookupOptions.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      callback(null, first.address, first.family);
    });
  };
}
