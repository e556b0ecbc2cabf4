import http from 'node:http';
import https from 'node:https';
import type { Environment } from '@tes/contracts';
import { OutboundRefusedError, REFUSED_MESSAGE } from '@tes/outbound';
import { RESPONSE_SAMPLE_BYTES, type ResponseSample } from '../domain/attempt.js';
import type { SendRequest, SendResult } from '../domain/ports.js';
import { policyFor, type GuardOptions } from '../domain/ssrf-guard.js';

/**
 * How one POST ended, as far as the sender can tell (`webhook_attempts_total`'s outcome):
 * delivered (HTTP 200), redirect (3xx, never followed), http_error (any other status),
 * timeout (no status within the timeout), blocked (refused by the destination guard),
 * network_error (DNS, refused or closed connection, TLS).
 */
export type SendOutcome = 'delivered' | 'redirect' | 'http_error' | 'timeout' | 'blocked' | 'network_error';

/** What a real POST returns: the result and its outcome. */
export interface PostResult extends SendResult {
  outcome: SendOutcome;
}

const USER_AGENT = 'tes-webhook-dispatcher/0.1';
/** An idle kept-alive connection is closed after this long (below the 5 s keep-alive of Node servers and most proxies). */
const IDLE_SOCKET_MS = 4000;
/** An agent with no connection left is dropped after this long. */
const IDLE_AGENT_MS = 5 * 60_000;

/**
 * One POST, with node's http: no redirect is ever followed (a 3xx is a failure like any
 * non-200), and the whole exchange up to the response status is bounded by `timeoutMs`.
 *
 * Connections are kept alive, in one agent per environment and origin: a connection is opened
 * (its addresses checked by the guard's lookup) for one environment and reused only for that
 * environment and origin, so a live delivery never rides on a connection that only the test
 * rules allowed. Agents have no socket limit (the scheduler bounds deliveries per endpoint), so
 * a slow endpoint's requests never queue another account's behind them on a shared host. A
 * request on a reused connection that the receiver had just closed (no answer at all) is sent
 * once more on a fresh one: it may duplicate a delivery, with the same webhook-id, never lose one.
 */
export class HttpSender {
  private readonly agents = new Map<string, { agent: http.Agent; usedAt: number }>();
  private readonly sweeper: NodeJS.Timeout;

  /**
   * `maxFreeSockets`: idle connections kept per environment and origin. It should be the
   * deliveries this replica keeps in flight: with fewer, a burst to endpoints on one host (many
   * accounts behind one receiver) closes connections it reopens at once.
   */
  constructor(
    private readonly guard: GuardOptions,
    private readonly maxFreeSockets = 256,
  ) {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  /** Closes every kept-alive connection. */
  close(): void {
    clearInterval(this.sweeper);
    for (const { agent } of this.agents.values()) agent.destroy();
    this.agents.clear();
  }

  async send(req: SendRequest): Promise<PostResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let url: URL;
    try {
      url = policyFor(req.environment, this.guard).checkUrl(req.url);
    } catch (err) {
      return { ok: false, status_code: null, latency_ms: elapsed(), error: describe(err, req.timeoutMs), outcome: outcomeOf(err) };
    }
    const body = Buffer.from(req.body, 'utf8');
    const deadline = started + req.timeoutMs;
    const first = await this.post(url, req, body, deadline);
    const result = first.retryFresh && performance.now() < deadline ? await this.post(url, req, body, deadline, true) : first;
    return {
      ok: result.ok,
      status_code: result.status_code,
      error: result.error,
      outcome: result.outcome,
      // Up to the answer's status line: reading the body's first bytes is not the receiver's latency.
      latency_ms: result.answeredAt === undefined ? elapsed() : Math.round(result.answeredAt - started),
      request_headers: result.sentHeaders,
      ...(result.response ? { response: result.response } : {}),
    };
  }

  private agentFor(url: URL, environment: Environment): http.Agent {
    const key = `${environment} ${url.protocol}//${url.host}`;
    let entry = this.agents.get(key);
    if (!entry) {
      const options = {
        keepAlive: true,
        maxSockets: Infinity,
        maxFreeSockets: this.maxFreeSockets,
        timeout: IDLE_SOCKET_MS,
        scheduling: 'lifo' as const,
      };
      entry = { agent: url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options), usedAt: 0 };
      this.agents.set(key, entry);
    }
    entry.usedAt = Date.now();
    return entry.agent;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, { agent, usedAt }] of this.agents) {
      const open = Object.values(agent.sockets).length + Object.values(agent.freeSockets).length;
      if (open === 0 && now - usedAt > IDLE_AGENT_MS) {
        agent.destroy();
        this.agents.delete(key);
      }
    }
  }

  /** One exchange; `retryFresh` when a reused connection failed before any answer. */
  private post(url: URL, req: SendRequest, body: Buffer, deadline: number, fresh = false): Promise<PostAnswer> {
    const transport = url.protocol === 'https:' ? https : http;
    const headers: Record<string, string> = {
      ...req.headers,
      'content-type': 'application/json',
      'content-length': String(body.length),
      'user-agent': USER_AGENT,
      ...(fresh ? { connection: 'close' } : {}),
    };
    return new Promise((resolve) => {
      let settled = false;
      /** Set once the status is in: a later error (the body cut off) keeps the answer. */
      let keepAnswer: (() => void) | undefined;
      const finish = (result: Omit<PostAnswer, 'retryFresh' | 'sentHeaders'>, retryFresh = false) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ ...result, retryFresh, sentHeaders: headers });
      };
      const request = transport.request(url, {
        method: 'POST',
        // A retry after a stale kept-alive connection goes on a connection of its own.
        agent: fresh ? false : this.agentFor(url, req.environment),
        lookup: policyFor(req.environment, this.guard).lookup,
        headers,
      });
      const timer = setTimeout(() => request.destroy(new TimeoutError(req.timeoutMs)), Math.max(1, deadline - performance.now()));
      request.on('response', (res) => {
        // The status decides the attempt; the deadline no longer applies to what follows.
        clearTimeout(timer);
        const answeredAt = performance.now();
        const status = res.statusCode ?? 0;
        const outcome = status === 200 ? 'delivered' : status >= 300 && status < 400 ? 'redirect' : 'http_error';
        const decided = {
          ok: outcome === 'delivered',
          status_code: status,
          error: outcome === 'delivered' ? null : outcome === 'redirect' ? `redirect ${status} not followed` : `HTTP ${status}`,
          outcome,
          answeredAt,
        } as const;
        // The body's first bytes for the attempt log, waited for briefly; the rest is drained.
        const sample = new BodySample(res.headers['content-type'] ?? null);
        const keep = () => finish({ ...decided, response: sample.result() });
        keepAnswer = keep;
        const wait = setTimeout(keep, Math.min(BODY_WAIT_MS, Math.max(1, deadline - answeredAt)));
        wait.unref();
        res.on('data', (chunk: Buffer) => {
          if (sample.add(chunk)) keep();
        });
        res.on('end', () => {
          sample.ended = true;
          keep();
        });
        const drain = setTimeout(() => res.destroy(), req.timeoutMs);
        drain.unref();
        res.on('close', () => {
          clearTimeout(drain);
          clearTimeout(wait);
          keep();
        });
        res.on('error', () => undefined);
      });
      request.on('error', (err) => {
        if (keepAnswer) return keepAnswer();
        const code = (err as NodeJS.ErrnoException).code;
        const closedEarly = code === 'ECONNRESET' || code === 'EPIPE' || err.message === 'socket hang up';
        finish(
          { ok: false, status_code: null, error: describe(err, req.timeoutMs), outcome: outcomeOf(err) },
          !fresh && request.reusedSocket && closedEarly,
        );
      });
      request.end(body);
    });
  }
}

/** One exchange's answer, before the latency is computed. */
type PostAnswer = Omit<PostResult, 'latency_ms' | 'request_headers'> & {
  retryFresh: boolean;
  /** The headers this exchange sent. */
  sentHeaders: Record<string, string>;
  /** When the response's status arrived (performance.now()), if it did. */
  answeredAt?: number;
};

/** How long the body's first bytes are waited for once the status is in (within the attempt's deadline). */
const BODY_WAIT_MS = 2000;

/** The first RESPONSE_SAMPLE_BYTES of a response body. */
class BodySample {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  ended = false;

  constructor(private readonly contentType: string | null) {}

  /** Keeps what fits; true once there is more than what is kept. */
  add(chunk: Buffer): boolean {
    if (this.size <= RESPONSE_SAMPLE_BYTES) this.chunks.push(chunk);
    this.size += chunk.length;
    return this.size > RESPONSE_SAMPLE_BYTES;
  }

  result(): ResponseSample {
    const bytes = Buffer.concat(this.chunks).subarray(0, RESPONSE_SAMPLE_BYTES);
    return {
      // A character cut at the limit decodes as U+FFFD.
      body: new TextDecoder('utf-8').decode(bytes),
      truncated: this.size > RESPONSE_SAMPLE_BYTES || !this.ended,
      content_type: this.contentType,
    };
  }
}

class TimeoutError extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/** The outcome of a POST that got no status. */
function outcomeOf(err: unknown): SendOutcome {
  if (err instanceof TimeoutError) return 'timeout';
  if (err instanceof OutboundRefusedError) return 'blocked';
  return 'network_error';
}

/** A short, secret-free reason for the attempt log. */
function describe(err: unknown, timeoutMs: number): string {
  if (err instanceof TimeoutError) return `timeout: no answer within ${timeoutMs} ms`;
  // The same words whatever is at a refused address: nothing was asked there.
  if (err instanceof OutboundRefusedError) return REFUSED_MESSAGE;
  const e = err as NodeJS.ErrnoException;
  switch (e.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'connection closed by the receiver';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host not found (${e.code})`;
    case 'ETIMEDOUT':
      return 'connect timeout';
    default:
      if (e.message === 'socket hang up') return 'connection closed by the receiver';
      return e.code ? `${e.code}: ${e.message}` : e.message;
  }
}
