/**
 * A small HTTPS client for the chaos and fuzz suites: keep-alive connections (accepting
 * the development certificate), a hard per-request timeout, and no throwing for HTTP
 * statuses. A transport failure (refused, reset, timeout) is status 0 with `error`.
 */
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: unknown;
  error?: string;
  ms: number;
}

export interface Client {
  send(
    method: string,
    url: string,
    options?: { headers?: Record<string, string | string[]>; body?: string | Buffer; timeoutMs?: number; path?: string },
  ): Promise<Answer>;
  close(): void;
}

export function httpsClient({ maxSockets = 16 }: { maxSockets?: number } = {}): Client {
  const agent = new https.Agent({ keepAlive: true, maxSockets, rejectUnauthorized: false });
  return {
    send(method, url, options = {}) {
      const u = new URL(url);
      const t0 = Date.now();
      return new Promise<Answer>((resolve) => {
        let settled = false;
        const done = (a: Omit<Answer, 'ms'>) => {
          if (settled) return;
          settled = true;
          resolve({ ...a, ms: Date.now() - t0 });
        };
        let req: ReturnType<typeof https.request>;
        try {
          req = https.request(
            {
              agent,
              method,
              host: u.hostname,
              port: u.port,
              // A raw path may carry what URL() would normalise away (fuzzing).
              path: options.path ?? `${u.pathname}${u.search}`,
              headers: options.headers ?? {},
            },
            (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('error', (err: Error) =>
                done({ status: 0, headers: {}, text: '', json: undefined, error: `response: ${err.message}` }),
              );
              res.on('end', () => {
                const text = Buffer.concat(chunks).toString('utf8');
                let json: unknown;
                try {
                  json = text ? JSON.parse(text) : undefined;
                } catch {
                  json = undefined;
                }
                done({ status: res.statusCode ?? 0, headers: res.headers, text, json });
              });
            },
          );
        } catch (err) {
          // Refused by node itself before anything was sent (invalid header or path).
          done({ status: -1, headers: {}, text: '', json: undefined, error: `client: ${(err as Error).message}` });
          return;
        }
        req.on('error', (err: Error) => done({ status: 0, headers: {}, text: '', json: undefined, error: err.message }));
        // A deadline for the whole exchange (an idle-socket timeout would not catch a slow drip).
        const limit = options.timeoutMs ?? 10_000;
        const timer = setTimeout(() => {
          done({ status: 0, headers: {}, text: '', json: undefined, error: `timeout: no complete answer within ${limit} ms` });
          req.destroy();
        }, limit);
        req.on('close', () => clearTimeout(timer));
        if (options.body !== undefined) req.write(options.body);
        req.end();
      });
    },
    close() {
      agent.destroy();
    },
  };
}
