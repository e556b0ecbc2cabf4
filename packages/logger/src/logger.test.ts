import { PassThrough } from 'node:stream';
import { createLogger, redact, REDACTED } from './index.js';

function capture() {
  const stream = new PassThrough();
  const lines: string[] = [];
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().trim().split('\n')));
  return { stream, lines };
}

describe('logger', () => {
  it('writes JSON with the service and child context', async () => {
    const { stream, lines } = capture();
    const log = createLogger({ service: 'gateway', stream }).child({ request_id: 'req_1' });
    log.info('hello', { task_id: 'task_1' });
    await new Promise((r) => setImmediate(r));
    const line = JSON.parse(lines[0] ?? '{}');
    expect(line).toMatchObject({ message: 'hello', service: 'gateway', request_id: 'req_1', task_id: 'task_1', level: 'info' });
  });

  it('redacts secrets by key and by shape, however deep', async () => {
    const { stream, lines } = capture();
    const log = createLogger({ service: 's', stream });
    log.info('req', {
      headers: { authorization: 'Bearer abc.def', accept: 'json' },
      nested: [{ refresh_token: 'r1' }],
      note: 'used key pk_live_abcdef123 and whsec_XYZ',
    });
    await new Promise((r) => setImmediate(r));
    const text = lines.join('\n');
    expect(text).not.toContain('abc.def');
    expect(text).not.toContain('r1"');
    expect(text).not.toContain('pk_live_abcdef123');
    expect(text).not.toContain('whsec_XYZ');
    expect(text).toContain('"accept":"json"');
  });

  it('redact leaves harmless values alone', () => {
    expect(redact({ a: 1, b: 'x', token: 't' })).toEqual({ a: 1, b: 'x', token: REDACTED });
  });
});
