import { BrokerUnavailableError, RequestTimeoutError, type Broker } from '@tes/messaging';
import { DashError } from './errors.js';
import { DashboardUpstream } from './upstream.js';

/** How the dashboard reads the back ends' replies: what it sends, and which page a refusal or silence becomes. */
describe('DashboardUpstream', () => {
  const scope = { account_id: 'acct_1', environment: 'test' as const };
  function upstream(answer: () => Promise<unknown>): { u: DashboardUpstream; sent: unknown[][] } {
    const sent: unknown[][] = [];
    const broker = {
      request: (type: string, data: unknown, o: unknown) => {
        sent.push([type, data, o]);
        return answer();
      },
    } as unknown as Broker;
    return { u: new DashboardUpstream(broker, 1234), sent };
  }
  const refusal = (status: number, title: string) => expect.objectContaining({ status, title });

  it('sends the request with its timeout and answers an ok reply', async () => {
    const { u, sent } = upstream(async () => ({ ok: true, data: [{ id: 'evt_1' }] }));
    await expect(u.webhookDeliveries(scope, { taskId: 'task_1', limit: 50 })).resolves.toEqual([{ id: 'evt_1' }]);
    expect(sent).toEqual([['webhook.deliveries', { ...scope, task_id: 'task_1', limit: 50 }, { timeoutMs: 1234 }]]);
  });

  it('turns invalid_request into 400, not_found and connection_not_found into 404, anything else into 503', async () => {
    const failing = (code: string) => upstream(async () => ({ ok: false, error: { code, message: `m ${code}` } })).u;
    await expect(failing('invalid_request').setWebhookEndpoint(scope, 'x')).rejects.toEqual(refusal(400, 'Not accepted'));
    await expect(failing('not_found').resend(scope, 'evt_1')).rejects.toEqual(refusal(404, 'Not found'));
    await expect(failing('connection_not_found').revokeConnection(scope, 'u', 's')).rejects.toEqual(refusal(404, 'Not found'));
    await expect(failing('internal_error').connections(scope, 'u')).rejects.toEqual(refusal(503, 'OAuth vault is unavailable'));
    await expect(failing('not_found').resend(scope, 'evt_1')).rejects.toBeInstanceOf(DashError);
  });

  it('turns a timeout or a broker outage into 503, and lets other errors through', async () => {
    const timeout = upstream(async () => Promise.reject(new RequestTimeoutError('webhook.get', 1234))).u;
    await expect(timeout.webhook(scope)).rejects.toEqual(refusal(503, 'Webhook service is unavailable'));
    const down = upstream(async () => Promise.reject(new BrokerUnavailableError())).u;
    await expect(down.sendTestEvent(scope)).rejects.toEqual(refusal(503, 'Webhook service is unavailable'));
    const bug = upstream(async () => Promise.reject(new TypeError('bug'))).u;
    await expect(bug.webhook(scope)).rejects.toBeInstanceOf(TypeError);
  });

  it('reads a trace, or null when the executor does not answer or refuses', async () => {
    const { u, sent } = upstream(async () => ({ ok: true, trace: { steps: [] } }));
    await expect(u.trace(scope, 'task_1')).resolves.toEqual({ steps: [] });
    expect(sent[0]?.[1]).toEqual({ task_id: 'task_1', ...scope });
    await expect(upstream(async () => ({ ok: false })).u.trace(scope, 'task_1')).resolves.toBeNull();
    await expect(upstream(async () => Promise.reject(new BrokerUnavailableError())).u.trace(scope, 'task_1')).resolves.toBeNull();
  });

  it("asks the account's orchestrator partition for a task's prompt and plan; null when it does not answer or refuses", async () => {
    const task = { prompt: 'p', steps: [] };
    const { u, sent } = upstream(async () => ({ ok: true, task }));
    await expect(u.inspect(scope, 'task_1')).resolves.toBe(task);
    expect(sent).toEqual([['task.inspect', { task_id: 'task_1', ...scope }, { timeoutMs: 1234, partitionKey: 'acct_1' }]]);
    await expect(
      upstream(async () => ({ ok: false, error: { code: 'task_not_found', message: 'm' } })).u.inspect(scope, 'task_1'),
    ).resolves.toBeNull();
    await expect(
      upstream(async () => Promise.reject(new RequestTimeoutError('task.inspect', 1234))).u.inspect(scope, 'task_1'),
    ).resolves.toBeNull();
  });

  it('reads one event in full, and answers 404 when the dispatcher has no such event here', async () => {
    const { u, sent } = upstream(async () => ({ ok: true, data: [{ id: 'evt_1' }] }));
    await expect(u.delivery(scope, 'evt_1')).resolves.toEqual({ id: 'evt_1' });
    expect(sent[0]).toEqual(['webhook.deliveries', { ...scope, event_id: 'evt_1', limit: 1 }, { timeoutMs: 1234 }]);
    await expect(upstream(async () => ({ ok: true, data: [] })).u.delivery(scope, 'evt_2')).rejects.toEqual(
      refusal(404, 'Event not found'),
    );
  });
});
