import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OAuthClient, ProviderCallError } from './oauth-client.js';
import { CUSTOM_DEFAULTS, type Provider } from './provider-registry.js';

/**
 * Issue 20, finding 1 at call time: a registered provider whose token or revocation URL points
 * inside the network (stored before the registration check, or a host that rebinds) gets nothing:
 * no code, verifier, client secret or refresh token leaves the vault for it.
 */
describe('OAuthClient toward a registered provider (outbound policy)', () => {
  let server: http.Server;
  let base: string;
  const hits: string[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"t","token_type":"Bearer"}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  const provider = (o: Partial<Provider>): Provider => ({
    ...CUSTOM_DEFAULTS,
    service: 'evil_tool',
    displayName: 'evil',
    authorizeUrl: 'https://auth.example.com/auth',
    tokenUrl: `${base}/metrics`,
    revocationUrl: `${base}/revoke`,
    revocationStyle: 'rfc7009',
    defaultScopes: [],
    clientId: 'id',
    clientSecret: 'client-secret',
    configured: true,
    registeredIn: 'live',
    ...o,
  });

  it('refuses a loopback token URL and revocation URL, permanently and without calling them', async () => {
    const client = new OAuthClient(2000);
    for (const call of [
      () => client.exchangeCode(provider({}), { code: 'c', redirectUri: 'https://vault.example/cb', codeVerifier: 'v' }),
      () => client.refresh(provider({ tokenUrl: base.replace('127.0.0.1', 'localhost') + '/metrics' }), 'refresh-token'),
      () => client.revoke(provider({ registeredIn: 'test' }), { accessToken: 'a', refreshToken: 'r' }),
    ]) {
      const err = (await call().catch((e: unknown) => e)) as ProviderCallError;
      expect(err).toBeInstanceOf(ProviderCallError);
      expect(err).toMatchObject({ permanent: true, code: 'destination_not_allowed' });
      expect(err.message).toBe('provider call refused by the outbound policy: destination not allowed');
    }
    expect(hits).toEqual([]);
  });

  it('reaches it with OUTBOUND_ALLOW_PRIVATE on (local development), and a deployment provider as before', async () => {
    const dev = new OAuthClient(2000, { allowPrivate: true });
    await expect(
      dev.exchangeCode(provider({}), { code: 'c', redirectUri: 'https://x/cb', codeVerifier: undefined }),
    ).resolves.toMatchObject({
      accessToken: 't',
    });
    const { registeredIn: _r, ...deployed } = provider({});
    await expect(new OAuthClient(2000).refresh(deployed, 'r')).resolves.toMatchObject({ accessToken: 't' });
    expect(hits).toEqual(['/metrics', '/metrics']);
  });
});
