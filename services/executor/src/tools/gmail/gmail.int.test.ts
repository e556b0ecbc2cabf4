import { findAction } from '@tes/catalog';
import { compile, type StepRun } from '@tes/contracts';
import { runStep } from '../../domain/run-step.use-case.js';
import { startFakeGoogle, type FakeGoogle } from '../../test-support/fake-google.js';
import { startFakeVault, type FakeVault } from '../../test-support/fake-vault.js';
import { startHarness, type Harness } from '../../test-support/harness.js';

/** Gmail's new actions: live against the fake Gmail (its wire format), and in the sandbox. */
describe('gmail: create_draft, reply_to_email, search_email with dates', () => {
  let h: Harness;
  let vault: FakeVault;
  let google: FakeGoogle;
  type StepInput = Partial<StepRun> & Pick<StepRun, 'tool' | 'action' | 'input'>;

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

  const live = (action: string, input: Record<string, unknown>) =>
    runStep(
      h.step({ tool: 'gmail', action, input, environment: 'live' }),
      h.deps({ providerUrls: { ...h.deps().settings.providerUrls, gmail: google.gmailUrl } }),
    );
  const sandbox = (s: Omit<StepInput, 'tool'>) => runStep(h.step({ tool: 'gmail', ...s }), h.deps());
  const decoded = (raw: string | undefined) => Buffer.from(raw ?? '', 'base64url').toString('utf8');
  const headersOf = (mime: string) => mime.split('\r\n\r\n')[0]?.split('\r\n') ?? [];
  function expectValid(action: string, output: unknown) {
    const check = compile(findAction('gmail', action)?.output ?? {});
    expect({ valid: check(output), errors: check.errors ?? null }).toEqual({ valid: true, errors: null });
  }

  describe('live', () => {
    it('create_draft: drafts.create with the raw RFC 2822 message under `message`; nothing is sent; asks for gmail.compose', async () => {
      const before = google.sent.length;
      const res = await live('create_draft', { to: ['team@acme.com'], subject: 'Q2 offsite', body: 'Agenda to follow' });
      expect(res).toMatchObject({
        outcome: 'complete',
        output: { id: 'r-1', message_id: 'd1', to: ['team@acme.com'], subject: 'Q2 offsite' },
      });
      expectValid('create_draft', res.output);
      const req = google.requests.find((r) => r.path === '/gmail/v1/users/me/drafts');
      expect(req?.method).toBe('POST');
      expect(Object.keys(req?.body as object)).toEqual(['message']);
      const mime = decoded(google.drafts[0]?.raw);
      expect(headersOf(mime)).toEqual([
        'To: team@acme.com',
        'Subject: Q2 offsite',
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset="UTF-8"',
        'Content-Transfer-Encoding: 8bit',
      ]);
      expect(mime.endsWith('\r\n\r\nAgenda to follow')).toBe(true);
      expect(google.sent.length).toBe(before);
      expect(vault.requests[0]?.scopes).toEqual(['https://www.googleapis.com/auth/gmail.compose']);
    });

    it('create_draft without recipients: a draft with no To header', async () => {
      const res = await live('create_draft', { subject: 'Notes', body: 'later' });
      expect(res.output).toMatchObject({ to: [], subject: 'Notes' });
      expect(decoded(google.drafts.at(-1)?.raw).startsWith('Subject: Notes\r\n')).toBe(true);
    });

    it('reply_to_email: reads the original’s headers (format=metadata), then sends in its thread with In-Reply-To, References and "Re: "', async () => {
      const res = await live('reply_to_email', { message_id: 'm1', body: 'Paid today.' });
      expect(res).toMatchObject({
        outcome: 'complete',
        output: { thread_id: 't1', to: ['alice@example.com'], subject: 'Re: Invoice March' },
      });
      expectValid('reply_to_email', res.output);
      const get = google.requests.find(
        (r) => r.path === '/gmail/v1/users/me/messages/m1' && r.query.getAll('metadataHeaders').includes('Message-ID'),
      );
      expect(get?.query.get('format')).toBe('metadata');
      expect(get?.query.getAll('metadataHeaders')).toEqual(
        expect.arrayContaining(['Message-ID', 'References', 'Subject', 'From', 'Reply-To', 'To', 'Cc']),
      );
      const send = google.sent.at(-1);
      expect(send?.threadId).toBe('t1');
      const mime = decoded(send?.raw);
      expect(headersOf(mime)).toEqual(
        expect.arrayContaining([
          'To: alice@example.com',
          'Subject: Re: Invoice March',
          'In-Reply-To: <CAinvoice-1@mail.example.com>',
          'References: <CAorder-0@mail.example.com> <CAinvoice-1@mail.example.com>',
        ]),
      );
      expect(headersOf(mime).some((l) => l.startsWith('Cc:'))).toBe(false);
      expect(mime.endsWith('\r\n\r\nPaid today.')).toBe(true);
      expect(vault.requests).toHaveLength(1);
      expect(vault.requests[0]?.scopes).toEqual([
        'https://www.googleapis.com/auth/gmail.send',
        'https://www.googleapis.com/auth/gmail.readonly',
      ]);
    });

    it('reply_to_email with reply_all: everyone on the message but the user; Reply-To wins over From', async () => {
      const all = await live('reply_to_email', { message_id: 'm1', body: 'Thanks all', reply_all: true });
      expect(all.output).toMatchObject({ to: ['alice@example.com'] });
      expect(headersOf(decoded(google.sent.at(-1)?.raw))).toEqual(
        expect.arrayContaining(['To: alice@example.com', 'Cc: carol@example.com, dave@example.com']),
      );
      const bob = await live('reply_to_email', { message_id: 'm2', body: 'Yes' });
      expect(bob.output).toMatchObject({ thread_id: 't2', to: ['bob@home.example.org'], subject: 'Re: Lunch?' });
      // No References on the original: the chain starts with its Message-ID.
      expect(headersOf(decoded(google.sent.at(-1)?.raw))).toEqual(
        expect.arrayContaining(['In-Reply-To: <CAlunch-2@mail.example.com>', 'References: <CAlunch-2@mail.example.com>']),
      );
    });

    it('reply_to_email to an unknown message: step_failed not found, nothing sent', async () => {
      const before = google.sent.length;
      const res = await live('reply_to_email', { message_id: 'nope', body: 'x' });
      expect(res).toMatchObject({ outcome: 'failed', error: { code: 'step_failed', recoverable: false } });
      expect(res.error?.message).toMatch(/Gmail: not found/);
      expect(google.sent.length).toBe(before);
    });

    it('reply_to_email: 403 on send is permission_denied naming both scopes', async () => {
      google.fail({ kind: 'insufficient_scope' }, 1, /\/messages\/send$/);
      const res = await live('reply_to_email', { message_id: 'm2', body: 'x' });
      expect(res).toMatchObject({ outcome: 'failed', error: { code: 'permission_denied', recoverable: true } });
      expect(res.error?.suggestion).toContain('gmail.send, https://www.googleapis.com/auth/gmail.readonly');
    });

    it('search_email: after/before become Gmail’s after:YYYY/MM/DD before:YYYY/MM/DD; query is optional', async () => {
      const res = await live('search_email', { after: '2025-03-12', before: '2025-03-13' });
      expect(res).toMatchObject({ outcome: 'complete', output: { count: 1, items: [{ id: 'm2', subject: 'Lunch?' }] } });
      expectValid('search_email', res.output);
      const list = google.requests.filter((r) => r.path === '/gmail/v1/users/me/messages').at(-1);
      expect(list?.query.get('q')).toBe('after:2025/03/12 before:2025/03/13');
      const both = await live('search_email', { query: 'invoice', before: '2025-03-12' });
      expect(both.output).toMatchObject({ count: 1, items: [{ id: 'm1' }] });
      expect(
        google.requests
          .filter((r) => r.path === '/gmail/v1/users/me/messages')
          .at(-1)
          ?.query.get('q'),
      ).toBe('invoice before:2025/03/12');
    });

    it('search_email with none of query/after/before, or a malformed day, is refused before any call', async () => {
      const before = google.requests.length;
      const none = await live('search_email', { limit: 5 });
      expect(none).toMatchObject({ outcome: 'failed', error: { code: 'step_failed' } });
      const bad = await live('search_email', { after: '12/03/2025' });
      expect(bad).toMatchObject({ outcome: 'failed', error: { code: 'step_failed' } });
      expect(bad.error?.message).toMatch(/after/);
      expect(google.requests.length).toBe(before);
    });
  });

  describe('sandbox', () => {
    it('a draft is stored, not sent: search does not find it; the same step stores it once', async () => {
      const u = { user_id: 'u_draft' };
      const step = h.step({
        ...u,
        tool: 'gmail',
        action: 'create_draft',
        input: { to: ['team@acme.com'], subject: 'Offsite', body: 'Agenda to follow' },
      });
      const d = await runStep(step, h.deps());
      expect(d.output).toMatchObject({ to: ['team@acme.com'], subject: 'Offsite' });
      expectValid('create_draft', d.output);
      await h.mongo.collection<{ _id: string }>('step_runs').deleteOne({ _id: step.idempotency_key });
      const again = await runStep(step, h.deps());
      expect(again.output).toEqual(d.output);
      const found = await sandbox({ ...u, action: 'search_email', input: { query: 'offsite' } });
      expect(found.output).toEqual({ items: [], count: 0 });
    });

    it('a reply lands in the thread of the original, to its sender, with "Re: "; reply_all copies the others', async () => {
      const u = { user_id: 'u_reply' };
      const sent = await sandbox({
        ...u,
        action: 'send_email',
        input: { to: ['bob@example.com'], cc: ['carol@example.com'], subject: 'Plan', body: 'v1' },
      });
      const r = await sandbox({ ...u, action: 'reply_to_email', input: { message_id: 'msg_welcome', body: 'Thanks' } });
      expect(r.output).toMatchObject({ thread_id: 'thr_welcome', to: ['sandbox@example.com'], subject: 'Re: Welcome to the sandbox' });
      expectValid('reply_to_email', r.output);
      // Replying to one's own message goes to its recipients.
      const own = await sandbox({
        ...u,
        action: 'reply_to_email',
        input: { message_id: sent.output?.['id'], body: 'v2', reply_all: true },
      });
      expect(own.output).toMatchObject({ thread_id: sent.output?.['thread_id'], to: ['bob@example.com'], subject: 'Re: Plan' });
      const thread = await sandbox({ ...u, action: 'search_email', input: { query: 'subject:plan' } });
      expect((thread.output?.['items'] as { thread_id: string }[]).map((m) => m.thread_id)).toEqual([
        sent.output?.['thread_id'],
        sent.output?.['thread_id'],
      ]);
      const missing = await sandbox({ ...u, action: 'reply_to_email', input: { message_id: 'msg_nope', body: 'x' } });
      expect(missing).toMatchObject({ outcome: 'failed', error: { code: 'step_failed', message: expect.stringContaining('not found') } });
    });

    it('search by date: after is inclusive, before exclusive', async () => {
      const u = { user_id: 'u_dates' };
      await sandbox({ ...u, action: 'send_email', input: { to: ['x@example.com'], subject: 'Today', body: 'b' } });
      const today = new Date().toISOString().slice(0, 10);
      const onlyWelcome = await sandbox({ ...u, action: 'search_email', input: { after: '2024-01-01', before: '2024-01-02' } });
      expect(onlyWelcome.output).toMatchObject({ count: 1, items: [{ id: 'msg_welcome' }] });
      const fromToday = await sandbox({ ...u, action: 'search_email', input: { after: today } });
      expect(fromToday.output).toMatchObject({ count: 1, items: [{ subject: 'Today' }] });
      expectValid('search_email', fromToday.output);
      const beforeToday = await sandbox({ ...u, action: 'search_email', input: { before: today } });
      expect(beforeToday.output).toMatchObject({ count: 1, items: [{ id: 'msg_welcome' }] });
    });
  });
});
