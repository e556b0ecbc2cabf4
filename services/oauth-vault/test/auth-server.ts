import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export interface AuthServerStats {
  authorization_code: number;
  refresh_token: number;
  refresh_errors: number;
  code_errors: number;
  revocations: number;
  api_calls: number;
  revoked_tokens: number;
}

export interface AuthServer {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Env for the vault: a provider `service` pointing at this server. */
  providerEnv(service: string, extra?: Record<string, string>): Record<string, string>;
  stats(): Promise<AuthServerStats>;
  revokedTokens(): Promise<string[]>;
  configure(o: { accessTokenTtl?: number; failTokenEndpoint?: number }): Promise<void>;
  /** Revokes a token (and its grant) at the RFC 7009 endpoint, as the user would by removing the app at the provider. */
  revoke(token: string): Promise<number>;
  /** The fake provider API: 200 for a live token of this server, 401 otherwise. */
  apiStatus(accessToken: string): Promise<number>;
  output(): string;
  close(): Promise<void>;
}

/**
 * Starts the real authorization server (`oidc-server.cjs`, oidc-provider) as its own process.
 * It is ESM-only, so it runs beside jest rather than inside it.
 */
export async function startAuthServer(o: {
  redirectUri: string;
  accessTokenTtl?: number;
  scopes?: string[];
  /** The one client the server knows (default vault-client / vault-client-secret-123). */
  clientId?: string;
  clientSecret?: string;
}): Promise<AuthServer> {
  const clientId = o.clientId ?? 'vault-client';
  const clientSecret = o.clientSecret ?? 'vault-client-secret-123';
  const child: ChildProcess = spawn(process.execPath, [path.join(__dirname, 'oidc-server.cjs')], {
    cwd: path.join(__dirname, '..'),
    env: {
      ...process.env,
      CLIENT_ID: clientId,
      CLIENT_SECRET: clientSecret,
      REDIRECT_URIS: o.redirectUri,
      ACCESS_TOKEN_TTL: String(o.accessTokenTtl ?? 3600),
      SCOPES: (o.scopes ?? ['repo', 'read:user', 'chat:write', 'admin']).join(' '),
      NODE_ENV: 'test',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const issuer = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`auth server did not start:\n${out}`)), 15_000);
    child.stdout?.once('data', (c: Buffer) => {
      clearTimeout(timer);
      resolve((JSON.parse(c.toString().split('\n')[0] ?? '{}') as { issuer: string }).issuer);
    });
    child.once('exit', (code) => reject(new Error(`auth server exited ${code}:\n${out}`)));
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    issuer,
    clientId,
    clientSecret,
    providerEnv(service, extra = {}) {
      const p = service.toUpperCase().replace(/[^A-Z0-9]/g, '_');
      return {
        [`${p}_CLIENT_ID`]: clientId,
        [`${p}_CLIENT_SECRET`]: clientSecret,
        [`${p}_AUTHORIZE_URL`]: `${issuer}/auth`,
        [`${p}_TOKEN_URL`]: `${issuer}/token`,
        [`${p}_REVOCATION_URL`]: `${issuer}/token/revocation`,
        [`${p}_REVOCATION_STYLE`]: 'rfc7009',
        [`${p}_PROBE_URL`]: `${issuer}/api/me`,
        [`${p}_PKCE`]: 'true',
        [`${p}_TOKEN_AUTH`]: 'post',
        [`${p}_AUTHORIZE_PARAMS`]: '',
        [`${p}_SCOPES`]: 'read:user',
        ...extra,
      };
    },
    async stats() {
      return (await (await fetch(`${issuer}/_test/stats`)).json()) as AuthServerStats;
    },
    async revokedTokens() {
      return ((await (await fetch(`${issuer}/_test/revoked`)).json()) as { tokens: string[] }).tokens;
    },
    async configure(c) {
      const q = new URLSearchParams();
      if (c.accessTokenTtl !== undefined) q.set('access_token_ttl', String(c.accessTokenTtl));
      if (c.failTokenEndpoint !== undefined) q.set('fail_token_endpoint', String(c.failTokenEndpoint));
      await fetch(`${issuer}/_test/config?${q.toString()}`, { method: 'POST' });
    },
    async revoke(token) {
      const res = await fetch(`${issuer}/token/revocation`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, client_id: clientId, client_secret: clientSecret }).toString(),
      });
      return res.status;
    },
    async apiStatus(accessToken) {
      return (await fetch(`${issuer}/api/me`, { headers: { authorization: `Bearer ${accessToken}` } })).status;
    },
    output: () => out,
    async close() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
