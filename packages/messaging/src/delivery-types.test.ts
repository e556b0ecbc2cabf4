import type { QUEUES } from '@tes/contracts';
import type { Broker, DeliveryOn } from './broker.js';

/**
 * Type-level checks, enforced by `pnpm typecheck`: this file compiles only while a consumer's
 * delivery narrows on `d.type`, replies are typed per request and `request()` returns the reply type.
 */
type PartitionDelivery = DeliveryOn<ReturnType<typeof QUEUES.orchestratorPartition>>;

function describeDelivery(d: PartitionDelivery): string {
  switch (d.type) {
    case 'task.cancel':
      return d.data.task_id;
    case 'step.result':
      return d.data.outcome;
    case 'tool.delete':
      return d.data.name;
    // @ts-expect-error step.run is never delivered on a partition queue
    case 'step.run':
      return 'impossible';
    default:
      return d.type;
  }
}

export async function typedReplies(d: PartitionDelivery, broker: Broker): Promise<void> {
  if (d.type === 'task.cancel') {
    // @ts-expect-error a task.cancel answer carries the task and its version
    await d.reply({ ok: true });
    await d.reply({ ok: false, error: { code: 'task_not_found', message: 'No task' } });
  }
  if (d.type === 'step.result') {
    // @ts-expect-error step.result is not a request: there is nothing to answer
    await d.reply({ ok: true });
  }
  const reply = await broker.request('trace.get', { task_id: 'task_1', account_id: 'acc', environment: 'test' }, { timeoutMs: 1 });
  const steps: { duration_ms: number }[] = reply.trace.steps;
  void steps;
  // @ts-expect-error task.event is not a request
  await broker.request('task.event', undefined as never, { timeoutMs: 1 });
}

/** The envelope's version may be missing (a message published before envelopes carried one). */
export function envelopeVersion(d: PartitionDelivery): number {
  const v: number | undefined = d.envelope.v;
  const id: string = d.envelope.id;
  void id;
  // @ts-expect-error `v` is optional: a reader must handle its absence
  const required: number = d.envelope.v;
  void required;
  return v ?? 1;
}

describe('typed deliveries', () => {
  it('narrows a delivery on its type', () => {
    const d = { type: 'task.cancel', data: { task_id: 'task_1', account_id: 'acc', environment: 'test' } } as PartitionDelivery;
    expect(describeDelivery(d)).toBe('task_1');
  });
});
