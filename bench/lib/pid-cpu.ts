import { readFileSync } from 'node:fs';

/** CPU seconds (user + system, all threads) a process used so far; undefined once it is gone. */
function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds each named process used while the meter runs, for a stack that is a few known
 * processes (a peer system started by the bench) rather than `cpuMeter`'s services, broker and
 * database. Read every `intervalMs`, so a process that exits loses at most its last interval.
 * This load generator counts as "load generator", which `cpuPerTaskMs` leaves out.
 */
export function pidCpuMeter(processes: Map<number, string>, intervalMs = 250): { stop(): Map<string, number> } {
  const groups = new Map([...processes, [process.pid, 'load generator']]);
  const last = new Map<number, number>();
  for (const pid of groups.keys()) last.set(pid, cpuSeconds(pid) ?? 0);
  const used = new Map<string, number>([...groups.values()].map((g) => [g, 0]));
  const read = () => {
    for (const [pid, group] of groups) {
      const now = cpuSeconds(pid);
      if (now === undefined) continue;
      used.set(group, (used.get(group) ?? 0) + Math.max(0, now - (last.get(pid) ?? 0)));
      last.set(pid, now);
    }
  };
  const timer = setInterval(read, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      read();
      return used;
    },
  };
}
