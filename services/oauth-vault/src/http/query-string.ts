import type { Request } from 'express';

/** The request's cookies (no dependency for the two cookies this service reads). */
export function cookiesOf(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.get('cookie') ?? '').split(';')) {
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

export interface CookieOptions {
  maxAgeS: number;
  path: string;
  sameSite: 'Lax' | 'Strict';
  secure: boolean;
}

export function serializeCookie(name: string, value: string, o: CookieOptions): string {
  return `${name}=${encodeURIComponent(value)}; Max-Age=${o.maxAgeS}; Path=${o.path}; HttpOnly; SameSite=${o.sameSite}${o.secure ? '; Secure' : ''}`;
}

/** A single string query parameter, or undefined (repeated or nested parameters are ignored). */
export function queryString(req: Request, name: string): string | undefined {
  const v = req.query[name];
  return typeof v === 'string' ? v : undefined;
}
