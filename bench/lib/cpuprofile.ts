import { readFileSync } from 'node:fs';

/** The parts of a V8 `.cpuprofile` (what `node --cpu-prof` writes) that a summary needs. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  /** Sampled time in the window, ms (idle included). */
  totalMs: number;
  /** Sampled time not idle, ms. */
  busyMs: number;
  /** Self time by function, highest first. */
  functions: { name: string; where: string; ms: number; pct: number }[];
  /** Self time by package (`mongodb`, `winston`, `node:internal`, `@tes/messaging`, `(garbage collector)`...). */
  packages: { name: string; ms: number; pct: number }[];
}

/** Where a function lives, as a package name: node_modules package, node internal, workspace package or service. */
export function packageOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const pnpm = /node_modules\/\.pnpm\/(@[^+/]+\+[^@/]+|[^@/]+)@/.exec(url);
  if (pnpm?.[1]) return pnpm[1].replace('+', '/');
  const nm = /node_modules\/(@[^/]+\/[^/]+|[^/]+)\//.exec(url);
  if (nm?.[1]) return nm[1];
  if (url.startsWith('node:')) return url.startsWith('node:internal') ? 'node:internal' : url;
  const ws = /\/(packages|services)\/([^/]+)\//.exec(url);
  if (ws) return ws[1] === 'packages' ? `@tes/${ws[2]}` : `service:${ws[2]}`;
  return url;
}

/**
 * Self time per function and per package of the samples taken between `fromMsBeforeEnd` and
 * `toMsBeforeEnd` milliseconds before the profile ended (the process exit), so start-up and
 * shutdown can be left out.
 */
export function summarizeProfile(file: string, window?: { fromMsBeforeEnd: number; toMsBeforeEnd: number }, top = 15): ProfileSummary {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const lo = window ? p.endTime - window.fromMsBeforeEnd * 1000 : -Infinity;
  const hi = window ? p.endTime - window.toMsBeforeEnd * 1000 : Infinity;
  const fn = new Map<string, { name: string; where: string; us: number }>();
  const pkg = new Map<string, number>();
  let t = p.startTime;
  let total = 0;
  let idle = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i] ?? 0;
    t += dt;
    if (t < lo || t > hi) continue;
    const node = byId.get(p.samples[i] ?? -1);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    total += dt;
    if (functionName === '(idle)') {
      idle += dt;
      continue;
    }
    const name = functionName || '(anonymous)';
    const where = url ? `${url.replace(/^file:\/\/.*?\/(node_modules\/\.pnpm\/|packages\/|services\/)/, '$1')}:${lineNumber + 1}` : '';
    const key = `${name} ${where}`;
    const f = fn.get(key) ?? { name, where, us: 0 };
    f.us += dt;
    fn.set(key, f);
    const pk = packageOf(url, functionName);
    pkg.set(pk, (pkg.get(pk) ?? 0) + dt);
  }
  const busy = total - idle;
  const ms = (us: number) => Math.round(us / 100) / 10;
  const pct = (us: number) => Math.round((us / Math.max(busy, 1)) * 1000) / 10;
  return {
    totalMs: ms(total),
    busyMs: ms(busy),
    functions: [...fn.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ name: f.name, where: f.where, ms: ms(f.us), pct: pct(f.us) })),
    packages: [...pkg.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, ms: ms(us), pct: pct(us) })),
  };
}
