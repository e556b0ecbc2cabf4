import type {
  ConnectionView,
  Environment,
  MessageDataMap,
  ReplyOf,
  TaskInspection,
  TaskTrace,
  WaitingData,
  WebhookDeliveryInfo,
  WebhookGetReply,
  WebhookRotateReply,
} from '@tes/contracts';
import { BrokerUnavailableError, RequestTimeoutError, type Broker } from '@tes/messaging';
import type { TaskView } from '../domain/task-view.js';
import { currentWaiting } from '../http/waiting.js';
import { DashError } from './errors.js';

/** The account environment a request is about. */
export interface Scope {
  account_id: string;
  environment: Environment;
}

/** The requests the dashboard sends whose replies are `{ok: true, ...}` or a refusal. */
type DashboardRequest =
  | 'webhook.get'
  | 'webhook.deliveries'
  | 'webhook.set'
  | 'webhook.rotate_secret'
  | 'webhook.send_test'
  | 'webhook.resend'
  | 'connections.list'
  | 'connection.revoke';

type Accepted<R> = Extract<R, { ok: true }>;

function isAccepted<R extends { ok: boolean }>(reply: R): reply is Accepted<R> {
  return reply.ok;
}

/** A refusal's code and message (a malformed one is refused by the broker before it gets here). */
function refusalOf(reply: { ok: boolean; error?: { code: string; message: string } }): { code: string; message: string } {
  return reply.error ?? { code: 'internal_error', message: 'The request failed.' };
}

const WEBHOOKS = 'Webhook service';
const VAULT = 'OAuth vault';

/**
 * Every request the dashboard sends to the back ends (the dispatcher's webhook settings, the
 * vault's connections, the executor's trace), and the one place their replies are read.
 */
export class DashboardUpstream {
  constructor(
    private readonly broker: Broker,
    private readonly timeoutMs: number,
  ) {}

  /**
   * A request whose refusal or silence the page shows: its accepted reply, or a DashError (400 for
   * an invalid request, 404 for an unknown one, 503 when `what` did not answer or failed).
   */
  async ask<T extends DashboardRequest>(type: T, data: MessageDataMap[T], what: string): Promise<Accepted<ReplyOf<T>>> {
    let reply: ReplyOf<T>;
    try {
      reply = await this.broker.request(type, data, { timeoutMs: this.timeoutMs });
    } catch (err) {
      if (err instanceof RequestTimeoutError || err instanceof BrokerUnavailableError) {
        throw new DashError(503, `${what} is unavailable`, `The ${what.toLowerCase()} did not answer in time. Try again in a moment.`);
      }
      throw err;
    }
    if (isAccepted(reply)) return reply;
    const { code, message } = refusalOf(reply);
    if (code === 'invalid_request') throw new DashError(400, 'Not accepted', message);
    if (code === 'not_found' || code === 'connection_not_found') throw new DashError(404, 'Not found', message);
    throw new DashError(503, `${what} is unavailable`, `The ${what.toLowerCase()} could not answer. Try again in a moment.`);
  }

  /** The environment's webhook endpoint and secret (its value only when `revealSecret`). */
  async webhook(scope: Scope, o: { revealSecret?: boolean } = {}): Promise<Accepted<WebhookGetReply>> {
    const data = o.revealSecret ? { ...scope, reveal_secret: true } : scope;
    return this.ask('webhook.get', data, WEBHOOKS);
  }

  /** The newest deliveries, of one task when `taskId` is given. */
  async webhookDeliveries(scope: Scope, o: { taskId?: string; limit: number }): Promise<WebhookDeliveryInfo[]> {
    const data = { ...scope, ...(o.taskId ? { task_id: o.taskId } : {}), limit: o.limit };
    return (await this.ask('webhook.deliveries', data, WEBHOOKS)).data;
  }

  async setWebhookEndpoint(scope: Scope, url: string): Promise<void> {
    await this.ask('webhook.set', { ...scope, url }, WEBHOOKS);
  }

  async rotateWebhookSecret(scope: Scope): Promise<WebhookRotateReply['secret']> {
    return (await this.ask('webhook.rotate_secret', scope, WEBHOOKS)).secret;
  }

  async sendTestEvent(scope: Scope): Promise<void> {
    await this.ask('webhook.send_test', scope, WEBHOOKS);
  }

  /** One event in full (body; per attempt the request's headers and the answer); 404 when it is not this environment's. */
  async delivery(scope: Scope, eventId: string): Promise<WebhookDeliveryInfo> {
    const [event] = (await this.ask('webhook.deliveries', { ...scope, event_id: eventId, limit: 1 }, WEBHOOKS)).data;
    if (!event) throw new DashError(404, 'Event not found', `There is no ${scope.environment} webhook event ${eventId.slice(0, 80)}.`);
    return event;
  }

  /** "Resend now": what the dispatcher did (see webhook.resend). */
  async resend(scope: Scope, eventId: string): Promise<Accepted<ReplyOf<'webhook.resend'>>['effect']> {
    return (await this.ask('webhook.resend', { ...scope, event_id: eventId }, WEBHOOKS)).effect;
  }

  /** The end user's connections, without anything the page does not show. */
  async connections(scope: Scope, userId: string): Promise<ConnectionView[]> {
    const r = await this.ask('connections.list', { ...scope, user_id: userId }, VAULT);
    return r.connections.map((c) => ({
      service: c.service,
      scopes: c.scopes,
      status: c.status,
      connected_at: c.connected_at,
    }));
  }

  async revokeConnection(scope: Scope, userId: string, service: string): Promise<void> {
    await this.ask('connection.revoke', { ...scope, user_id: userId, service }, VAULT);
  }

  /** The task's trace; null when the executor did not answer or could not read it. */
  async trace(scope: Scope, taskId: string): Promise<TaskTrace | null> {
    try {
      const reply = await this.broker.request('trace.get', { task_id: taskId, ...scope }, { timeoutMs: this.timeoutMs });
      return reply.ok ? reply.trace : null;
    } catch {
      return null;
    }
  }

  /** The task's prompt, plan and current step (its account's orchestrator partition); null when it did not answer. */
  async inspect(scope: Scope, taskId: string): Promise<TaskInspection | null> {
    try {
      const reply = await this.broker.request(
        'task.inspect',
        { task_id: taskId, ...scope },
        { timeoutMs: this.timeoutMs, partitionKey: scope.account_id },
      );
      return reply.ok ? reply.task : null;
    } catch {
      return null;
    }
  }

  /** What a waiting task waits for, with a fresh consent link (see currentWaiting). */
  waiting(task: TaskView): Promise<WaitingData | undefined> {
    return currentWaiting(task, { broker: this.broker, timeoutMs: this.timeoutMs });
  }
}
