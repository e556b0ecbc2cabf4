import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * SSRF guard of the http tool: only http(s), and never a private, loopback,
 * link-local, shared, multicast or reserved address unless allow-listed
 * (HTTP_TOOL_ALLOW_HOSTS: host names, IPs or CIDRs). The check runs in the socket's
 * own DNS lookup, so the address checked is the address connected to (no DNS
 * rebinding window); IP literals are checked before connecting.
 */
const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['100::', 64],
  ['2001::', 32],
  ['2002::', 16],
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv6');
}

export class SsrfError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SsrfError';
  }
}

/** Eight 16-bit groups of an IPv6 address (embedded dotted IPv4 included). */
function groups6(ip: string): number[] | undefined {
  let s = ip.toLowerCase().replace(/%.*$/, '');
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s)?.[1];
  if (v4) {
    const p = v4.split('.').map(Number);
    s = s.replace(v4, `${(((p[0] ?? 0) << 8) | (p[1] ?? 0)).toString(16)}:${(((p[2] ?? 0) << 8) | (p[3] ?? 0)).toString(16)}`);
  }
  const [head, tail] = s.split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array<string>(8 - h.length - t.length).fill('0');
  const all = [...h, ...fill, ...t].map((g) => parseInt(g, 16));
  return all.length === 8 && all.every((n) => Number.isInteger(n) && n >= 0 && n <= 0xffff) ? all : undefined;
}

/** The IPv4 address an IPv6 one carries (v4-mapped ::ffff:a.b.c.d, v4-compatible, NAT64 64:ff9b::/96). */
function embeddedV4(ip: string): string | undefined {
  const g = groups6(ip);
  if (!g) return undefined;
  const mapped = g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0);
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0);
  if (!mapped && !nat64) return undefined;
  const a = g[6] ?? 0;
  const b = g[7] ?? 0;
  if (mapped && g[5] === 0 && a === 0 && b <= 1) return undefined; // :: and ::1 are IPv6's own
  return `${a >> 8}.${a & 0xff}.${b >> 8}.${b & 0xff}`;
}

export function isPrivateAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return BLOCKED.check(ip, 'ipv4');
  if (family === 6) {
    const v4 = embeddedV4(ip);
    if (v4) return BLOCKED.check(v4, 'ipv4');
    return BLOCKED.check(ip, 'ipv6');
  }
  return true;
}

export class AllowList {
  private readonly hosts = new Set<string>();
  private readonly nets = new BlockList();

  constructor(entries: readonly string[]) {
    for (const raw of entries) {
      const e = raw.trim().toLowerCase();
      if (!e) continue;
      const [addr, prefix] = e.split('/');
      const fam = addr ? isIP(addr) : 0;
      if (addr && fam && prefix !== undefined) this.nets.addSubnet(addr, Number(prefix), fam === 4 ? 'ipv4' : 'ipv6');
      else if (addr && fam) this.nets.addAddress(addr, fam === 4 ? 'ipv4' : 'ipv6');
      else this.hosts.add(e);
    }
  }

  allows(host: string, address: string): boolean {
    if (this.hosts.has(host.toLowerCase())) return true;
    const fam = isIP(address);
    return fam !== 0 && this.nets.check(address, fam === 4 ? 'ipv4' : 'ipv6');
  }
}

/** Refuses a URL that is not http(s) or whose host is a literal private address. */
export function checkUrl(url: string, allow: AllowList): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new SsrfError(`not a valid URL: ${url}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new SsrfError(`only http and https URLs may be fetched, not ${u.protocol}`);
  if (u.username || u.password) throw new SsrfError('URLs with credentials are refused');
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && isPrivateAddress(host) && !allow.allows(host, host))
    throw new SsrfError(`refused: ${host} is a private, loopback or reserved address`);
  return u;
}

/** A socket lookup that connects only to allowed addresses. */
export function guardedLookup(allow: AllowList): LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err);
      const ok = addresses.filter((a) => !isPrivateAddress(a.address) || allow.allows(hostname, a.address));
      if (ok.length === 0) {
        return callback(
          new SsrfError(
            `refused: ${hostname} resolves to a private, loopback or reserved address (${addresses.map((a) => a.address).join(', ')})`,
          ),
        );
      }
      if (options.all) return callback(null, ok);
      const first = ok[0];
      return callback(null, first?.address, first?.family);
    });
  }) as unknown as LookupFunction;
}

const agents = new WeakMap<object, { allow: AllowList; http: http.Agent; https: https.Agent }>();

/** HTTP(S) agents whose every connection passes the guard; one pair per settings object. */
export function guardedAgents(settings: { allowHosts: readonly string[] }): { allow: AllowList; http: http.Agent; https: https.Agent } {
  let a = agents.get(settings);
  if (!a) {
    const allow = new AllowList(settings.allowHosts);
    const lookup = guardedLookup(allow);
    a = { allow, http: new http.Agent({ lookup }), https: new https.Agent({ lookup }) };
    agents.set(settings, a);
  }
  return a;
}
