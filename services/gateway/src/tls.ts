import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ConfigError } from '@tes/config';
import type { Logger } from '@tes/logger';

export interface TlsMaterial {
  cert: string;
  key: string;
  generated: boolean;
}

/** The configured certificate, or a development one made at boot (never for production). */
export async function loadTls(certFile: string | undefined, keyFile: string | undefined, logger: Logger): Promise<TlsMaterial> {
  if (certFile && keyFile) return { ...(await readPems(certFile, keyFile)), generated: false };
  if (certFile || keyFile) throw new ConfigError(['TLS_CERT_FILE and TLS_KEY_FILE must be given together']);
  logger.warn('no TLS_CERT_FILE/TLS_KEY_FILE: using a generated self-signed development certificate');
  // Loaded only here: the certificate generator (node-forge) costs several MB that production never needs.
  const { generate } = await import('selfsigned');
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

/** Reads and checks the configured PEM files; a problem is a ConfigError naming the variable and the file. */
async function readPems(certFile: string, keyFile: string): Promise<{ cert: string; key: string }> {
  const read = async (name: string, file: string) => {
    try {
      return await readFile(file, 'utf8');
    } catch (err) {
      throw new ConfigError([`${name}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`]);
    }
  };
  const [cert, key] = [await read('TLS_CERT_FILE', certFile), await read('TLS_KEY_FILE', keyFile)];
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch {
    throw new ConfigError([`TLS_CERT_FILE: ${certFile} is not a PEM certificate`]);
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new ConfigError([`TLS_KEY_FILE: ${keyFile} is not a PEM private key`]);
  }
  if (!x509.checkPrivateKey(privateKey))
    throw new ConfigError([`TLS_KEY_FILE: ${keyFile} is not the key of the certificate in ${certFile}`]);
  return { cert, key };
}
