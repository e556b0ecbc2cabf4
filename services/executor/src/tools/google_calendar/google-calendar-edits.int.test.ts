import { findAction } from '@tes/catalog';
import { compile, type StepRun } from '@tes/contracts';
import { runStep } from '../../domain/run-step.use-case.js';
import { startFakeGoogle, type FakeGoogle } from '../../test-support/fake-google.js';
import { startFakeVault, type FakeVault } from '../../test-support/fake-vault.js';
import { startHarness, type Harness } from '../../test-support/harness.js';

/** update_event, delete_event and create_all_day_event: live against the fake Calendar, and in the sandbox. */
describe('google_calendar: update_event, delete_event, create_all_day_event', () => {
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

  const liveDeps = () => h.deps({ providerUrls: { ...h.deps().settings.providerUrls, google_calendar: google.calendarUrl } });
  const live = (action: string, input: Record<string, unknown>) =>
    runStep(h.step({ tool: 'google_calendar', action, input, environment: 'live' }), liveDeps());
  const sandbox = (user: string, action: string, input: Record<string, unknown>) =>
    runStep(h.step({ tool: 'google_calendar', action, input, user_id: user }), h.deps());
  /** The same step again after a crash between the provider's answer and the record (the record is lost). */
  const rerun = async (step: StepRun, deps = liveDeps()) => {
    await h.mongo.collection('step_runs').deleteOne({ _id: step.idempotency_key } as never);
    return runStep(step, deps);
  };
  const calls = (method: string, pattern: RegExp) => google.requests.filter((r) => r.method === method && pattern.test(r.path));
  function expectValid(action: string, output: unknown) {
    const check = compile(findAction('google_calendar', action)?.output ?? {});
    expect({ valid: check(output), errors: check.errors ?? null }).toEqual({ valid: true, errors: null });
  }
  const idOf = (res: { output?: Record<string, unknown> | undefined }) => String(res.output?.['id']);

  describe('live', () => {
    it('update_event with only a new start: GET, then PATCH start and end in the event’s zone, keeping its duration', async () => {
      const ev = await live('create_event', {
        summary: 'Review',
        start: '2031-01-06T09:00:00Z',
        end: '2031-01-06T09:45:00Z',
        time_zone: 'Europe/Berlin',
        recurrence: ['RRULE:FREQ=WEEKLY'],
      });
      const id = idOf(ev);
      vault.requests.length = 0;
      const res = await live('update_event', { event_id: id, start: '2031-01-06T13:00:00Z' });
      expect(res).toMatchObject({
        outcome: 'complete',
        output: { id, summary: 'Review', start: '2031-01-06T13:00:00.000Z', end: '2031-01-06T13:45:00.000Z', time_zone: 'Europe/Berlin' },
      });
      expectValid('update_event', res.output);
      const path = `/calendar/v3/calendars/primary/events/${id}`;
      expect(google.requests.slice(-2).map((r) => `${r.method} ${r.path}`)).toEqual([`GET ${path}`, `PATCH ${path}`]);
      const patch = google.requests.at(-1);
      expect(patch?.body).toEqual({
        start: { dateTime: '2031-01-06T14:00:00+01:00', timeZone: 'Europe/Berlin' },
        end: { dateTime: '2031-01-06T14:45:00+01:00', timeZone: 'Europe/Berlin' },
      });
      expect(patch?.query.get('sendUpdates')).toBe('all');
      expect(vault.requests.map((q) => q.scopes)).toEqual([['https://www.googleapis.com/auth/calendar.events']]);
    });

    it('update_event of the title and attendees only sends them (attendees replace the list), no times', async () => {
      const ev = await live('create_event', { summary: 'Sync', start: '2031-02-03T10:00:00Z', attendees: ['a@example.com'] });
      const res = await live('update_event', { event_id: idOf(ev), summary: 'Sync (moved)', attendees: ['b@example.com'] });
      expect(res.output).toMatchObject({ summary: 'Sync (moved)', attendees: ['b@example.com'], start: '2031-02-03T10:00:00.000Z' });
      expect(calls('PATCH', /\/events\//).at(-1)?.body).toEqual({ summary: 'Sync (moved)', attendees: [{ email: 'b@example.com' }] });
    });

    it('update_event: an unknown event is step_failed naming it, with what to check; no PATCH is sent', async () => {
      const before = calls('PATCH', /./).length;
      const res = await live('update_event', { event_id: 'nosuchevent', calendar_id: 'team@example.com', summary: 'x' });
      expect(res).toMatchObject({
        outcome: 'failed',
        error: {
          code: 'step_failed',
          recoverable: false,
          message: 'Google Calendar has no event "nosuchevent" in calendar "team@example.com"',
          suggestion: expect.stringContaining('list_events'),
        },
      });
      expect(calls('GET', /\/calendars\/team%40example.com\/events\/nosuchevent$/)).toHaveLength(1);
      expect(calls('PATCH', /./).length).toBe(before);
    });

    it('update_event refuses an end before the start before any PATCH, and a request that changes nothing by its schema', async () => {
      const ev = await live('create_event', { summary: 'Short', start: '2031-02-04T10:00:00Z' });
      const backwards = await live('update_event', { event_id: idOf(ev), end: '2031-02-04T09:00:00Z' });
      expect(backwards).toMatchObject({
        outcome: 'failed',
        error: { code: 'step_failed', message: expect.stringContaining('before it starts') },
      });
      const nothing = await live('update_event', { event_id: idOf(ev) });
      expect(nothing).toMatchObject({
        outcome: 'failed',
        error: { code: 'step_failed', suggestion: expect.stringMatching(/at least one of/) },
      });
    });

    it('delete_event: DELETE with sendUpdates; gone from list_events and free/busy; deleted again (410) is already_deleted; unknown (404) fails', async () => {
      const ev = await live('create_event', { summary: 'Gone', start: '2031-03-03T10:00:00Z' });
      const id = idOf(ev);
      const quiet = await live('delete_event', { event_id: id, notify_attendees: false });
      expect(quiet).toMatchObject({ outcome: 'complete', output: { id, deleted: true } });
      expect(quiet.output).not.toHaveProperty('already_deleted');
      expectValid('delete_event', quiet.output);
      expect(
        calls('DELETE', new RegExp(`/events/${id}$`))
          .at(-1)
          ?.query.get('sendUpdates'),
      ).toBe('none');
      const window = { time_min: '2031-03-03T09:00:00Z', time_max: '2031-03-03T12:00:00Z' };
      expect((await live('list_events', window)).output).toMatchObject({ count: 0 });
      expect((await live('check_availability', window)).output).toMatchObject({ free: true });
      const again = await live('delete_event', { event_id: id });
      expect(again).toMatchObject({ outcome: 'complete', output: { id, deleted: true, already_deleted: true } });
      expect(
        calls('DELETE', new RegExp(`/events/${id}$`))
          .at(-1)
          ?.query.get('sendUpdates'),
      ).toBe('all');
      const moved = await live('update_event', { event_id: id, summary: 'back?' });
      expect(moved).toMatchObject({ outcome: 'failed', error: { message: expect.stringContaining('(it was deleted)') } });
      const unknown = await live('delete_event', { event_id: 'neverexisted' });
      expect(unknown).toMatchObject({
        outcome: 'failed',
        error: { code: 'step_failed', message: expect.stringContaining('"neverexisted"') },
      });
    });

    it('create_all_day_event: start.date and an exclusive end.date; the output counts the last day in; run again it answers the same event', async () => {
      const step = h.step({
        tool: 'google_calendar',
        action: 'create_all_day_event',
        input: { summary: 'Offsite', start_date: '2031-04-28', end_date: '2031-05-01', attendees: ['team@example.com'] },
        environment: 'live',
      });
      const res = await runStep(step, liveDeps());
      expect(res).toMatchObject({
        outcome: 'complete',
        output: {
          summary: 'Offsite',
          all_day: true,
          start_date: '2031-04-28',
          end_date: '2031-05-01',
          start: '2031-04-28T00:00:00.000Z',
          end: '2031-05-02T00:00:00.000Z',
          attendees: ['team@example.com'],
        },
      });
      expectValid('create_all_day_event', res?.output);
      const post = calls('POST', /\/calendars\/primary\/events$/).at(-1);
      expect(post?.body).toMatchObject({ start: { date: '2031-04-28' }, end: { date: '2031-05-02' } });
      expect(post?.body).not.toHaveProperty('eventType');
      const again = await rerun(step);
      expect(again?.output).toEqual(res?.output);
      expect([...google.events.values()].filter((e) => e.summary === 'Offsite')).toHaveLength(1);
      // list_events shows an all-day event with its days.
      const list = await live('list_events', { time_min: '2031-04-30T00:00:00Z', time_max: '2031-04-30T23:00:00Z' });
      expect(list.output?.['items']).toEqual([
        expect.objectContaining({ all_day: true, start_date: '2031-04-28', end_date: '2031-05-01' }),
      ]);
    });

    it('create_all_day_event out_of_office: eventType outOfOffice with timed midnights in time_zone (Google takes no all-day OOO); busy then', async () => {
      const res = await live('create_all_day_event', {
        summary: 'Vacation',
        start_date: '2031-07-14',
        end_date: '2031-07-15',
        out_of_office: true,
        time_zone: 'America/New_York',
      });
      expect(res).toMatchObject({
        outcome: 'complete',
        output: {
          all_day: true,
          out_of_office: true,
          start_date: '2031-07-14',
          end_date: '2031-07-15',
          start: '2031-07-14T04:00:00.000Z',
          end: '2031-07-16T04:00:00.000Z',
          time_zone: 'America/New_York',
        },
      });
      expectValid('create_all_day_event', res.output);
      expect(calls('POST', /\/events$/).at(-1)?.body).toMatchObject({
        eventType: 'outOfOffice',
        start: { dateTime: '2031-07-14T00:00:00-04:00', timeZone: 'America/New_York' },
        end: { dateTime: '2031-07-16T00:00:00-04:00', timeZone: 'America/New_York' },
        outOfOfficeProperties: { autoDeclineMode: 'declineOnlyNewConflictingInvitations' },
      });
      const busy = await live('check_availability', { time_min: '2031-07-15T12:00:00Z', time_max: '2031-07-15T13:00:00Z' });
      expect(busy.output).toMatchObject({ free: false });
    });

    it('create_all_day_event refuses, before any call: out of office with attendees, end_date before start_date, a day that does not exist', async () => {
      const before = google.requests.length;
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ out_of_office: true, attendees: ['a@example.com'] }, /cannot have attendees/],
        [{ end_date: '2031-07-13' }, /end_date 2031-07-13 is before start_date 2031-07-14/],
        [{ start_date: '2031-02-30', end_date: '2031-03-01' }, /start_date "2031-02-30" is not a date/],
      ];
      for (const [extra, message] of cases) {
        const res = await live('create_all_day_event', { summary: 'x', start_date: '2031-07-14', ...extra });
        expect(res).toMatchObject({
          outcome: 'failed',
          error: { code: 'step_failed', message: expect.stringMatching(message), suggestion: expect.any(String) },
        });
      }
      expect(google.requests.length).toBe(before);
    });
  });

  describe('sandbox', () => {
    it('update_event moves an event: list_events and check_availability see it at its new time, with its duration', async () => {
      const user = 'u_move';
      const ev = await sandbox(user, 'create_event', { summary: 'Standup', start: '2031-05-05T09:00:00Z', end: '2031-05-05T09:30:00Z' });
      const moved = await sandbox(user, 'update_event', {
        event_id: idOf(ev),
        start: '2031-05-06T15:00:00+02:00',
        summary: 'Standup (Tue)',
      });
      expect(moved.output).toMatchObject({
        id: idOf(ev),
        summary: 'Standup (Tue)',
        start: '2031-05-06T13:00:00.000Z',
        end: '2031-05-06T13:30:00.000Z',
      });
      expectValid('update_event', moved.output);
      const list = await sandbox(user, 'list_events', { time_min: '2031-05-05T00:00:00Z', time_max: '2031-05-07T00:00:00Z' });
      expect((list.output?.['items'] as { start: string }[]).map((e) => e.start)).toEqual(['2031-05-06T13:00:00.000Z']);
      const old = await sandbox(user, 'check_availability', { time_min: '2031-05-05T08:00:00Z', time_max: '2031-05-05T10:00:00Z' });
      expect(old.output).toMatchObject({ free: true });
      const missing = await sandbox(user, 'update_event', { event_id: 'nosuchevent', summary: 'x' });
      expect(missing).toMatchObject({
        outcome: 'failed',
        error: { code: 'step_failed', message: expect.stringContaining('"nosuchevent"') },
      });
    });

    it('update_event of one occurrence of a recurring event says the sandbox changes whole series', async () => {
      const user = 'u_series';
      const ev = await sandbox(user, 'create_event', {
        summary: 'Weekly',
        start: '2031-05-05T09:00:00Z',
        recurrence: ['RRULE:FREQ=WEEKLY'],
      });
      const res = await sandbox(user, 'update_event', { event_id: `${idOf(ev)}_20310512T090000Z`, summary: 'x' });
      expect(res).toMatchObject({ outcome: 'failed', error: { code: 'step_failed', suggestion: expect.stringContaining(idOf(ev)) } });
    });

    it('delete_event: gone from list_events and check_availability; the same step again answers as before, another step already_deleted', async () => {
      const user = 'u_delete';
      const ev = await sandbox(user, 'create_event', { summary: 'Lunch', start: '2031-06-02T12:00:00Z' });
      const step = h.step({ tool: 'google_calendar', action: 'delete_event', input: { event_id: idOf(ev) }, user_id: user });
      const res = await runStep(step, h.deps());
      expect(res?.output).toEqual({ id: idOf(ev), deleted: true });
      expectValid('delete_event', res?.output);
      expect((await rerun(step, h.deps()))?.output).toEqual({ id: idOf(ev), deleted: true });
      const window = { time_min: '2031-06-02T11:00:00Z', time_max: '2031-06-02T14:00:00Z' };
      expect((await sandbox(user, 'list_events', window)).output).toEqual({ items: [], count: 0 });
      expect((await sandbox(user, 'check_availability', window)).output).toMatchObject({ free: true });
      expect((await sandbox(user, 'delete_event', { event_id: idOf(ev) })).output).toEqual({
        id: idOf(ev),
        deleted: true,
        already_deleted: true,
      });
      const moved = await sandbox(user, 'update_event', { event_id: idOf(ev), start: '2031-06-03T12:00:00Z' });
      expect(moved).toMatchObject({ outcome: 'failed', error: { message: expect.stringContaining('(it was deleted)') } });
    });

    it('create_all_day_event: midnight to midnight in time_zone over the days given, busy all day, listed with its days', async () => {
      const user = 'u_allday';
      const res = await sandbox(user, 'create_all_day_event', {
        summary: 'Conference',
        start_date: '2031-09-01',
        end_date: '2031-09-02',
        time_zone: 'Europe/Paris',
        out_of_office: true,
      });
      expect(res.output).toMatchObject({
        all_day: true,
        out_of_office: true,
        start_date: '2031-09-01',
        end_date: '2031-09-02',
        start: '2031-08-31T22:00:00.000Z',
        end: '2031-09-02T22:00:00.000Z',
        time_zone: 'Europe/Paris',
        attendees: [],
      });
      expectValid('create_all_day_event', res.output);
      const day2 = await sandbox(user, 'check_availability', { time_min: '2031-09-02T06:00:00Z', time_max: '2031-09-03T06:00:00Z' });
      expect(day2.output).toMatchObject({ free: false, busy: [{ start: '2031-09-02T06:00:00.000Z', end: '2031-09-02T22:00:00.000Z' }] });
      const list = await sandbox(user, 'list_events', { time_min: '2031-09-01T00:00:00Z', time_max: '2031-09-04T00:00:00Z' });
      expect(list.output?.['items']).toEqual([expect.objectContaining({ summary: 'Conference', all_day: true, end_date: '2031-09-02' })]);
      expectValid('list_events', list.output);
      const one = await sandbox(user, 'create_all_day_event', { summary: 'Holiday', start_date: '2031-12-25' });
      expect(one.output).toMatchObject({ start: '2031-12-25T00:00:00.000Z', end: '2031-12-26T00:00:00.000Z', end_date: '2031-12-25' });
    });
  });
});
