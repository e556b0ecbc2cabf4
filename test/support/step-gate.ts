import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request of a workflow step's `http.fetch` to the gate: `GET /<tag>/<step>`. */
export interface GateHit {
  tag: string;
  step: number;
  /** When the request arrived (ms since epoch): the moment the step started its work. */
  at: number;
  /** Set when the gate answered it; undefined while it is held or if the client went away. */
  answeredAt?: number;
  /** The client closed the connection before the answer (the executor was killed). */
  aborted?: boolean;
}

/**
 * A local HTTP server that paces multi-step workflows made of `http.fetch` steps
 * (`Fetch http://127.0.0.1:PORT/<tag>/0 then fetch …/<tag>/1 then …`). Every request is a
 * step starting; it is HELD until the test opens that step, so a test knows exactly which
 * step is running and can kill a service, cancel, or let it finish at a moment it chooses.
 *
 * The executor must be allowed to reach it: `HTTP_TOOL_ALLOW_HOSTS=127.0.0.1`.
 */
export interface StepGate {
  /** `http://127.0.0.1:PORT/<tag>/<step>` */
  url(tag: string, step: number): string;
  /** A prompt of `steps` fetches of the gate, which the planner turns into `steps` http.fetch steps. */
  prompt(tag: string, steps: number): string;
  hits: GateHit[];
  hitsOf(tag: string, step?: number): GateHit[];
  /** Resolves at the moment the `count`-th request for the step arrives (already arrived: at once). */
  hit(tag: string, step: number, o?: { count?: number; timeoutMs?: number }): Promise<GateHit>;
  /** Answers the held requests of the step and lets every later one through at once. */
  open(tag: string, step: number): void;
  /** Opens every step of the tag, now and later. */
  openAll(tag: string, delayMs?: number): void;
  close(): Promise<void>;
}

export async function startStepGate(): Promise<StepGate> {
  const hits: GateHit[] = [];
  const held = new Map<string, { hit: GateHit; res: http.ServerResponse }[]>();
  const opened = new Set<string>();
  const allOpen = new Map<string, number>();
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const key = (tag: string, step: number) => `${tag}/${step}`;

  const answer = (hit: GateHit, res: http.ServerResponse) => {
    if (hit.aborted || res.writableEnded) return;
    hit.answeredAt = Date.now();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ tag: hit.tag, step: hit.step, ok: true }));
  };

  const server = http.createServer((req, res) => {
    const m = /^\/([\w-]+)\/(\d+)$/.exec(req.url ?? '');
    if (!m) {
      res.writeHead(404).end();
      return;
    }
    const hit: GateHit = { tag: m[1] as string, step: Number(m[2]), at: Date.now() };
    hits.push(hit);
    res.on('close', () => {
      if (hit.answeredAt === undefined) hit.aborted = true;
    });
    const k = key(hit.tag, hit.step);
    const delay = allOpen.get(hit.tag);
    if (delay !== undefined) setTimeout(() => answer(hit, res), delay);
    else if (opened.has(k)) answer(hit, res);
    else held.set(k, [...(held.get(k) ?? []), { hit, res }]);
    events.emit('hit', hit);
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const hitsOf = (tag: string, step?: number) => hits.filter((h) => h.tag === tag && (step === undefined || h.step === step));

  return {
    url: (tag, step) => `http://127.0.0.1:${port}/${tag}/${step}`,
    prompt: (tag, steps) =>
      Array.from({ length: steps }, (_, i) => `${i === 0 ? 'Fetch' : 'fetch'} http://127.0.0.1:${port}/${tag}/${i}`).join(' then '),
    hits,
    hitsOf,
    hit(tag, step, { count = 1, timeoutMs = 20_000 } = {}) {
      const found = hitsOf(tag, step)[count - 1];
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          events.off('hit', on);
          reject(new Error(`timed out after ${timeoutMs} ms waiting for request #${count} of step ${step} of ${tag}`));
        }, timeoutMs);
        const on = (h: GateHit) => {
          if (h.tag !== tag || h.step !== step) return;
          const n = hitsOf(tag, step)[count - 1];
          if (!n) return;
          clearTimeout(timer);
          events.off('hit', on);
          resolve(n);
        };
        events.on('hit', on);
      });
    },
    open(tag, step) {
      const k = key(tag, step);
      opened.add(k);
      for (const { hit, res } of held.get(k) ?? []) answer(hit, res);
      held.delete(k);
    },
    openAll(tag, delayMs = 0) {
      allOpen.set(tag, delayMs);
      for (const [k, list] of held) {
        if (!k.startsWith(`${tag}/`)) continue;
        for (const { hit, res } of list) setTimeout(() => answer(hit, res), delayMs);
        held.delete(k);
      }
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
