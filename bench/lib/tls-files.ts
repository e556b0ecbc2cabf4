import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generate } from 'selfsigned';

/**
 * A self-signed certificate in files, for the gateway's TLS_CERT_FILE/TLS_KEY_FILE: the gateway
 * then starts as in production (with its certificate given) rather than generating one at boot.
 */
export async function gatewayTlsEnv(): Promise<{ TLS_CERT_FILE: string; TLS_KEY_FILE: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tes-bench-tls-'));
  const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  const TLS_CERT_FILE = path.join(dir, 'cert.pem');
  const TLS_KEY_FILE = path.join(dir, 'key.pem');
  writeFileSync(TLS_CERT_FILE, pems.cert);
  writeFileSync(TLS_KEY_FILE, pems.private, { mode: 0o600 });
  return { TLS_CERT_FILE, TLS_KEY_FILE };
}
