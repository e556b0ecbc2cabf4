import ipaddr from 'ipaddr.js';

/** Host names, IP addresses and CIDRs an operator exempts from the address check. */
export class AllowList {
  private readonly hosts = new Set<string>();
  private readonly nets: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];

  constructor(entries: readonly string[]) {
    for (const raw of entries) {
      const e = raw.trim().toLowerCase();
      if (!e) continue;
      if (ipaddr.isValidCIDR(e)) this.nets.push(ipaddr.parseCIDR(e));
      else if (ipaddr.isValid(e)) {
        const ip = ipaddr.parse(e);
        this.nets.push([ip, ip.kind() === 'ipv4' ? 32 : 128]);
      } else this.hosts.add(e);
    }
  }

  get size(): number {
    return this.hosts.size + this.nets.length;
  }

  /** `host` as written in the URL, `address` what it resolved to. */
  allows(host: string, address: string): boolean {
    if (this.hosts.has(host.toLowerCase().replace(/^\[|\]$/g, ''))) return true;
    const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
    if (!ipaddr.isValid(bare)) return false;
    const ip = ipaddr.process(bare);
    return this.nets.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net, bits));
  }
}
