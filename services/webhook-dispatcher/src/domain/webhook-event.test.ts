import type { TaskEvent } from '@tes/contracts';
import { eventIdOf, toWebhook, UnmappableEventError } from './webhook-event.js';

const task: TaskEvent['task'] = {
  id: 'task_1',
  account_id: 'acc_1',
  environment: 'test',
  user_id: null,
  status: 'running',
  tool: 'gmail',
  metadata: {},
  created_at: '2026-01-01T00:00:00.000Z',
};
const AT = '2026-01-01T00:00:05.000Z';
const error = { code: 'service_unavailable', message: '503', tool: 'gmail', recoverable: true };
const progress = { step: 'send', tool: 'gmail', message: 'sending', progress_pct: 40 };
const waiting = { reason: 'oauth_consent_required', service: 'gmail', auth_url: 'https://auth.example.test/x', message: 'connect' };

describe('task event → webhook', () => {
  it('maps the four kinds with the spec body, keys in order event, task_id, timestamp, data', () => {
    const cases: [TaskEvent, string, unknown][] = [
      [{ kind: 'completed', version: 5, task: { ...task, status: 'complete', result: { sent: 3 } } }, 'task.complete', { sent: 3 }],
      [{ kind: 'failed', version: 5, task: { ...task, status: 'failed', error } }, 'task.failed', { error }],
      [{ kind: 'progress', version: 3, task, progress }, 'task.progress', progress],
      [{ kind: 'waiting', version: 3, task: { ...task, status: 'waiting' }, waiting }, 'task.waiting', waiting],
    ];
    for (const [message, name, data] of cases) {
      const hook = toWebhook(message, AT);
      expect(hook?.event).toBe(name);
      expect(hook?.body).toBe(JSON.stringify({ event: name, task_id: 'task_1', timestamp: AT, data }));
      expect(Object.keys(JSON.parse(hook?.body ?? '{}') as object)).toEqual(['event', 'task_id', 'timestamp', 'data']);
    }
  });

  it('produces nothing for created, started, resumed and cancelled', () => {
    for (const kind of ['created', 'started', 'resumed', 'cancelled'] as const) {
      expect(toWebhook({ kind, version: 1, task }, AT)).toBeNull();
    }
  });

  it('a completed task without result sends an empty object; a webhook kind without its data is unmappable', () => {
    expect(toWebhook({ kind: 'completed', version: 2, task }, AT)?.body).toContain('"data":{}');
    expect(() => toWebhook({ kind: 'failed', version: 2, task }, AT)).toThrow(UnmappableEventError);
    expect(() => toWebhook({ kind: 'progress', version: 2, task }, AT)).toThrow(UnmappableEventError);
    expect(() => toWebhook({ kind: 'waiting', version: 2, task }, AT)).toThrow(UnmappableEventError);
  });

  it('derives one stable event id per message', () => {
    expect(eventIdOf('evt_task_1_3')).toBe('evt_task_1_3');
    expect(eventIdOf('msg_abc')).toBe('evt_msg_abc');
  });
});
