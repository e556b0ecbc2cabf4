import ipaddr from 'ipaddr.js';

/**
 * What an IP address is, by ipaddr.js's range tables: `public` (its `unicast`) or the name of the
 * special range it falls in (`loopback`, `private`, `linkLocal`, `carrierGradeNat`, `uniqueLocal`,
 * `multicast`, `reserved`, `unspecified`, ...). An IPv6 address that carries an IPv4 one
 * (IPv4-mapped ::ffff:a.b.c.d, IPv4-translated, IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96)
 * is the IPv4 address it carries; other translation ranges (6to4, Teredo, 64:ff9b:1::/48) are
 * `reserved`: where they lead cannot be told from the address.
 */
export function classifyAddress(address: string): string {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!ipaddr.isValid(bare)) return 'invalid';
  const ip = ipaddr.parse(bare);
  if (ip.kind() === 'ipv4') return name(ip.range());
  const v6 = ip as ipaddr.IPv6;
  const v4 = embeddedIPv4(v6);
  if (v4) return name(v4.range());
  const range = v6.range();
  if (range === '6to4' || range === 'teredo' || range === 'rfc6052') return 'reserved';
  return name(range);
}

/** Only ipaddr.js's "unicast" (no special range) is a public address. */
function name(range: string): string {
  return range === 'unicast' ? 'public' : range;
}

function embeddedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = ip.parts;
  const head = (n: number) => p.slice(0, n).every((x) => x === 0);
  const tail = () => new ipaddr.IPv4([(p[6] ?? 0) >> 8, (p[6] ?? 0) & 0xff, (p[7] ?? 0) >> 8, (p[7] ?? 0) & 0xff]);
  // ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (translated)
  if (head(5) && p[5] === 0xffff) return tail();
  if (head(4) && p[4] === 0xffff && p[5] === 0) return tail();
  // ::a.b.c.d (IPv4-compatible, deprecated), but not :: and ::1, which are IPv6's own
  if (head(6) && ((p[6] ?? 0) !== 0 || (p[7] ?? 0) > 1)) return tail();
  // 64:ff9b::a.b.c.d (NAT64 well-known prefix)
  if (p[0] === 0x64 && p[1] === 0xff9b && p.slice(2, 6).every((x) => x === 0)) return tail();
  return undefined;
}

/** Ranges that OUTBOUND_ALLOW_PRIVATE opens (a developer's own machine and networks); never link-local (cloud metadata), unspecified or reserved. */
export const PRIVATE_RANGES: ReadonlySet<string> = new Set(['loopback', 'private', 'carrierGradeNat', 'uniqueLocal']);

export function isIpLiteral(host: string): boolean {
  return ipaddr.isValid(host.replace(/^\[|\]$/g, ''));
}
