import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { AllowList } from './allow-list.js';
import { classifyAddress, isIpLiteral, PRIVATE_RANGES } from './address.js';

/** What every refusal says where the caller shows it to whoever chose the URL: nothing about what is there. */
export const REFUSED_MESSAGE = 'destination not allowed';

/**
 * A URL or address the policy refuses. `reason` says why from the URL and DNS alone (never from
 * a connection attempt): for the operator's logs and for the one who registers the URL; places
 * that report on requests (delivery logs, step errors) show only `message`.
 */
export class OutboundRefusedError extends Error {
  readonly code = 'destination_not_allowed';
  constructor(readonly reason: string) {
    super(REFUSED_MESSAGE);
    this.name = 'OutboundRefusedError';
  }
}

export interface PolicyOptions {
  /** https only (live). Plain http stays allowed to a private IP literal when `allowPrivate` is on. */
  httpsOnly: boolean;
  /** OUTBOUND_ALLOW_PRIVATE: loopback, private, CGNAT and unique-local addresses allowed. Local development only. */
  allowPrivate?: boolean;
  /** Host names, IPs or CIDRs exempt from the address check (the services' existing allow-lists). */
  allowHosts?: readonly string[];
}

/** `dns.lookup` with `all: true`; tests pass their own to play DNS rebinding. */
export type Resolver = (hostname: string, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

const systemResolver: Resolver = (hostname, callback) => dnsLookup(hostname, { all: true, verbatim: true }, callback);

/**
 * The one outbound-request policy (docs/operations.md, "Outbound requests"): for a URL the service
 * did not choose itself, http(s) only, https in live, no credentials in the URL, and every address
 * connected to public unless allowed. The address check runs inside the socket's DNS lookup
 * (`lookup`), so the address checked is the address connected to: no DNS rebinding.
 */
export class OutboundPolicy {
  readonly httpsOnly: boolean;
  readonly allowPrivate: boolean;
  private readonly allow: AllowList;

  constructor(
    options: PolicyOptions,
    private readonly resolver: Resolver = systemResolver,
  ) {
    this.httpsOnly = options.httpsOnly;
    this.allowPrivate = options.allowPrivate ?? false;
    this.allow = new AllowList(options.allowHosts ?? []);
  }

  /** Throws unless `address` (what `host` resolved to, or `host` itself when a literal) may be connected to. */
  checkAddress(host: string, address: string): void {
    if (this.allow.allows(host, address)) return;
    const range = classifyAddress(address);
    if (range === 'public' || (this.allowPrivate && PRIVATE_RANGES.has(range))) return;
    const what = range === 'invalid' ? 'not an IP address' : `a ${range} address`;
    throw new OutboundRefusedError(host === address ? `${host} is ${what}` : `${host} resolves to ${what}`);
  }

  /** The rules that need no DNS: scheme, credentials, and the address of an IP-literal host. */
  checkUrl(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new OutboundRefusedError('not a valid URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new OutboundRefusedError(`scheme ${url.protocol} is not allowed: use https`);
    if (url.username || url.password) throw new OutboundRefusedError('credentials in the URL are not allowed');
    const host = hostOf(url);
    if (!host) throw new OutboundRefusedError('the URL has no host');
    if (isIpLiteral(host)) this.checkAddress(host, host);
    if (this.httpsOnly && url.protocol !== 'https:' && !this.devHttp(host)) throw new OutboundRefusedError('only https is allowed');
    return url;
  }

  /**
   * The URL rules, and the addresses the host resolves to now (when a URL is registered). A host
   * that does not resolve yet passes: the connect-time check decides when it does.
   */
  async checkDestination(raw: string): Promise<URL> {
    const url = this.checkUrl(raw);
    const host = hostOf(url);
    if (isIpLiteral(host)) return url;
    const addresses = await new Promise<LookupAddress[]>((resolve) => this.resolver(host, (err, list) => resolve(err ? [] : list)));
    for (const a of addresses) this.checkAddress(host, a.address);
    return url;
  }

  /**
   * A `lookup` for net/http(s) sockets that fails when any address of the host is refused, so a
   * connection only ever goes to an address this policy checked.
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    this.resolver(hostname, (err, addresses) => {
      if (err) return callback(err, '', 0);
      try {
        if (addresses.length === 0) throw Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' });
        for (const a of addresses) this.checkAddress(hostname, a.address);
      } catch (e) {
        return callback(e as NodeJS.ErrnoException, '', 0);
      }
      const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, wanted);
      const first = wanted[0];
      if (!first)
        return callback(Object.assign(new Error(`${hostname} has no IPv${options.family} address`), { code: 'ENOTFOUND' }), '', 0);
      callback(null, first.address, first.family);
    });
  };

  /** Plain http in live only toward a developer's own machine, with OUTBOUND_ALLOW_PRIVATE on. */
  private devHttp(host: string): boolean {
    if (!this.allowPrivate) return false;
    if (host === 'localhost') return true;
    return isIpLiteral(host) && PRIVATE_RANGES.has(classifyAddress(host));
  }
}

/** The host without IPv6 brackets, lower-case. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

/** The environment schema fragment every service that makes outbound requests adds to its config. */
export const outboundEnv = {
  /** Local development only: loopback and private targets allowed (docs/operations.md). */
  OUTBOUND_ALLOW_PRIVATE: { type: 'boolean', default: false },
} as const;
