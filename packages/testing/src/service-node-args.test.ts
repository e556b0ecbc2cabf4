import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, serviceNodeArgs } from './index.js';

/** V8's heap limit, in MB, of a Node.js process started with `args`. */
function heapLimitMb(args: readonly string[]): number {
  const out = execFileSync(process.execPath, [...args, '-p', "require('node:v8').getHeapStatistics().heap_size_limit"], {
    encoding: 'utf8',
  });
  return Number(out) / 2 ** 20;
}

describe('serviceNodeArgs', () => {
  it("caps the orchestrator's V8 heap at 256 MB, as its 512 MiB container does, whatever the host's memory", () => {
    // 256 MB of old generation and the 1 MB semi-spaces; unflagged, Node.js sizes it from the host (4 GB on 24 GB).
    expect(heapLimitMb(serviceNodeArgs('task-orchestrator'))).toBeLessThan(264);
  });

  it("is what the orchestrator's start script runs it with", () => {
    const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'services', 'task-orchestrator', 'package.json'), 'utf8')) as {
      scripts: { start: string };
    };
    expect(pkg.scripts.start).toBe(`node ${serviceNodeArgs('task-orchestrator').join(' ')} dist/main.js`);
  });

  it('gives the other services the shared flags only', () => {
    expect(serviceNodeArgs('gateway')).toEqual(['--max-semi-space-size=1']);
  });
});
