import https from 'node:https';
import http from 'node:http';

/** A keep-alive client for the benchmark: many sockets, the development certificate accepted. */
export function keepAliveClient(maxSockets = 256) {
  const agent = new https.Agent({ keepAlive: true, maxSockets, rejectUnauthorized: false });
  const plainAgent = new http.Agent({ keepAlive: true, maxSockets });
  return {
    request(method: string, url: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: string }> {
      const u = new URL(url);
      const lib = u.protocol === 'https:' ? https : http;
      return new Promise((resolve, reject) => {
        const req = lib.request(
          u,
          {
            method,
            headers: body ? { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : headers,
            agent: u.protocol === 'https:' ? agent : plainAgent,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          },
        );
        req.on('error', reject);
        req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
        if (body) req.write(body);
        req.end();
      });
    },
    close() {
      agent.destroy();
      plainAgent.destroy();
    },
  };
}
