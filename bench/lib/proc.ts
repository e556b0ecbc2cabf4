import { readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import type { Stack } from '@tes/testing';

/** PostgreSQL's own processes: shared by every database of the server, their work here is mostly FerretDB's writes. */
const PG_SHARED = /^postgres: \S+: (walwriter|checkpointer|background writer|autovacuum (worker|launcher))/;

/** Read and write system calls (`syscr`, `syscw` of /proc/<pid>/io: socket writes and writevs count). */
function syscallCounts(pid: string): { reads: number; writes: number } {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    return { reads: Number(/syscr: (\d+)/.exec(io)?.[1] ?? 0), writes: Number(/syscw: (\d+)/.exec(io)?.[1] ?? 0) };
  } catch {
    return { reads: 0, writes: 0 }; // gone meanwhile, or not ours to read
  }
}

/** Every process with the CPU seconds (user + system) and system calls it used so far, and its group (see `cpuMeter`). */
function processCpu(
  stack: Stack,
  extra: ReadonlyMap<number, string>,
): { pid: number; group: string; seconds: number; reads: number; writes: number }[] {
  const services = new Map([...stack.procs].map(([name, p]) => [p.child.pid, name as string]));
  for (const [pid, group] of extra) services.set(pid, group);
  const mongoPort = new URL(stack.mongoUrl).port || '27017';
  const procs = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        return [{ pid: Number(pid), comm, cmd, seconds: (Number(fields[11]) + Number(fields[12])) / 100, ...syscallCounts(pid) }];
      } catch {
        return []; // gone meanwhile
      }
    });
  const ferret = procs.find((p) => p.comm === 'ferretdb' && p.cmd.includes(`:${mongoPort} `));
  const pgDb = /postgresql-url=\S*\/([^/?\s]+)/.exec(ferret?.cmd ?? '')?.[1];
  return procs.map((p) => ({
    pid: p.pid,
    seconds: p.seconds,
    reads: p.reads,
    writes: p.writes,
    group:
      services.get(p.pid) ??
      (p.pid === process.pid
        ? 'load generator'
        : p === ferret
          ? 'ferretdb'
          : p.comm === 'beam.smp'
            ? 'rabbitmq'
            : pgDb && p.cmd.startsWith('postgres: ') && p.cmd.includes(` ${pgDb} `)
              ? 'postgresql (this database)'
              : PG_SHARED.test(p.cmd)
                ? 'postgresql (WAL, checkpoints, vacuum)'
                : 'other'),
  }));
}

/**
 * CPU seconds each process group uses while the meter runs: the services, this stack's FerretDB
 * (the one listening on the port of the stack's MONGO_URL) and its PostgreSQL backends, PostgreSQL's own processes
 * (WAL, checkpoints, vacuum), the broker, this load generator; everything else is "other". It
 * reads /proc every `intervalMs` and adds up what each process used since its previous reading
 * (one born meanwhile counts from zero), so a process that exits (a PostgreSQL backend whose
 * connection FerretDB's pool closed) loses at most its last interval; a plain before/after
 * difference would lose all it ever used, even below zero.
 */
export function cpuMeter(
  stack: Stack,
  intervalMs = 250,
  /** Processes started beside the stack (more replicas of a service): pid → the group they count in. */
  extra: ReadonlyMap<number, string> = new Map(),
): { stop(): Map<string, number>; syscalls(): Map<string, { reads: number; writes: number }> } {
  const last = new Map(processCpu(stack, extra).map((p) => [p.pid, p]));
  const used = new Map<string, number>();
  const calls = new Map<string, { reads: number; writes: number }>();
  const read = () => {
    for (const p of processCpu(stack, extra)) {
      const prev = last.get(p.pid);
      used.set(p.group, (used.get(p.group) ?? 0) + Math.max(0, p.seconds - (prev?.seconds ?? 0)));
      const c = calls.get(p.group) ?? { reads: 0, writes: 0 };
      c.reads += Math.max(0, p.reads - (prev?.reads ?? 0));
      c.writes += Math.max(0, p.writes - (prev?.writes ?? 0));
      calls.set(p.group, c);
      last.set(p.pid, p);
    }
  };
  const timer = setInterval(read, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      read();
      return used;
    },
    /** Read and write system calls of each group while the meter ran (after `stop`). */
    syscalls: () => calls,
  };
}

/** Groups that are not the stack (shown, but not counted in its CPU per task). */
const NOT_THE_STACK = new Set(['load generator', 'other']);

export function isStackProcess(group: string): boolean {
  return !NOT_THE_STACK.has(group);
}

export interface CpuPerTask {
  /** CPU ms per task of each process group (the services, FerretDB, PostgreSQL, RabbitMQ, ...). */
  by_process: Record<string, number>;
  /** The stack's total: everything but the load generator and unrelated processes. */
  stack: number;
  /** What the machine's cores allow at that cost, every core busy with nothing else. */
  cpu_bound_tasks_per_s: number;
}

/** CPU ms per task from what a `cpuMeter` measured over `tasks` tasks (the stack's own pollers included). */
export function cpuPerTaskMs(used: Map<string, number>, tasks: number): CpuPerTask {
  const byProcess: Record<string, number> = {};
  let stack = 0;
  for (const [group, seconds] of used) {
    const ms = (seconds * 1000) / Math.max(1, tasks);
    byProcess[group] = Math.round(ms * 100) / 100;
    if (isStackProcess(group)) stack += ms;
  }
  return {
    by_process: byProcess,
    stack: Math.round(stack * 100) / 100,
    cpu_bound_tasks_per_s: Math.round((os.cpus().length * 1000) / stack),
  };
}

export interface MemoryMb {
  /** Resident set: anon + file. */
  rss: number;
  /** Anonymous memory: the heaps. */
  anon: number;
  /** Mapped files: mostly the node binary, shared between processes. */
  file: number;
}

/** Each service's memory, in MB, from /proc/<pid>/status. */
export function memoryMb(stack: Stack): Record<string, MemoryMb> {
  const out: Record<string, MemoryMb> = {};
  for (const [name, proc] of stack.procs) {
    let status = '';
    try {
      status = readFileSync(`/proc/${proc.child.pid ?? 0}/status`, 'utf8');
    } catch {
      // exited: NaN below
    }
    const mb = (key: string) => Math.round(Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) / 102.4) / 10;
    out[name] = { rss: mb('VmRSS'), anon: mb('RssAnon'), file: mb('RssFile') };
  }
  return out;
}

/** Each service's RSS, in MB. */
export function rssMb(stack: Stack): Record<string, number> {
  return Object.fromEntries(Object.entries(memoryMb(stack)).map(([name, m]) => [name, m.rss]));
}
