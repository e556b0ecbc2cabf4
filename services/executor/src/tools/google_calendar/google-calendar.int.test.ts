import { findAction } from '@tes/catalog';
import { compile } from '@tes/contracts';
import { runStep } from '../../domain/run-step.use-case.js';
import { startFakeGoogle, type FakeGoogle } from '../../test-support/fake-google.js';
import { startFakeVault, type FakeVault } from '../../test-support/fake-vault.js';
import { startHarness, type Harness } from '../../test-support/harness.js';

/** Calendar's time zones, recurrences and free/busy: live against the fake Calendar, and in the sandbox. */
describe('google_calendar: time_zone, recurrence, check_availability', () => {
  let h: Harness;
  let vault: FakeVault;
  let google: FakeGoogle;

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
      h.step({ tool: 'google_calendar', action, input, environment: 'live' }),
      h.deps({ providerUrls: { ...h.deps().settings.providerUrls, google_calendar: google.calendarUrl } }),
    );
  const sandbox = (user: string, action: string, input: Record<string, unknown>) =>
    runStep(h.step({ tool: 'google_calendar', action, input, user_id: user }), h.deps());
  function expectValid(action: string, output: unknown) {
    const check = compile(findAction('google_calendar', action)?.output ?? {});
    expect({ valid: check(output), errors: check.errors ?? null }).toEqual({ valid: true, errors: null });
  }

  describe('live', () => {
    it('an event in Europe/Berlin with a weekly recurrence: start/end {dateTime in the zone, timeZone} and recurrence, as Google documents', async () => {
      const res = await live('create_event', {
        summary: 'Standup',
        start: '2030-01-07T09:00:00Z',
        end: '2030-01-07T09:15:00Z',
        time_zone: 'Europe/Berlin',
        recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=MO'],
      });
      expect(res).toMatchObject({
        outcome: 'complete',
        output: {
          summary: 'Standup',
          start: '2030-01-07T09:00:00.000Z',
          end: '2030-01-07T09:15:00.000Z',
          time_zone: 'Europe/Berlin',
          recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=MO'],
        },
      });
      expectValid('create_event', res.output);
      const req = google.requests.find((r) => r.method === 'POST' && r.path === '/calendar/v3/calendars/primary/events');
      expect(req?.body).toMatchObject({
        summary: 'Standup',
        start: { dateTime: '2030-01-07T10:00:00+01:00', timeZone: 'Europe/Berlin' },
        end: { dateTime: '2030-01-07T10:15:00+01:00', timeZone: 'Europe/Berlin' },
        recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=MO'],
      });
      expect(req?.query.get('sendUpdates')).toBe('all');
    });

    it('a recurrence without time_zone is sent with timeZone UTC (Google refuses a recurring event without one)', async () => {
      const res = await live('create_event', { summary: 'Daily', start: '2030-02-01T08:00:00Z', recurrence: ['RRULE:FREQ=DAILY;COUNT=3'] });
      expect(res.outcome).toBe('complete');
      const req = google.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/events')).at(-1);
      expect(req?.body).toMatchObject({
        start: { dateTime: '2030-02-01T08:00:00Z', timeZone: 'UTC' },
        recurrence: ['RRULE:FREQ=DAILY;COUNT=3'],
      });
    });

    it('a one-off event without time_zone keeps the instant as given and sends no timeZone', async () => {
      await live('create_event', { summary: 'Once', start: '2030-03-01T10:00:00-08:00' });
      const req = google.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/events')).at(-1);
      expect(req?.body).toMatchObject({ start: { dateTime: '2030-03-01T10:00:00-08:00' } });
      expect((req?.body as { start: object }).start).not.toHaveProperty('timeZone');
    });

    it('an unknown time zone fails before any call, with a suggestion', async () => {
      const before = google.requests.length;
      const res = await live('create_event', { summary: 'x', start: '2030-01-07T09:00:00Z', time_zone: 'Mars/Olympus' });
      expect(res).toMatchObject({
        outcome: 'failed',
        error: { code: 'step_failed', message: expect.stringContaining('Mars/Olympus'), suggestion: expect.stringContaining('IANA') },
      });
      expect(google.requests.length).toBe(before);
    });

    it('a recurrence line that is not RFC 5545 RRULE/EXRULE/RDATE/EXDATE is refused by the schema', async () => {
      const res = await live('create_event', { summary: 'x', start: '2030-01-07T09:00:00Z', recurrence: ['every monday'] });
      expect(res).toMatchObject({ outcome: 'failed', error: { code: 'step_failed', message: expect.stringContaining('recurrence') } });
    });

    it('check_availability: POST /freeBusy with timeMin, timeMax, items; busy periods merged and clipped; free when none', async () => {
      await live('create_event', { summary: 'A', start: '2030-04-01T10:00:00Z', end: '2030-04-01T11:00:00Z' });
      await live('create_event', { summary: 'B', start: '2030-04-01T10:30:00Z', end: '2030-04-01T12:00:00Z' });
      const busy = await live('check_availability', { time_min: '2030-04-01T09:00:00Z', time_max: '2030-04-01T11:30:00Z' });
      expect(busy).toMatchObject({
        outcome: 'complete',
        output: {
          free: false,
          busy: [{ start: '2030-04-01T10:00:00.000Z', end: '2030-04-01T11:30:00.000Z' }],
          time_min: '2030-04-01T09:00:00.000Z',
          time_max: '2030-04-01T11:30:00.000Z',
        },
      });
      expectValid('check_availability', busy.output);
      const req = google.requests.filter((r) => r.path === '/calendar/v3/freeBusy').at(-1);
      expect(req?.method).toBe('POST');
      expect(req?.body).toEqual({ timeMin: '2030-04-01T09:00:00Z', timeMax: '2030-04-01T11:30:00Z', items: [{ id: 'primary' }] });
      expect(vault.requests.at(-1)?.scopes).toEqual(['https://www.googleapis.com/auth/calendar.events.freebusy']);
      const free = await live('check_availability', { time_min: '2030-04-01T14:00:00+02:00', time_max: '2030-04-01T16:00:00+02:00' });
      expect(free.output).toEqual({ free: true, busy: [], time_min: '2030-04-01T12:00:00.000Z', time_max: '2030-04-01T14:00:00.000Z' });
    });

    it('check_availability of a calendar Google cannot read: step_failed naming it and the reason', async () => {
      const res = await live('check_availability', {
        time_min: '2030-04-01T09:00:00Z',
        time_max: '2030-04-01T10:00:00Z',
        calendar_ids: ['primary', 'stranger@example.com'],
      });
      expect(res).toMatchObject({ outcome: 'failed', error: { code: 'step_failed', recoverable: false, suggestion: expect.any(String) } });
      expect(res.error?.message).toMatch(/"stranger@example.com" \(notFound\)/);
    });

    it('check_availability: 403 is permission_denied naming the free/busy scope; 503 three times is service_unavailable', async () => {
      google.fail({ kind: 'insufficient_scope' }, 1, /\/freeBusy$/);
      const denied = await live('check_availability', { time_min: '2030-04-01T09:00:00Z', time_max: '2030-04-01T10:00:00Z' });
      expect(denied).toMatchObject({ outcome: 'failed', error: { code: 'permission_denied', recoverable: true } });
      expect(denied.error?.suggestion).toContain('calendar.events.freebusy');
      google.fail({ kind: 'unavailable', status: 503 }, 3, /\/freeBusy$/);
      const down = await live('check_availability', { time_min: '2030-04-01T09:00:00Z', time_max: '2030-04-01T10:00:00Z' });
      expect(down).toMatchObject({
        outcome: 'failed',
        error: { code: 'service_unavailable', message: 'Google Calendar answered HTTP 503 after 3 attempts' },
      });
    });
  });

  describe('sandbox', () => {
    it('a weekly event in Europe/Berlin is listed at each occurrence, at 10:00 local across the change to summer time', async () => {
      const user = 'u_weekly';
      const ev = await sandbox(user, 'create_event', {
        summary: 'Standup',
        start: '2030-03-18T10:00:00+01:00',
        end: '2030-03-18T10:30:00+01:00',
        time_zone: 'Europe/Berlin',
        recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=MO'],
      });
      expect(ev.output).toMatchObject({
        start: '2030-03-18T09:00:00.000Z',
        time_zone: 'Europe/Berlin',
        recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=MO'],
      });
      expectValid('create_event', ev.output);
      const list = await sandbox(user, 'list_events', { time_min: '2030-03-17T00:00:00Z', time_max: '2030-04-08T00:00:00Z' });
      expectValid('list_events', list.output);
      // Europe/Berlin moves to UTC+2 on 2030-03-31: 10:00 local is 09:00Z before, 08:00Z after.
      expect((list.output?.['items'] as { start: string }[]).map((e) => e.start)).toEqual([
        '2030-03-18T09:00:00.000Z',
        '2030-03-25T09:00:00.000Z',
        '2030-04-01T08:00:00.000Z',
      ]);
      const ids = (list.output?.['items'] as { id: string }[]).map((e) => e.id);
      expect(ids[2]).toBe(`${String(ev.output?.['id'])}_20300401T080000Z`);
    });

    it('check_availability reads the sandbox’s events, recurring ones included', async () => {
      const user = 'u_avail';
      await sandbox(user, 'create_event', {
        summary: 'Weekly',
        start: '2030-05-06T09:00:00-07:00',
        time_zone: 'America/Los_Angeles',
        recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=4'],
      });
      await sandbox(user, 'create_event', { summary: 'Lunch', start: '2030-05-13T19:00:00Z' });
      const monday = await sandbox(user, 'check_availability', { time_min: '2030-05-13T15:00:00Z', time_max: '2030-05-13T21:00:00Z' });
      expect(monday.output).toEqual({
        free: false,
        busy: [
          { start: '2030-05-13T16:00:00.000Z', end: '2030-05-13T17:00:00.000Z' },
          { start: '2030-05-13T19:00:00.000Z', end: '2030-05-13T20:00:00.000Z' },
        ],
        time_min: '2030-05-13T15:00:00.000Z',
        time_max: '2030-05-13T21:00:00.000Z',
      });
      expectValid('check_availability', monday.output);
      // COUNT=4 ends the series on 2030-05-27.
      const after = await sandbox(user, 'check_availability', { time_min: '2030-06-03T15:00:00Z', time_max: '2030-06-03T18:00:00Z' });
      expect(after.output).toMatchObject({ free: true, busy: [] });
      const otherUser = await sandbox('u_avail_other', 'check_availability', {
        time_min: '2030-05-13T15:00:00Z',
        time_max: '2030-05-13T21:00:00Z',
      });
      expect(otherUser.output).toMatchObject({ free: true });
    });
  });
});
