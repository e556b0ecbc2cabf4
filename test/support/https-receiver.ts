import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generate } from 'selfsigned';
import type { ReceivedRequest } from '@tes/testing';

export interface HttpsReceiver {
  url: string;
  received: ReceivedRequest[];
  /**
   * Env for the webhook-dispatcher (and for `admin webhooks set`): live endpoints must be
   * https and public, so the dispatcher trusts this receiver's self-signed certificate
   * (NODE_EXTRA_CA_CERTS) and exempts 127.0.0.1 from the private-address check.
   */
  dispatcherEnv: Record<string, string>;
  close(): Promise<void>;
}

/** A real HTTPS webhook receiver (answers 200) with a certificate made for it. */
export async function startHttpsReceiver(): Promise<HttpsReceiver> {
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keySize: 2048,
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    ],
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'tes-receiver-'));
  const caFile = path.join(dir, 'receiver.pem');
  writeFileSync(caFile, pems.cert);
  const received: ReceivedRequest[] = [];
  const server = https.createServer({ cert: pems.cert, key: pems.private }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}/webhooks`,
    received,
    dispatcherEnv: { NODE_EXTRA_CA_CERTS: caFile, WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => {
          rmSync(dir, { recursive: true, force: true });
          r();
        });
      }),
  };
}
