import { findAction } from '@tes/catalog';
import { compile, type StepRun } from '@tes/contracts';
import { runStep } from '../../domain/run-step.use-case.js';
import { startFakeGoogle, type FakeGoogle } from '../../test-support/fake-google.js';
import { startFakeVault, type FakeVault } from '../../test-support/fake-vault.js';
import { startHarness, type Harness } from '../../test-support/harness.js';

/** gmail.forward_email: live against the fake Gmail (its wire format), and in the sandbox. */
describe('gmail: forward_email', () => {
  let h: Harness;
  let vault: FakeVault;
  let google: FakeGoogle;
  type StepInput = Partial<StepRun> & Pick<StepRun, 'action' | 'input'>;

  beforeAll(async () => {
    h = await startHarness();
    vault = await startFakeVault(h.broker);
    google = await startFakeGoogle();
  });
  afterAll(async () => {
    await google?.close();
    await h?.close();
  });
  beforeEach(() => {
    vault.answer = () => ({ status: 'ok', access_token: 'tok-valid' });
    vault.requests.length = 0;
  });

  const live = (input: Record<string, unknown>) =>
    runStep(
      h.step({ tool: 'gmail', action: 'forward_email', input, environment: 'live' }),
      h.deps({ providerUrls: { ...h.deps().settings.providerUrls, gmail: google.gmailUrl } }),
    );
  const sandbox = (s: StepInput) => runStep(h.step({ tool: 'gmail', ...s }), h.deps());
  const decoded = (raw: string | undefined) => Buffer.from(raw ?? '', 'base64url').toString('utf8');
  const headersOf = (mime: string) => mime.split('\r\n\r\n')[0]?.split('\r\n') ?? [];
  const calls = (from: number) => google.requests.slice(from).map((r) => `${r.method} ${r.path} ${r.query.get('format') ?? ''}`.trim());
  function expectValid(output: unknown) {
    const check = compile(findAction('gmail', 'forward_email')?.output ?? {});
    expect({ valid: check(output), errors: check.errors ?? null }).toEqual({ valid: true, errors: null });
  }

  describe('live', () => {
    it('reads the original (format=full), sends "Fwd: " with the note, the forwarded block and its text; asks for send + readonly', async () => {
      const before = google.requests.length;
      const res = await live({ message_id: 'm2', to: ['carol@example.com'], cc: ['dave@example.com'], note: 'FYI, see below.' });
      expect(res).toMatchObject({
        outcome: 'complete',
        output: { to: ['carol@example.com'], subject: 'Fwd: Lunch?', thread_id: expect.stringMatching(/^t-s\d+$/) },
      });
      expectValid(res.output);
      // No attachment: the raw original is not read.
      expect(calls(before)).toEqual(['GET /gmail/v1/users/me/messages/m2 full', 'POST /gmail/v1/users/me/messages/send']);
      const send = google.sent.at(-1);
      expect(send?.threadId).toBeUndefined();
      const mime = decoded(send?.raw);
      expect(headersOf(mime)).toEqual([
        'To: carol@example.com',
        'Cc: dave@example.com',
        'Subject: Fwd: Lunch?',
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset="UTF-8"',
        'Content-Transfer-Encoding: 8bit',
      ]);
      expect(mime.split('\r\n\r\n').slice(1).join('\r\n\r\n')).toBe(
        [
          'FYI, see below.',
          '',
          '',
          '---------- Forwarded message ---------',
          'From: Bob <bob@example.com>',
          'Date: Wed, 12 Mar 2025 08:00:00 +0000',
          'Subject: Lunch?',
          'To: me@example.com',
          '',
          'Noon at the usual place?',
        ].join('\r\n'),
      );
      expect(vault.requests[0]?.scopes).toEqual([
        'https://www.googleapis.com/auth/gmail.send',
        'https://www.googleapis.com/auth/gmail.readonly',
      ]);
    });

    it('with attachments: reads format=raw too and attaches the original whole as message/rfc822 (its PDF inside)', async () => {
      const before = google.requests.length;
      const res = await live({ message_id: 'm1', to: ['bob@example.com'] });
      expect(res).toMatchObject({ outcome: 'complete', output: { subject: 'Fwd: Invoice March' } });
      expect(calls(before)).toEqual([
        'GET /gmail/v1/users/me/messages/m1 full',
        'GET /gmail/v1/users/me/messages/m1 raw',
        'POST /gmail/v1/users/me/messages/send',
      ]);
      const mime = decoded(google.sent.at(-1)?.raw);
      const boundary = /Content-Type: multipart\/mixed; boundary="([^"]+)"/.exec(mime)?.[1];
      expect(boundary).toMatch(/^fwd_[0-9a-f]{32}$/);
      const parts = mime.split(`--${boundary}`);
      expect(parts).toHaveLength(4); // preamble headers, text, the original, the closing "--"
      expect(parts[1]).toContain('Cc: "Carol, Finance" <carol@example.com>, dave@example.com, ME@example.com');
      expect(parts[1]).toContain('Hi,\r\nPlease find the invoice for March attached.\r\nAlice');
      expect(parts[2]).toContain('Content-Type: message/rfc822\r\n');
      expect(parts[2]).toContain('filename="Invoice March.eml"');
      expect(parts[2]).toContain('Message-Id: <CAinvoice-1@mail.example.com>');
      expect(parts[2]).toContain('Content-Disposition: attachment; filename="invoice-march.pdf"');
      expect(parts[3]).toBe('--\r\n');
    });

    it('a subject already "Fwd: " is not doubled; an HTML-only original is forwarded as its text', async () => {
      const res = await live({ message_id: 'm3', to: ['team@example.com'] });
      expect(res.output).toMatchObject({ subject: 'Fwd: Build #42 passed' });
      const mime = decoded(google.sent.at(-1)?.raw);
      expect(headersOf(mime)).toContain('Subject: Fwd: Build #42 passed');
      expect(mime.endsWith('\r\n\r\nBuild #42 passed\r\nAll green & shipped')).toBe(true);
      expect(mime.startsWith('To: team@example.com\r\n')).toBe(true);
    });

    it('an unknown message: step_failed not found, nothing sent', async () => {
      const before = google.sent.length;
      const res = await live({ message_id: 'nope', to: ['x@example.com'] });
      expect(res).toMatchObject({ outcome: 'failed', error: { code: 'step_failed', recoverable: false } });
      expect(res.error?.message).toMatch(/Gmail: not found/);
      expect(google.sent.length).toBe(before);
    });

    it('403 on send is permission_denied naming both scopes', async () => {
      google.fail({ kind: 'insufficient_scope' }, 1, /\/messages\/send$/);
      const res = await live({ message_id: 'm2', to: ['x@example.com'] });
      expect(res).toMatchObject({ outcome: 'failed', error: { code: 'permission_denied', recoverable: true } });
      expect(res.error?.suggestion).toContain('gmail.send, https://www.googleapis.com/auth/gmail.readonly');
    });

    it('recipients that are not email addresses are refused before any call', async () => {
      const before = google.requests.length;
      const res = await live({ message_id: 'm2', to: ['bob'] });
      expect(res).toMatchObject({ outcome: 'failed', error: { code: 'step_failed' } });
      expect(google.requests.length).toBe(before);
    });
  });

  describe('sandbox', () => {
    it('the forward lands in the sent mail with "Fwd: " in a thread of its own, once per step; search finds it', async () => {
      const u = { user_id: 'u_fwd' };
      const step = h.step({
        ...u,
        tool: 'gmail',
        action: 'forward_email',
        input: { message_id: 'msg_welcome', to: ['bob@example.com'], note: 'Look at this' },
      });
      const f = await runStep(step, h.deps());
      expect(f.output).toMatchObject({ to: ['bob@example.com'], subject: 'Fwd: Welcome to the sandbox' });
      expect(f.output?.['thread_id']).not.toBe('thr_welcome');
      expectValid(f.output);
      await h.mongo.collection<{ _id: string }>('step_runs').deleteOne({ _id: step.idempotency_key });
      expect((await runStep(step, h.deps())).output).toEqual(f.output);

      const found = await sandbox({ ...u, action: 'search_email', input: { query: 'subject:fwd' } });
      expect(found.output).toMatchObject({ count: 1, items: [{ id: f.output?.['id'], to: ['bob@example.com'] }] });
      expect((found.output?.['items'] as { snippet: string }[])[0]?.snippet).toMatch(
        /^Look at this ---------- Forwarded message --------- From: Sandbox <sandbox@example.com>/,
      );
      // Forwarding the forward keeps one "Fwd: ".
      const again = await sandbox({ ...u, action: 'forward_email', input: { message_id: f.output?.['id'], to: ['carol@example.com'] } });
      expect(again.output).toMatchObject({ subject: 'Fwd: Welcome to the sandbox', to: ['carol@example.com'] });
    });

    it('an unknown message is refused, nothing is sent', async () => {
      const u = { user_id: 'u_fwd2' };
      const res = await sandbox({ ...u, action: 'forward_email', input: { message_id: 'msg_nope', to: ['nobody@example.com'] } });
      expect(res).toMatchObject({ outcome: 'failed', error: { code: 'step_failed', message: expect.stringContaining('not found') } });
      const sent = await sandbox({ ...u, action: 'search_email', input: { query: 'to:nobody@example.com' } });
      expect(sent.output).toEqual({ items: [], count: 0 });
    });
  });
});
