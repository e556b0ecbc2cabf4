import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './ops.js';

describe('closeServer', () => {
  it('closes at once after the answer in flight, though its client keeps the connection alive', async () => {
    const server = http.createServer((_req, res) => setTimeout(() => res.end('ok'), 300));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const agent = new http.Agent({ keepAlive: true });
    try {
      const answered = new Promise<number>((resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, agent }, (res) => {
            res.resume();
            res.on('end', () => resolve(Date.now()));
          })
          .on('error', reject);
      });
      await new Promise((r) => setTimeout(r, 50)); // the request is being handled
      const closed = closeServer(server).then(() => Date.now());
      const [answerAt, closedAt] = await Promise.all([answered, closed]);
      // Without the sweep the close waits for the keep-alive timeout (5 s here, 65 s behind a balancer).
      expect(closedAt - answerAt).toBeLessThan(1000);
    } finally {
      agent.destroy();
    }
  });
});
