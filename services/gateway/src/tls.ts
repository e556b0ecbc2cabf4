import { readFile } from 'node:fs/promises';
import { generate } from 'selfsigned';
import type { Logger } from '@tes/logger';

export interface TlsMaterial {
  cert: string;
  key: string;
  generated: boolean;
}

/** The configured certificate, or a development one made at boot (never for production). */
export async function loadTls(certFile: string | undefined, keyFile: string | undefined, logger: Logger): Promise<TlsMaterial> {
  if (certFile && keyFile) {
    return { cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8'), generated: false };
  }
  if (certFile || keyFile) throw new Error('TLS_CERT_FILE and TLS_KEY_FILE must be given together');
  logger.warn('no TLS_CERT_FILE/TLS_KEY_FILE: using a generated self-signed development certificate');
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
  return { cert: pems.cert, key: pems.private, generated: true };
}
