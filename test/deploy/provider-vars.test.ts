import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '@tes/testing';

/**
 * The deploy validation's provider check (issue 20): docker-compose.yml and the Kubernetes Secret pass
 * every provider's client id and secret to the vault, and a copy with one of them removed is refused.
 * Runs the same steps as scripts/validate-deploy.sh (the validator's -env-out, then check-env.cjs) with
 * the tools it installs into $TES_CACHE_DIR/bin; scripts/test.sh runs that script first.
 */
const BIN = path.join(process.env['TES_CACHE_DIR'] ?? path.join(homedir(), '.cache/tes'), 'bin');
const VALIDATE = path.join(BIN, 'tes-deploy-validate');
const KUSTOMIZE = path.join(BIN, 'kustomize');

let dir: string;
beforeAll(() => {
  if (!existsSync(VALIDATE) || !existsSync(KUSTOMIZE))
    throw new Error(`${BIN} lacks the validator or kustomize: run scripts/validate-deploy.sh`);
  dir = mkdtempSync(path.join(tmpdir(), 'tes-provider-vars-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(cmd: string, args: string[], cwd = REPO_ROOT): { code: number | null; out: string } {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8' });
  return { code: r.status, out: r.stdout + r.stderr };
}

/** The environments check of a compose file: validator -env-out, then check-env.cjs. */
function checkCompose(file: string) {
  const env = path.join(dir, `env-${path.basename(file)}.json`);
  const v = run(VALIDATE, ['compose', '-env-out', env, file]);
  expect(v.out).toContain('0 errors');
  return run(process.execPath, [path.join(REPO_ROOT, 'deploy/tools/check-env.cjs'), env]);
}

/** The environments check of the prod overlay (its site.env from the template) with a given Secret file. */
function checkOverlay(secrets: string) {
  const k8s = path.join(dir, 'k8s');
  if (!existsSync(k8s)) {
    cpSync(path.join(REPO_ROOT, 'deploy/k8s'), k8s, { recursive: true });
    cpSync(path.join(k8s, 'overlays/prod/site.env.example'), path.join(k8s, 'overlays/prod/site.env'));
  }
  const built = run(KUSTOMIZE, ['build', path.join(k8s, 'overlays/prod')]);
  expect(built.code).toBe(0);
  const manifests = path.join(dir, 'prod.yaml');
  writeFileSync(manifests, built.out);
  const env = path.join(dir, `env-prod-${path.basename(secrets)}.json`);
  run(VALIDATE, ['k8s', '-name', 'prod', '-secrets', secrets, '-env-out', env, manifests]);
  return run(process.execPath, [path.join(REPO_ROOT, 'deploy/tools/check-env.cjs'), env]);
}

describe('provider client variables in the deployment files', () => {
  it('docker-compose.yml passes every provider client id and secret; a copy without one fails the check', () => {
    const ok = checkCompose(path.join(REPO_ROOT, 'docker-compose.yml'));
    expect(ok.out).not.toContain('provider variables not passed');
    expect(ok.code).toBe(0);

    const copy = path.join(dir, 'docker-compose.yml');
    // A copy beside the files it builds from (deploy/): the validator checks them.
    cpSync(path.join(REPO_ROOT, 'deploy'), path.join(dir, 'deploy'), { recursive: true });
    const text = readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8');
    expect(text).toMatch(/^ {6}GMAIL_CLIENT_SECRET: /m);
    writeFileSync(copy, text.replace(/^ {6}GMAIL_CLIENT_SECRET: .*\n/m, ''));
    const bad = checkCompose(copy);
    expect(bad.code).toBe(1);
    expect(bad.out).toContain('compose/oauth-vault: provider variables not passed to the vault: GMAIL_CLIENT_SECRET');
  });

  it('the overlays pass them from the Secret; a Secret without one fails the check', () => {
    const example = path.join(REPO_ROOT, 'deploy/k8s/secret.example.yaml');
    const ok = checkOverlay(example);
    expect(ok.code).toBe(0);
    const text = readFileSync(example, 'utf8');
    expect(text).toMatch(/^ {2}NOTION_CLIENT_ID: /m);
    const copy = path.join(dir, 'secret.yaml');
    writeFileSync(copy, text.replace(/^ {2}NOTION_CLIENT_ID: .*\n/m, ''));
    const bad = checkOverlay(copy);
    expect(bad.code).toBe(1);
    expect(bad.out).toContain('prod/oauth-vault: provider variables not passed to the vault: NOTION_CLIENT_ID');
  });
});
