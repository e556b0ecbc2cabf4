import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OAuthClient } from './oauth-client.js';
import { loadProviders } from './provider-registry.js';

/** Slack's oauth.v2.access answers (its wire format) from a local HTTP server: which token and scopes the vault keeps. */
describe('OAuthClient and Slack’s oauth.v2.access', () => {
  let server: http.Server;
  let answer: Record<string, unknown> = {};
  let base = '';
  beforeAll(async () => {
    server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  const exchange = () => {
    const slack = loadProviders({ SLACK_CLIENT_ID: 'id', SLACK_CLIENT_SECRET: 's', SLACK_TOKEN_URL: `${base}/api/oauth.v2.access` }).get(
      'slack',
    )!;
    return new OAuthClient(2000).exchangeCode(slack, {
      code: 'c',
      redirectUri: 'https://vault.example.com/oauth/callback',
      codeVerifier: undefined,
    });
  };

  it('bot and user scopes in one consent: the bot token, and the scopes of both as granted', async () => {
    answer = {
      ok: true,
      access_token: 'xoxb-bot',
      token_type: 'bot',
      scope: 'chat:write,channels:read',
      authed_user: { id: 'U1', scope: 'search:read', access_token: 'xoxp-user', token_type: 'user' },
    };
    expect(await exchange()).toMatchObject({ accessToken: 'xoxb-bot', scopes: ['channels:read', 'chat:write', 'search:read'] });
  });

  it('user scopes only: the user token (authed_user) and its scopes', async () => {
    answer = { ok: true, app_id: 'A1', authed_user: { id: 'U1', scope: 'search:read', access_token: 'xoxp-user', token_type: 'user' } };
    expect(await exchange()).toMatchObject({ accessToken: 'xoxp-user', tokenType: 'user', scopes: ['search:read'] });
  });
});
