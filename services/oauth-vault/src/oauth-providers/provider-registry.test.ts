import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { coversScopes, loadProviders, normalizeScopes, scopeParams } from './provider-registry.js';

describe('provider registry', () => {
  it('knows every built-in service, unconfigured until client credentials are given', () => {
    const reg = loadProviders({});
    expect(
      reg
        .all()
        .map((p) => p.service)
        .sort(),
    ).toEqual(['github', 'gmail', 'google_calendar', 'notion', 'slack']);
    for (const p of reg.all()) {
      expect(p.configured).toBe(false);
      expect(p.authorizeUrl).toMatch(/^https:\/\//);
      expect(p.tokenUrl).toMatch(/^https:\/\//);
    }
    expect(reg.get('github')?.revocationUrl).toContain('api.github.com');
    expect(reg.get('notion')?.revocationUrl).toBeNull();
    expect(reg.get('gmail')).toMatchObject({ pkce: true, authorizeParams: { access_type: 'offline', include_granted_scopes: 'true' } });
    expect(reg.get('slack')?.scopeSeparator).toBe(',');
  });

  it('takes client credentials from env or secret files, and overrides every URL', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'vault-'));
    writeFileSync(path.join(dir, 'secret'), 'from-file\n');
    const reg = loadProviders({
      GOOGLE_CALENDAR_CLIENT_ID: 'cid',
      GOOGLE_CALENDAR_CLIENT_SECRET_FILE: path.join(dir, 'secret'),
      GOOGLE_CALENDAR_AUTHORIZE_URL: 'http://127.0.0.1:1/auth',
      GOOGLE_CALENDAR_TOKEN_URL: 'http://127.0.0.1:1/token',
      GOOGLE_CALENDAR_REVOCATION_URL: 'none',
      GOOGLE_CALENDAR_PROBE_URL: 'http://127.0.0.1:1/me',
      GOOGLE_CALENDAR_SCOPES: 'a b,c',
      GOOGLE_CALENDAR_PKCE: 'false',
    });
    expect(reg.get('google_calendar')).toMatchObject({
      clientId: 'cid',
      clientSecret: 'from-file',
      configured: true,
      authorizeUrl: 'http://127.0.0.1:1/auth',
      tokenUrl: 'http://127.0.0.1:1/token',
      revocationUrl: null,
      probeUrl: 'http://127.0.0.1:1/me',
      defaultScopes: ['a', 'b', 'c'],
      pkce: false,
    });
  });

  it('adds custom providers and names every configuration problem at once', () => {
    const reg = loadProviders({
      OAUTH_CUSTOM_PROVIDERS: 'crm',
      CRM_AUTHORIZE_URL: 'https://crm.example/auth',
      CRM_TOKEN_URL: 'https://crm.example/token',
      CRM_CLIENT_ID: 'i',
      CRM_CLIENT_SECRET: 's',
    });
    expect(reg.get('crm')).toMatchObject({ configured: true, pkce: true, revocationUrl: null });
    expect(() =>
      loadProviders({
        OAUTH_CUSTOM_PROVIDERS: 'crm,Bad Name',
        GITHUB_TOKEN_URL: 'ftp://x',
        GITHUB_CLIENT_ID: 'a',
        GITHUB_CLIENT_ID_FILE: '/x',
        SLACK_PKCE: 'maybe',
      }),
    ).toThrow(/CRM_AUTHORIZE_URL[\s\S]*Bad Name[\s\S]*GITHUB_TOKEN_URL[\s\S]*both set|SLACK_PKCE/);
  });

  it('compares scopes as sets', () => {
    expect(normalizeScopes([' b', 'a', 'b', ''])).toEqual(['a', 'b']);
    expect(coversScopes(['a', 'b'], ['b'])).toBe(true);
    expect(coversScopes(['a'], ['a', 'c'])).toBe(false);
  });

  it('asks Slack for its user-token scopes (search:read) in user_scope, every other scope in scope; others all in scope', () => {
    const reg = loadProviders({});
    const slack = reg.get('slack')!;
    expect(scopeParams(slack, ['channels:read', 'chat:write', 'search:read'])).toEqual({
      scope: 'channels:read,chat:write',
      user_scope: 'search:read',
    });
    expect(scopeParams(slack, ['search:read'])).toEqual({ user_scope: 'search:read' });
    expect(scopeParams(slack, [])).toEqual({});
    expect(scopeParams(reg.get('github')!, ['read:user', 'repo'])).toEqual({ scope: 'read:user repo' });
  });
});
