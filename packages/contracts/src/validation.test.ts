import { createTaskBodySchema } from './api/task.schema.js';
import { CATALOG } from './messages/catalog.js';
import { ENVELOPE_VERSION, newMessageId } from './messages/envelope.js';
import {
  compile,
  describeErrors,
  MessageValidationError,
  readMessage,
  ReplyValidationError,
  validateMessage,
  validateReply,
} from './validation.js';

const cancel = { task_id: 'task_1', account_id: 'acc_1', environment: 'test' };

/** A task.event whose task failed: its `error` is the API's TaskError schema (a named one, `$id`). */
const failedEvent = {
  kind: 'failed',
  version: 3,
  task: {
    id: 'task_1',
    account_id: 'acc_1',
    environment: 'test',
    user_id: null,
    status: 'failed',
    tool: 'text',
    metadata: {},
    created_at: '2026-11-28T10:00:00.000Z',
    failed_at: '2026-11-28T10:00:01.000Z',
    error: { code: 'step_failed', message: 'no', tool: 'text', recoverable: false },
  },
};

function envelope(type: string, data: object, extra: object = {}): Record<string, unknown> {
  return { v: ENVELOPE_VERSION, id: newMessageId(), type, source: 'test', occurred_at: new Date().toISOString(), data, ...extra };
}

function withoutV(env: Record<string, unknown>): Record<string, unknown> {
  const copy = { ...env };
  delete copy['v'];
  return copy;
}

describe('readMessage: what a consumer accepts', () => {
  it('reads a message without a version (an older producer) as version 1', () => {
    const read = readMessage(withoutV(envelope('task.cancel', cancel)));
    expect(read).toMatchObject({ known: true, type: 'task.cancel', data: cancel });
  });

  it('ignores fields it does not know, in the envelope and at any depth of the data, and keeps them in the data', () => {
    const data = {
      ...failedEvent,
      replay: true,
      task: { ...failedEvent.task, priority: 'high', error: { ...failedEvent.task.error, hint: 'z' } },
    };
    const read = readMessage(envelope('task.event', data, { trace_parent: '00-1-2-01' }));
    expect(read).toMatchObject({ known: true, type: 'task.event', data });
  });

  it('leaves for a newer consumer (known: false) a type its catalog lacks and a newer envelope version', () => {
    expect(readMessage(envelope('task.teleport', { task_id: 't' }))).toMatchObject({
      known: false,
      reason: 'unknown message type task.teleport',
    });
    expect(readMessage(envelope('task.cancel', cancel, { v: ENVELOPE_VERSION + 1 }))).toMatchObject({
      known: false,
      reason: `envelope version ${ENVELOPE_VERSION + 1} is newer than ${ENVELOPE_VERSION}`,
    });
    const older = Object.fromEntries(Object.entries(CATALOG).filter(([type]) => type !== 'task.cancel'));
    expect(readMessage(envelope('task.cancel', cancel), older)).toMatchObject({ known: false, reason: 'unknown message type task.cancel' });
  });

  it('still refuses what is malformed: a known type with invalid data, a broken envelope, a version that is not one', () => {
    expect(() => readMessage(envelope('task.cancel', { ...cancel, environment: 'production' }))).toThrow(
      new MessageValidationError('bad task.cancel: environment must be one of: test, live'),
    );
    expect(() => readMessage(envelope('task.cancel', { task_id: 't' }))).toThrow(MessageValidationError);
    expect(() => readMessage(envelope('task.event', { ...failedEvent, task: { ...failedEvent.task, error: { code: 'x' } } }))).toThrow(
      'bad task.event: task.error.message is required',
    );
    expect(() => readMessage({ hello: 'no envelope' })).toThrow(/bad envelope/);
    expect(() => readMessage(envelope('task.cancel', cancel, { v: 0 }))).toThrow(/bad envelope/);
    expect(() => readMessage(envelope('task.cancel', cancel, { v: '2' }))).toThrow(/bad envelope/);
  });
});

describe('validateMessage: what a producer sends stays strict', () => {
  it('accepts this version envelope with valid data', () => {
    expect(validateMessage(envelope('task.cancel', cancel))).toEqual({ type: 'task.cancel', data: cancel });
  });

  it('refuses an unknown data field, an unknown envelope field, a missing or other version, an unknown type', () => {
    expect(() => validateMessage(envelope('task.cancel', { ...cancel, priority: 'high' }))).toThrow(
      'bad task.cancel: priority is not an allowed field',
    );
    expect(() => validateMessage(envelope('task.event', { ...failedEvent, task: { ...failedEvent.task, priority: 1 } }))).toThrow(
      'bad task.event: task.priority is not an allowed field',
    );
    expect(() => validateMessage(envelope('task.cancel', cancel, { trace_parent: 'x' }))).toThrow(
      'bad envelope: trace_parent is not an allowed field',
    );
    expect(() => validateMessage(withoutV(envelope('task.cancel', cancel)))).toThrow('bad envelope: v is required');
    expect(() => validateMessage(envelope('task.cancel', cancel, { v: 2 }))).toThrow(/bad envelope/);
    expect(() => validateMessage(envelope('task.teleport', {}))).toThrow('unknown message type task.teleport');
  });

  it('leaves the API schemas strict after messages were read tolerantly (the HTTP body refuses unknown fields)', () => {
    const hinted = envelope('task.event', {
      ...failedEvent,
      task: { ...failedEvent.task, error: { ...failedEvent.task.error, hint: 'z' } },
    });
    expect(readMessage(hinted).known).toBe(true);
    expect(() => validateMessage(hinted)).toThrow('bad task.event: task.error.hint is not an allowed field');
    const body = compile(createTaskBodySchema);
    expect(body({ prompt: 'echo x', priority: 'high' })).toBe(false);
    expect(describeErrors(body.errors)).toBe('priority is not an allowed field');
  });
});

describe('validateReply: what a requester reads', () => {
  const trace = { task_id: 'task_1', steps: [], total_duration_ms: 0 };

  it('ignores fields a newer responder added', () => {
    expect(validateReply('trace.get', { ok: true, trace: { ...trace, cached: true }, served_by: 'executor-2' })).toEqual({
      ok: true,
      trace: { ...trace, cached: true },
      served_by: 'executor-2',
    });
    expect(validateReply('tool.delete', { ok: false, error: { code: 'not_found', message: 'no such tool', docs: 'x' } })).toMatchObject({
      ok: false,
    });
  });

  it('still refuses a reply missing what its schema requires', () => {
    expect(() => validateReply('trace.get', { ok: true, served_by: 'x' })).toThrow(
      new ReplyValidationError('bad reply to trace.get: trace is required'),
    );
  });
});
