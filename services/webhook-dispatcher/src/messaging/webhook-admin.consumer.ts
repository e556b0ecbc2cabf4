import {
  QUEUES,
  TEST_EVENT_ID_PREFIX,
  TEST_TASK_ID_PREFIX,
  newId,
  type WebhookDeliveryInfo,
  type WebhookSecretInfo,
  type WebhookSendTest,
  type WebhookSendTestReply,
} from '@tes/contracts';
import { AppError, isAppError } from '@tes/errors';
import type { Logger } from '@tes/logger';
import type { Broker, DeliveryOn } from '@tes/messaging';
import { deliveryDetail, listDeliveries, redeliver, type DeliveryView } from '../domain/deliveries.use-case.js';
import { setEndpoint } from '../domain/manage-endpoint.use-case.js';
import { ensureSecret, rotateSecret } from '../domain/manage-secrets.use-case.js';
import { resendNow } from '../domain/resend-event.use-case.js';
import type { GuardOptions } from '../domain/ssrf-guard.js';
import { slotOf, type PendingDoc } from '../domain/stored-event.js';
import type { Repositories } from '../store/repositories.js';

export interface WebhookAdminDeps extends Repositories {
  guard: GuardOptions;
  logger: Logger;
  /** Wakes the delivery poller (a test event or a redelivered one is due at once). */
  onStored(): void;
}

/**
 * A request older than this is dropped unanswered: its requester (the gateway waits
 * REQUEST_TIMEOUT_MS, 5 s by default) has given up and told the owner to retry, so acting on
 * it now (a request that sat in the queue while no dispatcher ran) would rotate a secret or
 * send a test event twice.
 */
export const STALE_REQUEST_MS = 30_000;

const DEFAULT_GRACE_HOURS = 24;

/**
 * The dashboard's webhook administration (request/reply on `dispatcher.admin`, validated by
 * the broker against the catalog): `webhook.get`, `webhook.set`, `webhook.rotate_secret`,
 * `webhook.send_test`, `webhook.deliveries`, `webhook.redeliver`, `webhook.resend`. Every answer is
 * `{ok: true, ...}` or `{ok: false, error: {code, message}}`; a failure (database down)
 * answers `internal_error` instead of leaving the gateway to time out. Competing consumers:
 * each request is handled by one replica, and everything it writes goes through the same
 * insert-decided use cases as the operator CLI.
 */
export async function consumeWebhookAdmin(broker: Broker, deps: WebhookAdminDeps, prefetch = 16): Promise<void> {
  await broker.consume(
    QUEUES.dispatcherAdmin,
    async (d) => {
      const log = deps.logger.child({ type: d.type, message_id: d.envelope.id });
      const age = Date.now() - Date.parse(d.envelope.occurred_at);
      if (age > STALE_REQUEST_MS) {
        log.warn('stale webhook admin request dropped', { age_ms: age });
        return;
      }
      try {
        await handle(d, deps, log);
      } catch (err) {
        if (isAppError(err) && (err.code === 'invalid_request' || err.code === 'not_found')) {
          await d.reply({ ok: false, error: { code: err.code, message: err.message } });
          return;
        }
        log.error('webhook admin request failed', { error: err instanceof Error ? err.message : String(err) });
        await d.reply({ ok: false, error: { code: 'internal_error', message: 'The webhook service could not answer; retry later' } });
      }
    },
    { prefetch, maxAttempts: 1 },
  );
}

/** Answers one request (a failure is answered by the caller). */
async function handle(d: DeliveryOn<typeof QUEUES.dispatcherAdmin>, deps: WebhookAdminDeps, log: Logger): Promise<void> {
  switch (d.type) {
    case 'webhook.get': {
      const q = d.data;
      const endpoint = await deps.endpoints.get(q.account_id, q.environment);
      const [secret] = await deps.secrets.latest(q.account_id, q.environment, 1);
      return d.reply({
        ok: true,
        endpoint: endpoint ? endpointInfo(endpoint) : null,
        secret: secret ? secretInfo(secret, q.reveal_secret === true) : null,
      });
    }
    case 'webhook.set': {
      const q = d.data;
      const view = await setEndpoint(
        { endpoints: deps.endpoints, secrets: deps.secrets, guard: deps.guard },
        q.account_id,
        q.environment,
        q.url,
      );
      return d.reply({ ok: true, endpoint: { url: view.url, created_at: view.created_at, updated_at: view.updated_at } });
    }
    case 'webhook.rotate_secret': {
      const q = d.data;
      const [current] = await deps.secrets.latest(q.account_id, q.environment, 1);
      if (!current) {
        // No secret yet: the first one is the answer (nothing to rotate away from).
        await ensureSecret(deps.secrets, q.account_id, q.environment);
      } else {
        await rotateSecret(deps.secrets, q.account_id, q.environment, q.grace_hours ?? DEFAULT_GRACE_HOURS);
      }
      const [latest] = await deps.secrets.latest(q.account_id, q.environment, 1);
      if (!latest) throw new Error('secret missing right after it was written');
      return d.reply({ ok: true, secret: { ...secretInfo(latest, false), value: latest.secret } });
    }
    case 'webhook.send_test':
      return d.reply(await sendTest(d.data, deps));
    case 'webhook.deliveries': {
      const q = d.data;
      if (q.event_id) {
        const one = await deliveryDetail(deps, q.event_id);
        const mine = one && one.account_id === q.account_id && one.environment === q.environment ? [one] : [];
        return d.reply({ ok: true, data: mine.map(deliveryInfo) });
      }
      const { data } = q.task_id
        ? await listDeliveries(deps, { task_id: q.task_id })
        : await listDeliveries(deps, { account_id: q.account_id, environment: q.environment, limit: q.limit ?? 25 });
      // listByTask is keyed by task only: keep this account environment's events, nothing else.
      const mine = data.filter((e) => e.account_id === q.account_id && e.environment === q.environment);
      return d.reply({ ok: true, data: mine.slice(0, q.limit ?? 100).map(deliveryInfo) });
    }
    case 'webhook.redeliver': {
      const q = d.data;
      const event = await deps.events.get(q.event_id);
      if (!event || event.account_id !== q.account_id || event.environment !== q.environment) {
        throw notFound(`no webhook event ${q.event_id}`);
      }
      const view = await redeliver(deps, q.event_id);
      deps.onStored();
      return d.reply({ ok: true, delivery: deliveryInfo(view) });
    }
    case 'webhook.resend': {
      const q = d.data;
      const event = await deps.events.get(q.event_id);
      if (!event || event.account_id !== q.account_id || event.environment !== q.environment) {
        throw notFound(`no webhook event ${q.event_id}`);
      }
      const { delivery, effect } = await resendNow(deps, q.event_id);
      deps.onStored();
      log.info('webhook event resent from the dashboard', { event_id: q.event_id, effect });
      return d.reply({ ok: true, delivery: deliveryInfo(delivery), effect });
    }
  }
}

/**
 * A test delivery through the normal path: an event stored like a task event (`pending`, due
 * now), then claimed, signed, POSTed, logged and retried by the scheduler like any other. Its
 * body is a well-formed `task.progress` for a made-up task (`task_test…`), so receivers that
 * validate the spec's shapes accept it; its webhook id starts with `evt_test_`.
 */
async function sendTest(q: WebhookSendTest, deps: WebhookAdminDeps): Promise<WebhookSendTestReply> {
  const endpoint = await deps.endpoints.get(q.account_id, q.environment);
  if (!endpoint) throw invalid(`the ${q.environment} environment has no webhook endpoint: set one first`);
  await ensureSecret(deps.secrets, q.account_id, q.environment);
  const suffix = newId('x').slice(2);
  const eventId = `${TEST_EVENT_ID_PREFIX}${suffix}`;
  const taskId = `${TEST_TASK_ID_PREFIX}${suffix}`;
  const now = new Date();
  const timestamp = now.toISOString();
  const body = JSON.stringify({
    event: 'task.progress',
    task_id: taskId,
    timestamp,
    data: { step: 'test', tool: 'dashboard', message: 'Test event sent from the dashboard', progress_pct: 100 },
  });
  const doc: PendingDoc = {
    _id: eventId,
    event_id: eventId,
    account_id: q.account_id,
    environment: q.environment,
    task_id: taskId,
    version: 1,
    kind: 'progress',
    event: 'task.progress',
    body,
    occurred_at: timestamp,
    received_at: now,
    status: 'pending',
    attempts_made: 0,
    schedule_base: 0,
    next_attempt_at: now,
    delivered_at: null,
    last_status_code: null,
    last_error: null,
    updated_at: now,
    lane: 'open',
    slot: slotOf({ next_attempt_at: now }),
    tag: `test:${eventId}`,
  };
  if ((await deps.pending.insertOne(doc)) !== 'inserted') throw new Error(`test event id ${eventId} collided`);
  deps.onStored();
  deps.logger.info('test webhook event stored', { event_id: eventId, account_id: q.account_id, environment: q.environment });
  return { ok: true, event_id: eventId, task_id: taskId };
}

function endpointInfo(e: { url: string; created_at: Date; updated_at: Date }) {
  return { url: e.url, created_at: e.created_at.toISOString(), updated_at: e.updated_at.toISOString() };
}

function secretInfo(
  s: { version: number; secret: string; created_at: Date; previous_valid_until: Date | null },
  reveal: boolean,
): WebhookSecretInfo {
  const validUntil = s.previous_valid_until && s.previous_valid_until.getTime() > Date.now() ? s.previous_valid_until.toISOString() : null;
  return {
    version: s.version,
    created_at: new Date(s.created_at).toISOString(),
    last4: s.secret.slice(-4),
    previous_valid_until: s.version > 1 ? validUntil : null,
    ...(reveal ? { value: s.secret } : {}),
  };
}

function deliveryInfo(v: DeliveryView): WebhookDeliveryInfo {
  return {
    id: v.id,
    event: v.event,
    task_id: v.task_id,
    status: v.status,
    occurred_at: v.occurred_at,
    attempts_made: v.attempts_made,
    next_attempt_at: v.next_attempt_at,
    delivered_at: v.delivered_at,
    test: v.id.startsWith(TEST_EVENT_ID_PREFIX),
    attempts: v.attempts,
    ...(v.body !== undefined ? { body: v.body } : {}),
  };
}

function invalid(message: string): AppError {
  return new AppError('invalid_request', message);
}

function notFound(message: string): AppError {
  return new AppError('not_found', message);
}
