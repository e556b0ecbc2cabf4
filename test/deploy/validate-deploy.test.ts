import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '@tes/testing';

/**
 * scripts/validate-deploy.sh, run on temporary copies of the deployment files: it accepts a prod
 * overlay whose site.env is filled in, refuses one that still holds a placeholder, refuses a
 * production compose file that does not require a secret, and (VALIDATE_REQUIRE_SITE=1) a prod
 * overlay without site.env. The copies have no built services, so the environments step is skipped
 * there (check-env.test.ts and provider-vars.test.ts cover it). The tools come from the cache that
 * scripts/validate-deploy.sh fills (scripts/test.sh runs it before jest).
 */
const FILLED_SITE = [
  'API_HOST=api.tes.mycorp.net',
  'CONNECT_HOST=connect.tes.mycorp.net',
  'IMAGE_PREFIX=registry.mycorp.net:5000/tes',
  'IMAGE_TAG=0.2.0',
  'GATEWAY_NAME=public',
  'GATEWAY_NAMESPACE=envoy-gateway-system',
  'DATA_NAMESPACE=tes-data',
  'MONITORING_NAMESPACE=monitoring',
  'LLM_EGRESS_CIDR=203.0.113.10/32',
].join('\n');

const copies: string[] = [];
afterAll(() => copies.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A copy of what the script validates; `edit` changes it before the run. */
function validateCopy(edit: (root: string) => void, env: Record<string, string> = {}): { code: number | null; out: string } {
  const root = mkdtempSync(path.join(tmpdir(), 'tes-validate-deploy-'));
  copies.push(root);
  for (const p of ['scripts/validate-deploy.sh', 'deploy', 'docker-compose.yml', 'docker-compose.prod.yml']) {
    cpSync(path.join(REPO_ROOT, p), path.join(root, p), { recursive: true });
  }
  rmSync(path.join(root, 'deploy/k8s/overlays/prod/site.env'), { force: true });
  edit(root);
  const r = spawnSync('bash', [path.join(root, 'scripts/validate-deploy.sh')], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 300_000,
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

const site = (root: string) => path.join(root, 'deploy/k8s/overlays/prod/site.env');

describe('validate-deploy.sh', () => {
  it('accepts a prod overlay with its site.env filled in, and both compose profiles', () => {
    const r = validateCopy((root) => writeFileSync(site(root), FILLED_SITE));
    expect(r.out).toContain('site.env: present');
    expect(r.out).toMatch(/=> prod: no placeholder left \(site\.env filled in\): valid/);
    expect(r.out).toMatch(/=> compose-go \(Compose Specification\) \+ project rules \(production\): valid/);
    expect(r.out).toContain('validate-deploy: all valid');
    expect(r.code).toBe(0);
  }, 300_000);

  it('refuses a prod overlay whose site.env still holds a placeholder', () => {
    const r = validateCopy((root) => writeFileSync(site(root), FILLED_SITE.replace('api.tes.mycorp.net', 'api.example.com')));
    expect(r.out).toMatch(/=> prod: no placeholder left \(site\.env filled in\): INVALID/);
    expect(r.out).toContain('- api.example.com');
    expect(r.code).toBe(1);
  }, 300_000);

  it('refuses a production compose file with a defaulted secret, and a missing site.env when required', () => {
    const r = validateCopy(
      (root) => {
        const file = path.join(root, 'docker-compose.prod.yml');
        const text = readFileSync(file, 'utf8');
        expect(text).toMatch(/DASHBOARD_SESSION_SECRET: \$\{DASHBOARD_SESSION_SECRET:\?/);
        writeFileSync(
          file,
          text.replace(
            /\$\{DASHBOARD_SESSION_SECRET:\?[^}]*\}/,
            '${DASHBOARD_SESSION_SECRET:-tes-dev-only-dashboard-session-secret-change-me}',
          ),
        );
      },
      { VALIDATE_REQUIRE_SITE: '1' },
    );
    expect(r.out).toContain('error: production: DASHBOARD_SESSION_SECRET is required');
    expect(r.out).toMatch(/=> compose-go \(Compose Specification\) \+ project rules \(production\): INVALID/);
    expect(r.out).toMatch(/site\.env missing .*INVALID/);
    expect(r.code).toBe(1);
  }, 300_000);
});
