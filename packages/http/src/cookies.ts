import type { Request } from 'express';

/** A Cookie header's cookies; a value that is not valid percent-encoding is kept as sent. */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    const name = part.slice(0, i).trim();
    const raw = part.slice(i + 1).trim();
    try {
      out[name] = decodeURIComponent(raw);
    } catch {
      out[name] = raw;
    }
  }
  return out;
}

/** The request's cookies (no dependency for the few cookies the services read). */
export function cookiesOf(req: Request): Record<string, string> {
  return parseCookies(req.get('cookie'));
}

export interface CookieOptions {
  maxAgeS: number;
  path: string;
  sameSite: 'Lax' | 'Strict';
  secure: boolean;
}

/** A Set-Cookie value; always HttpOnly (no script reads these cookies). Max-Age 0 clears the cookie. */
export function serializeCookie(name: string, value: string, o: CookieOptions): string {
  const secure = o.secure ? '; Secure' : '';
  return `${name}=${encodeURIComponent(value)}; Max-Age=${o.maxAgeS}; Path=${o.path}; HttpOnly${secure}; SameSite=${o.sameSite}`;
}
