import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';
import proxyaddr from 'proxy-addr';

/**
 * The client's address: the socket's peer, or, when that peer is one of the trusted proxies
 * (the gateway's and vault's TRUSTED_PROXIES), the nearest X-Forwarded-For entry that is not a
 * trusted proxy itself. This is express's `trust proxy` logic (proxy-addr) without turning it on
 * for the whole app. A header from anyone else is ignored, so a client cannot choose its address.
 */
export function clientAddressOf(trustedProxies: readonly string[]): (req: IncomingMessage) => string {
  const trust = proxyaddr.compile(trustedProxies.map((p) => p.trim()).filter(Boolean));
  return (req) => {
    if (!req.socket.remoteAddress) return 'unknown';
    return normalizeAddress(proxyaddr(req, trust));
  };
}

/** IPv4-mapped IPv6 (`::ffff:1.2.3.4`) as IPv4; other addresses in their canonical form. */
export function normalizeAddress(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const a = ipaddr.parse(address);
  if (a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress()) return (a as ipaddr.IPv6).toIPv4Address().toString();
  return a.toString();
}

/**
 * What counts as one client for limits: an IPv4 address, or an IPv6 /64 (one host usually holds a
 * whole /64, so counting single IPv6 addresses would let it rotate through 2^64 of them).
 */
export function addressKey(address: string): string {
  const normalized = normalizeAddress(address);
  if (!ipaddr.IPv6.isValid(normalized) || ipaddr.IPv4.isValid(normalized)) return normalized;
  const parts = ipaddr.IPv6.parse(normalized).parts.slice(0, 4);
  return `${ipaddr.fromByteArray([...parts.flatMap((p) => [p >> 8, p & 0xff]), ...new Array<number>(8).fill(0)]).toString()}/64`;
}
