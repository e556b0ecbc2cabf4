// A real OAuth 2.0 authorization server for the vault's tests: `oidc-provider` (the certified
// OpenID/OAuth library) run as its own process, with its stock development login and consent
// forms, authorization code + PKCE, refresh tokens rotated on every use, RFC 7009 revocation.
// Beside it, a tiny "provider API" (`GET /api/me`) that accepts only live access tokens of this
// server, and test-only knobs under `/_test/*` (token endpoint counters, access-token lifetime).
//
// CommonJS with a dynamic import because oidc-provider is ESM-only (and *.cjs is outside the
// type-aware lint, which has no project for a plain JS test server).
//
// Env: CLIENT_ID, CLIENT_SECRET, REDIRECT_URIS (comma separated), SCOPES (space separated
// resource scopes), ACCESS_TOKEN_TTL (seconds), PORT (0 = any), OIDC_EXTENSION (optional: a
// module whose `create({ provider, issuer })` returns `{ route(ctx) → handled?, onToken(body) }`,
// e.g. a fake provider API; see test/support/github-api.cjs). Prints one JSON line
// `{"port":N,"issuer":"..."}` on stdout once it listens.
'use strict';
const http = require('node:http');

async function main() {
  const { default: Provider } = await import('oidc-provider');
  const env = process.env;
  const SCOPES = (env.SCOPES ?? 'repo read:user chat:write').split(/\s+/).filter(Boolean);
  const RESOURCE = 'https://api.provider.test/';
  let accessTtl = Number(env.ACCESS_TOKEN_TTL ?? 3600);
  let failTokenEndpoint = 0;
  const counts = { authorization_code: 0, refresh_token: 0, refresh_errors: 0, code_errors: 0, revocations: 0, api_calls: 0 };
  const revokedTokens = [];

  const server = http.createServer();
  await new Promise((resolve) => server.listen(Number(env.PORT ?? 0), '127.0.0.1', resolve));
  const port = server.address().port;
  const issuer = `http://127.0.0.1:${port}`;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: env.CLIENT_ID ?? 'vault-client',
        client_secret: env.CLIENT_SECRET ?? 'vault-secret',
        redirect_uris: (env.REDIRECT_URIS ?? 'http://127.0.0.1:1/oauth/callback').split(','),
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: env.TOKEN_AUTH_METHOD ?? 'client_secret_post',
      },
    ],
    cookies: { keys: ['test-cookie-key-1'] },
    pkce: { required: () => true, methods: ['S256'] },
    scopes: ['openid', 'offline_access'],
    features: {
      devInteractions: { enabled: true },
      revocation: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: SCOPES.join(' '),
          audience: RESOURCE,
          accessTokenFormat: 'opaque',
          accessTokenTTL: accessTtl,
        }),
      },
    },
    // A plain OAuth 2.0 client (no openid scope) still gets a refresh token.
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // Every refresh rotates the refresh token; re-using a spent one revokes the whole grant.
    rotateRefreshToken: true,
    revokeGrantPolicy: () => true,
    ttl: {
      AccessToken: () => accessTtl,
      AuthorizationCode: 60,
      RefreshToken: 86400,
      Grant: 86400,
      Interaction: 600,
      Session: 86400,
    },
  });
  provider.proxy = false;

  provider.on('grant.success', (ctx) => {
    const g = ctx.oidc.params?.grant_type;
    if (g === 'authorization_code' || g === 'refresh_token') counts[g] += 1;
  });
  provider.on('grant.error', (ctx) => {
    const g = ctx.oidc?.params?.grant_type;
    if (g === 'refresh_token') counts.refresh_errors += 1;
    if (g === 'authorization_code') counts.code_errors += 1;
  });

  const extension = process.env.OIDC_EXTENSION ? require(process.env.OIDC_EXTENSION).create({ provider, issuer }) : undefined;
  provider.use(async (ctx, next) => {
    if (extension && (await extension.route(ctx))) return;
    if (ctx.path === '/_test/stats') {
      ctx.body = { ...counts, revoked_tokens: revokedTokens.length };
      return;
    }
    if (ctx.path === '/_test/revoked' && ctx.method === 'GET') {
      // Hashes would do as well; the test only compares them with tokens it has in hand.
      ctx.body = { tokens: revokedTokens };
      return;
    }
    if (ctx.path === '/_test/config' && ctx.method === 'POST') {
      const q = ctx.query;
      if (q.access_token_ttl) accessTtl = Number(q.access_token_ttl);
      if (q.fail_token_endpoint) failTokenEndpoint = Number(q.fail_token_endpoint);
      ctx.body = { access_token_ttl: accessTtl, fail_token_endpoint: failTokenEndpoint };
      return;
    }
    if (ctx.path === '/api/me') {
      counts.api_calls += 1;
      const m = /^Bearer (.+)$/.exec(ctx.get('authorization') ?? '');
      const token = m ? await provider.AccessToken.find(m[1]) : undefined;
      if (!token || token.isExpired) {
        ctx.status = 401;
        ctx.set('WWW-Authenticate', 'Bearer error="invalid_token"');
        ctx.body = { error: 'invalid_token' };
        return;
      }
      const grant = await provider.Grant.find(token.grantId);
      if (!grant) {
        ctx.status = 401;
        ctx.body = { error: 'invalid_token' };
        return;
      }
      ctx.body = { sub: token.accountId, scope: token.scope };
      return;
    }
    if (ctx.path === '/token' && ctx.method === 'POST' && failTokenEndpoint > 0) {
      failTokenEndpoint -= 1;
      ctx.status = 503;
      ctx.body = { error: 'temporarily_unavailable' };
      return;
    }
    if (ctx.path === '/token/revocation' && ctx.method === 'POST') {
      counts.revocations += 1;
      await next();
      const token = ctx.oidc?.params?.token;
      if (token && ctx.status === 200) revokedTokens.push(token);
      return;
    }
    await next();
    if (extension && ctx.path === '/token' && ctx.method === 'POST') extension.onToken(ctx.body);
  });

  server.on('request', provider.callback());
  process.stdout.write(`${JSON.stringify({ port, issuer })}\n`);
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

main().catch((err) => {
  process.stderr.write(`auth server failed: ${err && err.stack ? err.stack : String(err)}\n`);
  process.exit(1);
});
