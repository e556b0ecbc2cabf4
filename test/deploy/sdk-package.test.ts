import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '@tes/testing';

/**
 * @tes/sdk and @tes/cli as an integrator gets them: packed by `pnpm pack` into a temporary folder,
 * installed with npm into an empty project OFFLINE (neither has a dependency), then compiled by the
 * repository's own TypeScript as an ESM consumer (moduleResolution nodenext and bundler) and as a
 * CommonJS one (module node16), with no @types/node and skipLibCheck off, and run. `tes --help`
 * runs from the installed bin, and the command table of @tes/cli prints its help.
 */
const TSC = createRequire(path.join(REPO_ROOT, 'package.json')).resolve('typescript/bin/tsc');
const SECRET = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8';
const REPOSITORY = 'https://github.com/tes/task-execution-service';

let dir: string;
let app: string;
let tarballs: string;

/** Without the variables `pnpm exec` sets for itself (npm_config_*, ...), so npm reads only its flags. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm_|pnpm_)/i.test(k)));
}

function run(cmd: string, args: string[], cwd: string, timeout = 60_000): SpawnSyncReturns<string> {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout, env: cleanEnv(), stdio: 'pipe' });
  if (r.error) throw r.error;
  return r;
}

function ok(cmd: string, args: string[], cwd: string): string {
  const r = run(cmd, args, cwd);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

const tarball = (name: string) => path.join(tarballs, `tes-${name}-0.1.0.tgz`);
const entries = (name: string) =>
  ok('tar', ['tzf', tarball(name)], dir)
    .split('\n')
    .filter(Boolean);
const fileOf = (name: string, file: string) => ok('tar', ['xzOf', tarball(name), `package/${file}`], dir);

const ESM_CONSUMER = `
import { InvalidRequestError, TaskServiceClient, parseWebhook, signWebhook, type CreateTaskResult, type WebhookEvent } from '@tes/sdk';
import { parseCommandLine, type CommandTable } from '@tes/cli';

const client = new TaskServiceClient({ apiKey: 'pk_test_consumer', baseUrl: 'http://127.0.0.1:9/v1', maxRetries: 0 });
const body = JSON.stringify({ event: 'task.complete', task_id: 'task_1', timestamp: '2026-01-01T00:00:00.000Z', data: {} });
const headers = signWebhook(body, '${SECRET}');
const event: WebhookEvent = parseWebhook(body, headers, { secret: '${SECRET}' });
// @ts-expect-error priority is not a field of POST /tasks
const refused = await client.createTask({ prompt: 'x', priority: 1 }).catch((e: unknown) => e instanceof InvalidRequestError);
const replayed = (r: CreateTaskResult): boolean => r.replayed;
const table = { program: 'acme', groups: { accounts: { get: { description: 'One account.', args: ['ID'] } } } } as const satisfies CommandTable;
const parsed = parseCommandLine(table, ['accounts', 'get', 'acc_1']);
console.log(JSON.stringify({ event: event.event, refused, v1: headers['webhook-signature'].startsWith('v1,'), replayed: typeof replayed, parsed }));
`;

const CJS_CONSUMER = `
import { InvalidRequestError, TaskServiceClient, parseWebhook, signWebhook, type WebhookEvent } from '@tes/sdk';

// no @types/node here: the one node global this file reads
declare const require: { resolve(id: string): string };

async function main(): Promise<void> {
  const client = new TaskServiceClient({ apiKey: 'pk_test_consumer', baseUrl: 'http://127.0.0.1:9/v1', maxRetries: 0 });
  const body = JSON.stringify({ event: 'task.complete', task_id: 'task_1', timestamp: '2026-01-01T00:00:00.000Z', data: {} });
  const headers = signWebhook(body, '${SECRET}');
  const event: WebhookEvent = parseWebhook(body, headers, { secret: '${SECRET}' });
  // @ts-expect-error priority is not a field of POST /tasks
  const refused = await client.createTask({ prompt: 'x', priority: 1 }).catch((e: unknown) => e instanceof InvalidRequestError);
  console.log(JSON.stringify({ event: event.event, refused, v1: headers['webhook-signature'].startsWith('v1,'), loaded: require.resolve('@tes/sdk') }));
}
void main();
`;

/** The README's example of @tes/cli, as plain JavaScript. */
const CLI_TABLE_SCRIPT = `
import { commandOrExit } from '@tes/cli';
const TABLE = {
  program: 'acme',
  groups: {
    accounts: {
      get: { description: 'One account.', args: ['ID'] },
      create: { description: 'A new account.', options: { name: { type: 'string', value: 'NAME', required: true, description: "the account's name" } } },
    },
  },
  notes: 'Output is JSON on stdout.',
};
const cmd = commandOrExit(TABLE, process.argv.slice(2));
console.log(JSON.stringify(cmd));
`;

/** One tsconfig per consumer setting: the strictest a consumer may have, and no @types at all. */
function tsconfig(name: string, options: Record<string, unknown>, files: string[]): string {
  const file = `tsconfig.${name}.json`;
  const compilerOptions = {
    target: 'ES2022',
    lib: ['ES2022', 'DOM'],
    types: [],
    strict: true,
    exactOptionalPropertyTypes: true,
    skipLibCheck: false,
    outDir: `out-${name}`,
    ...options,
  };
  writeFileSync(path.join(app, file), JSON.stringify({ compilerOptions, files }, null, 2));
  return file;
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tes-sdk-package-'));
  tarballs = path.join(dir, 'tarballs');
  app = path.join(dir, 'app');
  mkdirSync(app);
  // prepack builds each package (the SDK's CommonJS copy too)
  ok('pnpm', ['--filter', '@tes/sdk', '--filter', '@tes/cli', 'pack', '--pack-destination', tarballs], REPO_ROOT);
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  ok(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', '--cache', path.join(dir, 'npm-cache'), tarball('sdk'), tarball('cli')],
    app,
  );
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the published packages', () => {
  it('pack into the given folder only: no tarball is left in the tree', () => {
    expect(readdirSync(tarballs).sort()).toEqual(['tes-cli-0.1.0.tgz', 'tes-sdk-0.1.0.tgz']);
    for (const pkg of ['packages/sdk', 'packages/cli']) {
      expect(readdirSync(path.join(REPO_ROOT, pkg)).filter((f) => f.endsWith('.tgz'))).toEqual([]);
    }
  });

  it.each(['sdk', 'cli'])('@tes/%s: a LICENSE, repository, homepage, publishConfig, no workspace dependency, no tests', (name) => {
    const files = entries(name);
    expect(files).toEqual(
      expect.arrayContaining(['package/LICENSE', 'package/README.md', 'package/package.json', 'package/dist/index.js']),
    );
    expect(files.filter((f) => /\.test\.|tsbuildinfo/.test(f))).toEqual([]);
    expect(fileOf(name, 'LICENSE')).toMatch(/Apache License\s+Version 2\.0, January 2004/);
    const manifest = JSON.parse(fileOf(name, 'package.json')) as Record<string, unknown>;
    expect(manifest).toMatchObject({
      name: `@tes/${name}`,
      license: 'Apache-2.0',
      repository: { type: 'git', url: `git+${REPOSITORY}.git`, directory: `packages/${name}` },
      homepage: expect.stringMatching(new RegExp(`^${REPOSITORY}/`)) as string,
      publishConfig: { access: 'public' },
    });
    expect(manifest['private']).toBeUndefined();
    // nothing to install with it; its own devDependencies (a contributor's) are public packages
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
      expect([field, Object.keys((manifest[field] as object | undefined) ?? {})]).toEqual([field, []]);
    }
    expect(Object.keys((manifest['devDependencies'] as object | undefined) ?? {}).filter((d) => d.startsWith('@tes/'))).toEqual([]);
    expect(JSON.stringify(manifest)).not.toContain('workspace:');
    // links work outside the repository: absolute, into the repository
    const links = [...fileOf(name, 'README.md').matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1]);
    expect(links.length).toBeGreaterThan(0);
    expect(links.filter((link) => !link?.startsWith(`${REPOSITORY}/`))).toEqual([]);
  });

  it('the SDK ships its ESM and CommonJS builds, each with its types', () => {
    expect(entries('sdk')).toEqual(
      expect.arrayContaining([
        'package/dist/index.d.ts',
        'package/dist/cjs/index.js',
        'package/dist/cjs/index.d.ts',
        'package/dist/cjs/package.json',
      ]),
    );
    expect(JSON.parse(fileOf('sdk', 'dist/cjs/package.json'))).toEqual({ type: 'commonjs' });
  });

  it('compiles, with no @types/node and skipLibCheck off, as nodenext and bundler ESM and as node16 CommonJS, and runs', () => {
    writeFileSync(path.join(app, 'index.ts'), ESM_CONSUMER);
    writeFileSync(path.join(app, 'index.cts'), CJS_CONSUMER);
    const configs = [
      tsconfig('nodenext', { module: 'nodenext', moduleResolution: 'nodenext' }, ['index.ts']),
      tsconfig('bundler', { module: 'esnext', moduleResolution: 'bundler' }, ['index.ts']),
      tsconfig('node16', { module: 'node16', moduleResolution: 'node16' }, ['index.cts']),
    ];
    // one process for the three: tsc's start-up is most of the time
    const tsc = run(process.execPath, [TSC, '-b', ...configs], app);
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);

    const esm = {
      event: 'task.complete',
      refused: true,
      v1: true,
      replayed: 'function',
      parsed: { name: 'accounts get', args: ['acc_1'] },
    };
    for (const out of ['out-nodenext/index.js', 'out-bundler/index.js']) {
      expect(JSON.parse(ok(process.execPath, [out], app))).toMatchObject(esm);
    }
    // a CommonJS module that requires the CommonJS build
    expect(readFileSync(path.join(app, 'out-node16/index.cjs'), 'utf8')).toContain('require("@tes/sdk")');
    expect(JSON.parse(ok(process.execPath, ['out-node16/index.cjs'], app))).toEqual({
      event: 'task.complete',
      refused: true,
      v1: true,
      loaded: path.join(app, 'node_modules/@tes/sdk/dist/cjs/index.js'),
    });
  });

  it('tes --help and --version run from the installed bin', () => {
    const bin = path.join(app, 'node_modules', '.bin', 'tes');
    const help = run(bin, ['--help'], app);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: tes <command> \[options\]/);
    expect(help.stdout).toContain('tes tasks create "PROMPT"');
    expect(ok(bin, ['--version'], app).trim()).toBe('0.1.0');
    const wrong = run(bin, ['tasks', 'frobnicate'], app);
    expect(wrong.status).toBe(1);
    expect(JSON.parse(wrong.stderr)).toMatchObject({ error: { code: 'invalid_arguments' } });
  });

  it("@tes/cli's command table prints its help (exit 0) and refuses a usage error (exit 2)", () => {
    writeFileSync(path.join(app, 'acme.mjs'), CLI_TABLE_SCRIPT);
    const help = run(process.execPath, ['acme.mjs', '--help'], app);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^usage: acme <group> <command> \[arguments\] \[options\]\n\n {2}accounts get ID\n/);
    expect(help.stdout).toContain('accounts create --name NAME');
    expect(JSON.parse(ok(process.execPath, ['acme.mjs', 'accounts', 'get', 'acc_1'], app))).toMatchObject({
      name: 'accounts get',
      args: ['acc_1'],
    });
    const missing = run(process.execPath, ['acme.mjs', 'accounts', 'create'], app);
    expect(missing.status).toBe(2);
    expect(JSON.parse(missing.stderr)).toMatchObject({
      error: { code: 'invalid_request', message: expect.stringContaining('--name') as string },
    });
  });
});
