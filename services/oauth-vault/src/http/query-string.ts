import type { Request } from 'express';

/** A single string query parameter, or undefined (repeated or nested parameters are ignored). */
export function queryString(req: Request, name: string): string | undefined {
  const v = req.query[name];
  return typeof v === 'string' ? v : undefined;
}
