import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '@tes/testing';

/**
 * The install stage of deploy/Dockerfile (deploy/tools/install-service.sh), run here into a temp
 * folder as the image build runs it: offline, from pnpm-lock.yaml. The registry is pointed at a
 * closed port, so anything that tried to resolve a version again would fail. Needs `pnpm build`
 * first (scripts/test.sh does) and the pnpm store that `pnpm install` filled.
 */
const SCRIPT = path.join(REPO_ROOT, 'deploy/tools/install-service.sh');
const LOCK = readFileSync(path.join(REPO_ROOT, 'pnpm-lock.yaml'), 'utf8');
const OFFLINE_ENV = { ...process.env, npm_config_registry: 'http://127.0.0.1:9/', CI: 'true' };

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tes-image-install-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function install(...args: string[]): { code: number | null; out: string } {
  const r = spawnSync('bash', [SCRIPT, ...args], { cwd: REPO_ROOT, env: OFFLINE_ENV, encoding: 'utf8', timeout: 90_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/** One importer's dependencies in pnpm-lock.yaml (`services/gateway`): name → locked version (`link:…` for a workspace package). */
function lockedDependencies(importer: string): Map<string, string> {
  const lines = LOCK.split('\n');
  const deps = new Map<string, string>();
  if (lines.includes(`  ${importer}: {}`)) return deps; // a package without dependencies
  const start = lines.indexOf(`  ${importer}:`);
  if (start < 0) throw new Error(`pnpm-lock.yaml has no importer ${importer}`);
  let section = '';
  let name = '';
  for (const line of lines.slice(start + 1)) {
    if (/^ {0,2}\S/.test(line)) break; // the next importer, or the end of `importers:`
    const m = /^ {4}(\w+):$/.exec(line);
    if (m) section = m[1] as string;
    const dep = /^ {6}'?([^':]+)'?:$/.exec(line);
    if (dep) name = dep[1] as string;
    const version = /^ {8}version: (\S+)$/.exec(line);
    // Production images: dependencies only (a peer suffix, `1.2.3(peer@4.5.6)`, is not part of the version).
    if (version && section === 'dependencies') deps.set(name, (version[1] as string).replace(/\(.*$/, ''));
  }
  return deps;
}

/**
 * Every third-party package that `importer` and the workspace packages it links depend on, with the
 * version the lockfile names and the one installed in the deployed folder.
 */
function compareVersions(
  importer: string,
  installedDir: string,
  seen = new Set<string>(),
): { pkg: string; locked: string; installed: string }[] {
  if (seen.has(importer)) return [];
  seen.add(importer);
  const rows: { pkg: string; locked: string; installed: string }[] = [];
  for (const [pkg, locked] of lockedDependencies(importer)) {
    // A package's dependencies are its siblings in pnpm's layout: <dir>/node_modules/<pkg> or, for the
    // deployed project itself, <out>/node_modules/<pkg>.
    const installedPath = path.join(installedDir, pkg);
    if (locked.startsWith('link:')) {
      const linked = path.posix.normalize(path.posix.join(importer, locked.slice('link:'.length)));
      const real = realpathSync(installedPath);
      rows.push(...compareVersions(linked, path.resolve(real, ...pkg.split('/').map(() => '..')), seen));
      continue;
    }
    const manifest = JSON.parse(readFileSync(path.join(installedPath, 'package.json'), 'utf8')) as { version: string };
    rows.push({ pkg: `${importer} → ${pkg}`, locked, installed: manifest.version });
  }
  return rows;
}

describe('image install stage (deploy/tools/install-service.sh)', () => {
  it('deploys the gateway offline with exactly the lockfile’s versions, and its entries start', () => {
    const out = path.join(dir, 'gateway');
    const r = install('gateway', out);
    expect({ code: r.code, out: r.out.slice(-2000) }).toMatchObject({ code: 0 });

    const rows = compareVersions('services/gateway', path.join(out, 'node_modules'));
    const names = rows.map((row) => row.pkg);
    // Its own dependencies and those of the workspace packages it links (@tes/messaging's amqplib).
    expect(names).toEqual(expect.arrayContaining(['services/gateway → express', 'packages/messaging → amqplib']));
    expect(rows.length).toBeGreaterThan(5);
    expect(rows.filter((row) => row.installed !== row.locked)).toEqual([]);
    // The sources and build files are left out; the build is there.
    expect(existsSync(path.join(out, 'src'))).toBe(false);
    expect(existsSync(path.join(out, 'tsconfig.json'))).toBe(false);

    // dist/main.js loads all of its modules before it reads its configuration: a bad one ends it with a config error.
    const main = spawnSync(process.execPath, [path.join(out, 'dist/main.js')], {
      env: { PATH: process.env['PATH'] ?? '', OPS_PORT: 'not-a-port' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(main.stderr).toMatch(/^gateway: invalid configuration:\n {2}- OPS_PORT: /);
    expect(main.status).toBe(1);
    const cli = spawnSync(process.execPath, [path.join(out, 'dist/cli.js'), '--help'], { encoding: 'utf8', timeout: 30_000 });
    expect(cli.stdout).toContain('accounts create --name NAME');
    expect(cli.status).toBe(0);
  }, 120_000);

  it('gives the admin bundle every service command line, the vault’s included', () => {
    const out = path.join(dir, 'admin');
    const r = install('--admin', out);
    expect({ code: r.code, out: r.out.slice(-2000) }).toMatchObject({ code: 0 });
    const help = spawnSync(process.execPath, [path.join(out, 'scripts/admin.mjs'), '--help'], { encoding: 'utf8', timeout: 30_000 });
    expect(help.stderr).toBe('');
    expect(help.stdout).toContain('accounts create --name NAME'); // gateway
    expect(help.stdout).toContain('webhooks set --account ID'); // webhook-dispatcher
    expect(help.stdout).toContain('vault reencrypt'); // oauth-vault
    expect(help.stdout).not.toContain('is missing');
    expect(help.status).toBe(0);
    expect(existsSync(path.join(out, 'scripts/bootstrap.cjs'))).toBe(true);
    const vault = compareVersions('services/oauth-vault', path.join(out, 'services/oauth-vault/node_modules'));
    expect(vault.filter((row) => row.installed !== row.locked)).toEqual([]);
  }, 120_000);

  it('refuses a service that is not one of the five, and an output folder that exists', () => {
    expect(install('billing', path.join(dir, 'billing'))).toMatchObject({
      code: 1,
      out: expect.stringContaining("unknown service 'billing'"),
    });
    expect(install('gateway', dir)).toMatchObject({ code: 1, out: expect.stringContaining('exists already') });
  });
});
