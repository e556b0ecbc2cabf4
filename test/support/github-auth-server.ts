import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '@tes/testing';

export interface IssuedTokens {
  access_tokens: string[];
  refresh_tokens: string[];
  bearer_tokens_seen: string[];
}

export interface GitHubCall {
  method: string;
  path: string;
  query: string;
  accept: string;
  api_version: string;
  status: number;
}

export interface GitHubAuthServer {
  issuer: string;
  /** GITHUB_API_URL for the executor: the fake GitHub REST API beside the authorization server. */
  githubApiUrl: string;
  /** Env for the oauth-vault: provider `github` pointing at this authorization server. */
  vaultEnv(): Record<string, string>;
  /** Every access and refresh token the token endpoint issued, and every bearer the GitHub API saw. */
  issued(): Promise<IssuedTokens>;
  githubCalls(): Promise<GitHubCall[]>;
  output(): string;
  close(): Promise<void>;
}

/**
 * Starts the vault's oidc-provider test server (`services/oauth-vault/test/oidc-server.cjs`) with
 * the fake GitHub API of `github-api.cjs` plugged in, as its own process: oidc-provider is
 * ESM-only, so it runs beside jest.
 */
export async function startGitHubAuthServer(o: { redirectUri: string; accessTokenTtl?: number }): Promise<GitHubAuthServer> {
  const clientId = 'vault-client';
  const clientSecret = 'vault-client-secret-123';
  const child: ChildProcess = spawn(process.execPath, [path.join(REPO_ROOT, 'services', 'oauth-vault', 'test', 'oidc-server.cjs')], {
    env: {
      ...process.env,
      OIDC_EXTENSION: path.join(REPO_ROOT, 'test', 'support', 'github-api.cjs'),
      CLIENT_ID: clientId,
      CLIENT_SECRET: clientSecret,
      REDIRECT_URIS: o.redirectUri,
      ACCESS_TOKEN_TTL: String(o.accessTokenTtl ?? 3600),
      SCOPES: 'repo read:user',
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
  const get = async <T>(p: string): Promise<T> => (await (await fetch(`${issuer}${p}`)).json()) as T;
  return {
    issuer,
    githubApiUrl: `${issuer}/github`,
    vaultEnv: () => ({
      GITHUB_CLIENT_ID: clientId,
      GITHUB_CLIENT_SECRET: clientSecret,
      GITHUB_AUTHORIZE_URL: `${issuer}/auth`,
      GITHUB_TOKEN_URL: `${issuer}/token`,
      GITHUB_REVOCATION_URL: `${issuer}/token/revocation`,
      GITHUB_REVOCATION_STYLE: 'rfc7009',
      GITHUB_PROBE_URL: `${issuer}/api/me`,
      GITHUB_PKCE: 'true',
      GITHUB_TOKEN_AUTH: 'post',
      GITHUB_AUTHORIZE_PARAMS: '',
      GITHUB_SCOPES: 'read:user',
    }),
    issued: () => get<IssuedTokens>('/_test/issued'),
    githubCalls: async () => (await get<{ calls: GitHubCall[] }>('/_test/github-calls')).calls,
    output: () => out,
    async close() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
