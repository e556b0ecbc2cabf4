import { OutboundPolicy, OutboundRefusedError, outboundRequest } from '@tes/outbound';
import { normalizeScopes, type Provider } from './provider-registry.js';

export interface TokenSet {
  accessToken: string;
  refreshToken: string | undefined;
  tokenType: string;
  /** Seconds from now; undefined when the provider does not say (a token that does not expire). */
  expiresIn: number | undefined;
  /** Granted scopes when the provider says; undefined means "as requested" (RFC 6749 5.1). */
  scopes: string[] | undefined;
}

/**
 * A failed provider call. `permanent`: the grant is dead (invalid_grant, revoked, client
 * rejected) and retrying cannot help; otherwise transient (network, timeout, 5xx, 429).
 * The message carries the HTTP status and the OAuth error code, never a token.
 */
export class ProviderCallError extends Error {
  constructor(
    readonly permanent: boolean,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ProviderCallError';
  }
}

export type ProbeResult = 'ok' | 'unauthorized' | 'unknown';

const PERMANENT_CODES = new Set([
  'invalid_grant',
  'invalid_client',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'bad_verification_code',
  'bad_refresh_token',
  'incorrect_client_credentials',
  'invalid_refresh_token',
  'invalid_code',
  'token_revoked',
  'token_expired',
  'invalid_auth',
  'account_inactive',
]);

/** The vault's side of RFC 6749 (code exchange, refresh), RFC 7009 (revocation), and health probes. */
export class OAuthClient {
  private readonly policies: Record<'test' | 'live', OutboundPolicy>;

  /** `allowPrivate`: OUTBOUND_ALLOW_PRIVATE (local development only). */
  constructor(
    private readonly timeoutMs: number,
    outbound: { allowPrivate: boolean } = { allowPrivate: false },
  ) {
    // The authorize URL is a redirect of the user's browser: https in both environments.
    this.policies = {
      live: new OutboundPolicy({ httpsOnly: true, allowPrivate: outbound.allowPrivate }),
      test: new OutboundPolicy({ httpsOnly: false, allowPrivate: outbound.allowPrivate }),
    };
  }

  /** The outbound policy of a registered provider's token, revocation and userinfo URLs in an environment. */
  policyFor(environment: 'test' | 'live'): OutboundPolicy {
    return this.policies[environment];
  }

  /** The policy of every authorize URL: https on a public host (an open redirect otherwise). */
  get authorizePolicy(): OutboundPolicy {
    return this.policies.live;
  }

  exchangeCode(provider: Provider, input: { code: string; redirectUri: string; codeVerifier: string | undefined }): Promise<TokenSet> {
    return this.tokenRequest(provider, {
      grant_type: 'authorization_code',
      code: input.code,
      redirect_uri: input.redirectUri,
      ...(input.codeVerifier ? { code_verifier: input.codeVerifier } : {}),
    });
  }

  refresh(provider: Provider, refreshToken: string): Promise<TokenSet> {
    return this.tokenRequest(provider, { grant_type: 'refresh_token', refresh_token: refreshToken });
  }

  /**
   * Revokes the grant at the provider, where it has an endpoint. Revoking the refresh token
   * ends the grant at RFC 7009 servers; the access token is revoked too when there is no
   * refresh token. Returns false when the provider has no revocation endpoint.
   */
  async revoke(provider: Provider, tokens: { accessToken: string | undefined; refreshToken: string | undefined }): Promise<boolean> {
    if (!provider.revocationUrl) return false;
    const { clientId = '', clientSecret = '' } = provider;
    switch (provider.revocationStyle) {
      case 'github': {
        if (!tokens.accessToken) return true;
        const url = provider.revocationUrl.replace('{client_id}', encodeURIComponent(clientId));
        const res = await this.call(provider, url, {
          method: 'DELETE',
          headers: {
            authorization: basic(clientId, clientSecret),
            accept: 'application/vnd.github+json',
            'content-type': 'application/json',
          },
          body: JSON.stringify({ access_token: tokens.accessToken }),
        });
        // 404: already gone at GitHub, which is what was asked.
        if (!res.ok && res.status !== 404) throw await callError(res, 'revocation');
        return true;
      }
      case 'slack': {
        const token = tokens.accessToken ?? tokens.refreshToken;
        if (!token) return true;
        const res = await this.call(provider, provider.revocationUrl, {
          method: 'POST',
          headers: form(),
          body: new URLSearchParams({ token }).toString(),
        });
        const body = (await readJson(res)) as { ok?: boolean; error?: string } | undefined;
        if (!res.ok || (body?.ok === false && body.error !== 'invalid_auth' && body.error !== 'token_revoked'))
          throw await callError(res, 'revocation', body);
        return true;
      }
      case 'rfc7009': {
        const list: [string, string][] = [];
        if (tokens.refreshToken) list.push([tokens.refreshToken, 'refresh_token']);
        if (tokens.accessToken) list.push([tokens.accessToken, 'access_token']);
        for (const [token, hint] of list) {
          const params: Record<string, string> = { token, token_type_hint: hint };
          const headers: Record<string, string> = { ...form(), accept: 'application/json' };
          if (provider.tokenAuth === 'basic') headers['authorization'] = basic(clientId, clientSecret);
          else Object.assign(params, { client_id: clientId, client_secret: clientSecret });
          const res = await this.call(provider, provider.revocationUrl, {
            method: 'POST',
            headers,
            body: new URLSearchParams(params).toString(),
          });
          // RFC 7009 2.2: 200 also for tokens that were already invalid.
          if (!res.ok) throw await callError(res, 'revocation');
        }
        return true;
      }
    }
  }

  /** One cheap authenticated GET: does the provider still accept this access token? */
  async probe(provider: Provider, accessToken: string): Promise<ProbeResult> {
    if (!provider.probeUrl) return 'unknown';
    let res: Response;
    try {
      res = await this.call(provider, provider.probeUrl, {
        method: 'GET',
        headers: { ...provider.probeHeaders, authorization: `Bearer ${accessToken}`, accept: 'application/json' },
      });
    } catch {
      return 'unknown';
    }
    if (res.status === 401) return 'unauthorized';
    if (!res.ok) return 'unknown';
    // Slack answers 200 {ok:false, error:"invalid_auth"} for a dead token.
    const body = (await readJson(res)) as { ok?: boolean; error?: string } | undefined;
    if (body?.ok === false && body.error && PERMANENT_CODES.has(body.error)) return 'unauthorized';
    return 'ok';
  }

  private async tokenRequest(provider: Provider, params: Record<string, string>): Promise<TokenSet> {
    const { clientId = '', clientSecret = '' } = provider;
    const headers: Record<string, string> = { accept: 'application/json' };
    const fields: Record<string, string> = { ...params };
    if (provider.tokenAuth === 'basic') headers['authorization'] = basic(clientId, clientSecret);
    else Object.assign(fields, { client_id: clientId, client_secret: clientSecret });
    let body: string;
    if (provider.tokenBody === 'json') {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(fields);
    } else {
      Object.assign(headers, form());
      body = new URLSearchParams(fields).toString();
    }
    const res = await this.call(provider, provider.tokenUrl, { method: 'POST', headers, body });
    const json = (await readJson(res)) as Record<string, unknown> | undefined;
    if (!res.ok || !json || typeof json['error'] === 'string' || json['ok'] === false)
      throw await callError(res, params['grant_type'] ?? 'token', json);
    return parseTokenSet(json);
  }

  /**
   * One call, never following a redirect. A registered provider's URLs go through the outbound
   * policy (addresses checked at connect time); a refusal is permanent and says nothing of what
   * is at the address.
   */
  private async call(
    provider: Provider,
    url: string,
    init: { method: string; headers: Record<string, string>; body?: string },
  ): Promise<Response> {
    try {
      if (!provider.registeredIn) return await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(this.timeoutMs) });
      const res = await outboundRequest(url, { ...init, timeoutMs: this.timeoutMs }, this.policies[provider.registeredIn]);
      const headers = new Headers();
      for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
      return new Response(res.status === 204 || res.status === 304 ? null : new Uint8Array(res.body), { status: res.status, headers });
    } catch (err) {
      if (err instanceof OutboundRefusedError)
        throw new ProviderCallError(true, err.code, `provider call refused by the outbound policy: ${err.message}`);
      const e = err as Error;
      const what = e.name === 'TimeoutError' ? `timed out after ${this.timeoutMs} ms` : `failed: ${e.message}`;
      throw new ProviderCallError(false, 'unreachable', `provider call to ${new URL(url).host} ${what}`);
    }
  }
}

function parseTokenSet(json: Record<string, unknown>): TokenSet {
  // Slack's user tokens come in `authed_user`.
  const src = typeof json['access_token'] === 'string' ? json : ((json['authed_user'] as Record<string, unknown> | undefined) ?? json);
  const accessToken = src['access_token'];
  if (typeof accessToken !== 'string' || accessToken === '')
    throw new ProviderCallError(false, 'bad_response', 'token response has no access_token');
  const expires = Number(src['expires_in']);
  // Slack: the user token's scopes (`authed_user.scope`, e.g. search:read) were granted in the same consent.
  const user = src === json ? (json['authed_user'] as Record<string, unknown> | undefined) : undefined;
  const granted = [src['scope'], user?.['scope']].filter((s): s is string => typeof s === 'string');
  return {
    accessToken,
    refreshToken: typeof src['refresh_token'] === 'string' && src['refresh_token'] !== '' ? src['refresh_token'] : undefined,
    tokenType: typeof src['token_type'] === 'string' ? src['token_type'] : 'Bearer',
    expiresIn: Number.isFinite(expires) && expires > 0 ? expires : undefined,
    scopes: granted.length > 0 ? normalizeScopes(granted.flatMap((s) => s.split(/[\s,]+/))) : undefined,
  };
}

async function callError(res: Response, what: string, json?: unknown): Promise<ProviderCallError> {
  const body = (json ?? (await readJson(res))) as { error?: unknown } | undefined;
  const code = typeof body?.error === 'string' ? body.error : `http_${res.status}`;
  const permanent = PERMANENT_CODES.has(code) || (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429);
  return new ProviderCallError(permanent, code, `${what} failed at the provider: HTTP ${res.status}, ${code}`);
}

async function readJson(res: Response): Promise<unknown> {
  try {
    const text = await res.text();
    return text ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    return undefined;
  }
}

function basic(id: string, secret: string): string {
  // RFC 6749 2.3.1: form-urlencode each part before Basic encoding.
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

function form(): Record<string, string> {
  return { 'content-type': 'application/x-www-form-urlencoded' };
}
