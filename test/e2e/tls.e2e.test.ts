import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { generate } from 'selfsigned';
import { startService, startStack, waitFor, type Stack } from '@tes/testing';

/**
 * The gateway serves the certificate it is configured with (TLS_CERT_FILE / TLS_KEY_FILE,
 * as in production behind no TLS-terminating proxy), not its generated development one;
 * a client that trusts only that certificate can use the API. A file it cannot use stops
 * the boot with one line naming the variable and the file, exit code 1, no stack trace.
 */
describe('gateway TLS certificate from configuration', () => {
  let dir: string;
  let certFile: string;
  let keyFile: string;
  let cert: string;
  let stack: Stack;

  /** A certificate for 127.0.0.1 made for this run (selfsigned, as the gateway makes its development one). */
  const makeCert = async (cn: string) =>
    generate([{ name: 'commonName', value: cn }], {
      keySize: 2048,
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
    });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'tes-gateway-tls-'));
    const pems = await makeCert('tes-tls-e2e.test');
    cert = pems.cert;
    certFile = path.join(dir, 'cert.pem');
    keyFile = path.join(dir, 'key.pem');
    writeFileSync(certFile, pems.cert);
    writeFileSync(keyFile, pems.private, { mode: 0o600 });
    // Files the gateway must refuse: not PEM at all, and the key of another certificate.
    writeFileSync(path.join(dir, 'garbage.pem'), 'not a certificate\n');
    writeFileSync(path.join(dir, 'other-key.pem'), (await makeCert('other')).private);
    stack = await startStack({ only: ['gateway'], env: { gateway: { TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile } } });
  }, 90_000);

  afterAll(async () => {
    await stack?.stopAll();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const port = () => Number(new URL(stack.baseUrl).port);

  it('serves exactly the configured certificate, verified by a client that trusts only it', async () => {
    const socket = tls.connect({ host: '127.0.0.1', port: port(), ca: cert, rejectUnauthorized: true });
    const served = await new Promise<tls.PeerCertificate>((resolve, reject) => {
      socket.once('secureConnect', () => resolve(socket.getPeerCertificate()));
      socket.once('error', reject);
    });
    expect(socket.authorized).toBe(true);
    socket.end();
    const configured = new X509Certificate(cert);
    expect(served.fingerprint256).toBe(configured.fingerprint256);
    expect(served.raw.equals(configured.raw)).toBe(true);
    expect(served.subject.CN).toBe('tes-tls-e2e.test');
    // The gateway did not fall back to its generated development certificate.
    expect(stack.procs.get('gateway')?.output()).not.toContain('using a generated self-signed development certificate');

    // The API answers over that verified connection.
    const status = await new Promise<number>((resolve, reject) => {
      https
        .get(`${stack.baseUrl}/openapi.json`, { ca: cert, rejectUnauthorized: true, agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .on('error', reject);
    });
    expect(status).toBe(200);
  });

  /** Starts a gateway with these TLS files; it must exit by itself. */
  async function bootFailure(tlsEnv: Record<string, string>): Promise<{ code: number | null; output: string }> {
    const proc = startService('gateway', { ...stack.envOf('gateway'), PORT: '0', HTTP_PORT: '0', OPS_PORT: '0', ...tlsEnv });
    try {
      await waitFor(() => proc.child.exitCode !== null, { what: 'the gateway to exit', timeoutMs: 20_000 });
    } finally {
      await proc.stop();
    }
    return { code: proc.child.exitCode, output: proc.output() };
  }

  it.each([
    [
      'a missing certificate file',
      () => ({ TLS_CERT_FILE: path.join(dir, 'nope.pem'), TLS_KEY_FILE: keyFile }),
      'TLS_CERT_FILE: cannot read {dir}/nope.pem (ENOENT)',
    ],
    ['a key path that is a directory', () => ({ TLS_CERT_FILE: certFile, TLS_KEY_FILE: dir }), 'TLS_KEY_FILE: cannot read {dir} (EISDIR)'],
    [
      'a certificate file that is not PEM',
      () => ({ TLS_CERT_FILE: path.join(dir, 'garbage.pem'), TLS_KEY_FILE: keyFile }),
      'TLS_CERT_FILE: {dir}/garbage.pem is not a PEM certificate',
    ],
    [
      'a key that is not the certificate’s',
      () => ({ TLS_CERT_FILE: certFile, TLS_KEY_FILE: path.join(dir, 'other-key.pem') }),
      'TLS_KEY_FILE: {dir}/other-key.pem is not the key of the certificate in {dir}/cert.pem',
    ],
    [
      'a certificate file without its key file',
      () => ({ TLS_CERT_FILE: certFile, TLS_KEY_FILE: '' }),
      'TLS_CERT_FILE and TLS_KEY_FILE must be given together',
    ],
  ])('refuses to start with %s: one clear line, exit code 1, no stack trace', async (_what, env, message) => {
    const { code, output } = await bootFailure(env());
    expect(code).toBe(1);
    expect(output).toContain(`gateway: invalid configuration:\n  - ${message.replaceAll('{dir}', dir)}\n`);
    expect(output).not.toMatch(/^\s+at /m);
    expect(output).not.toContain('public API listening');
  });
});
