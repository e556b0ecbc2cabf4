import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '@tes/testing';

/**
 * deploy/tools/check-env.cjs (run by scripts/validate-deploy.sh) against hand-made environments,
 * as `validate compose|k8s -env-out` writes them. It imports the services' built config schemas:
 * run `pnpm build` first (scripts/test.sh does).
 */
const SCRIPT = path.join(REPO_ROOT, 'deploy/tools/check-env.cjs');
const BASE = { AMQP_URL: 'amqp://tes:pw@rabbitmq:5672', MONGO_URL: 'mongodb://mongo:27017', OPS_PORT: '8080' };
const SECRET = 'a-dashboard-session-secret-of-40-chars!!';
/** Every built-in provider's client passed (empty: unconfigured), as docker-compose.yml and the Secret do. */
const PROVIDER_CLIENTS: Record<string, string> = Object.fromEntries(
  ['GITHUB', 'SLACK', 'GOOGLE_CALENDAR', 'GMAIL', 'NOTION'].flatMap((p) => [
    [`${p}_CLIENT_ID`, ''],
    [`${p}_CLIENT_SECRET`, ''],
  ]),
);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tes-check-env-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function check(services: Record<string, Record<string, string>>): { code: number | null; out: string } {
  const file = path.join(dir, `env-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify({ compose: services }));
  const r = spawnSync(process.execPath, [SCRIPT, file], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout + r.stderr };
}

describe('check-env.cjs', () => {
  it('rejects a gateway without DASHBOARD_SESSION_SECRET: the image sets NODE_ENV=production', () => {
    const r = check({ gateway: BASE });
    expect(r.code).toBe(1);
    expect(r.out).toContain('compose/gateway: NODE_ENV=production (the image default) needs DASHBOARD_SESSION_SECRET');
  });

  it('rejects a gateway without the secret when the manifests set NODE_ENV=production themselves', () => {
    const r = check({ gateway: { ...BASE, NODE_ENV: 'production' } });
    expect(r.code).toBe(1);
    expect(r.out).toContain('compose/gateway: NODE_ENV=production needs DASHBOARD_SESSION_SECRET');
  });

  it('accepts a gateway with a secret of 32 characters or more', () => {
    const r = check({ gateway: { ...BASE, DASHBOARD_SESSION_SECRET: SECRET } });
    expect(r.out).toContain('1 service environments accepted');
    expect(r.code).toBe(0);
  });

  it('rejects a secret shorter than 32 characters (the gateway config schema)', () => {
    const r = check({ gateway: { ...BASE, DASHBOARD_SESSION_SECRET: 'too-short' } });
    expect(r.code).toBe(1);
    expect(r.out).toContain('DASHBOARD_SESSION_SECRET');
  });

  it('accepts a gateway without the secret when NODE_ENV is not production (a per-process secret)', () => {
    const r = check({ gateway: { ...BASE, NODE_ENV: 'development' } });
    expect(r.code).toBe(0);
  });

  it('rejects a production vault without its key ring and state secret, accepts their _FILE forms', () => {
    const vault = { ...BASE, OPS_PORT: '8092', ...PROVIDER_CLIENTS };
    const missing = check({ 'oauth-vault': vault });
    expect(missing.code).toBe(1);
    expect(missing.out).toContain('needs VAULT_KEYS (or VAULT_KEYS_FILE) and VAULT_STATE_SECRET (or VAULT_STATE_SECRET_FILE)');
    const files = check({ 'oauth-vault': { ...vault, VAULT_KEYS_FILE: '/run/keys', VAULT_STATE_SECRET_FILE: '/run/state' } });
    expect(files.code).toBe(0);
  });

  it("accepts the vault's provider settings (read outside its config schema)", () => {
    const vault = { ...BASE, OPS_PORT: '8092', NODE_ENV: 'development', ...PROVIDER_CLIENTS };
    const providers = {
      OAUTH_CUSTOM_PROVIDERS: 'crm',
      CRM_AUTHORIZE_URL: 'https://crm.example/oauth/authorize',
      CRM_TOKEN_URL: 'https://crm.example/oauth/token',
      CRM_CLIENT_ID: 'id',
      CRM_CLIENT_SECRET_FILE: '/run/crm-secret',
      CRM_PKCE: 'true',
      CRM_TOKEN_AUTH: 'basic',
      CRM_REVOCATION_STYLE: 'rfc7009',
      CRM_PROBE_URL: 'none',
    };
    expect(check({ 'oauth-vault': { ...vault, ...providers } }).code).toBe(0);
    const r = check({ 'oauth-vault': { ...vault, CRM_PKCE_FILE: '/run/pkce' } });
    expect(r.code).toBe(1);
    expect(r.out).toContain('variables the service does not read: CRM_PKCE_FILE');
  });

  it("rejects a vault that is not passed every provider's client id and secret (the built-in ones and the declared custom ones)", () => {
    const vault: Record<string, string> = { ...BASE, OPS_PORT: '8092', NODE_ENV: 'development', ...PROVIDER_CLIENTS };
    const { GMAIL_CLIENT_SECRET: _dropped, ...withoutGmail } = vault;
    const r = check({ 'oauth-vault': withoutGmail });
    expect(r.code).toBe(1);
    expect(r.out).toContain('compose/oauth-vault: provider variables not passed to the vault: GMAIL_CLIENT_SECRET');
    expect(check({ 'oauth-vault': { ...withoutGmail, GMAIL_CLIENT_SECRET_FILE: '/run/gmail' } }).code).toBe(0);
    const custom = check({
      'oauth-vault': {
        ...vault,
        OAUTH_CUSTOM_PROVIDERS: 'crm',
        CRM_AUTHORIZE_URL: 'https://a.example',
        CRM_TOKEN_URL: 'https://t.example',
      },
    });
    expect(custom.code).toBe(1);
    expect(custom.out).toContain('not passed to the vault: CRM_CLIENT_ID, CRM_CLIENT_SECRET');
  });

  it("accepts the orchestrator's LLM_* settings and rejects a variable no service reads", () => {
    const orchestrator = { ...BASE, OPS_PORT: '8090', LLM_BASE_URL: 'https://llm.example/v1', LLM_API_KEY: 'k', LLM_MODEL: 'm' };
    expect(check({ 'task-orchestrator': orchestrator }).code).toBe(0);
    const r = check({ 'task-orchestrator': { ...orchestrator, LLM_MODLE: 'typo' } });
    expect(r.code).toBe(1);
    expect(r.out).toContain('variables the service does not read: LLM_MODLE');
  });
});
