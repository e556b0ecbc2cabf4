import { dateTime, email, limit, listOf, str, type ToolDef } from '../../types.js';

/** A day as YYYY-MM-DD (the executor checks that it exists). */
const date = str({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' });

export const calendarEvent = {
  type: 'object',
  properties: {
    id: str(),
    summary: str(),
    description: str(),
    start: dateTime,
    end: dateTime,
    attendees: { type: 'array', items: str() },
    url: str(),
    time_zone: str(),
    recurrence: { type: 'array', items: str() },
    /** An all-day event: its first and last day (inclusive); `start`/`end` are midnight before and after them. */
    all_day: { type: 'boolean' },
    start_date: date,
    end_date: date,
    out_of_office: { type: 'boolean' },
  },
  required: ['id', 'summary', 'start', 'end', 'attendees', 'url'],
} as const;

const calendarId = str({ minLength: 1, maxLength: 200, default: 'primary' });
/** As list_events and create_event answer it; an occurrence of a recurring event is `<id>_<start, UTC basic format>`. */
const eventId = str({ minLength: 1, maxLength: 1024, description: 'Event id' });
const attendees = { type: 'array', items: email, maxItems: 100 } as const;
/** An IANA zone name (Europe/Berlin, America/Los_Angeles, UTC); the executor checks it with Intl. */
const timeZone = str({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+)*$' });
/** RFC 5545 lines as Google takes them (no DTSTART/DTEND): RRULE:FREQ=WEEKLY;BYDAY=MO, EXDATE…, RDATE…. */
const recurrenceLine = str({ maxLength: 1000, pattern: '^(?:RRULE|EXRULE|RDATE|EXDATE)[:;]' });

export const GOOGLE_CALENDAR_TOOL: ToolDef = {
  name: 'google_calendar',
  description: 'Google Calendar events of the user.',
  service: 'google_calendar',
  keywords: [
    'calendar',
    'event',
    'events',
    'meeting',
    'meetings',
    'appointment',
    'appointments',
    'agenda',
    'invite',
    'schedule',
    'book',
    'call',
    'sync',
    'standup',
    'gcal',
  ],
  actions: [
    {
      name: 'list_events',
      description: 'Lists events between two instants (default: the next 7 days), earliest first.',
      keywords: ['list', 'show', 'find', 'get', 'what', 'which', 'upcoming', 'search'],
      input: {
        type: 'object',
        properties: {
          calendar_id: calendarId,
          time_min: dateTime,
          time_max: dateTime,
          query: str({ maxLength: 200 }),
          limit: limit(250, 25),
        },
        additionalProperties: false,
      },
      output: listOf(calendarEvent),
      // calendar.events allows events.list too: one consent serves both actions.
      scopes: ['https://www.googleapis.com/auth/calendar.events'],
      side_effect: 'read',
    },
    {
      name: 'create_event',
      description:
        'Creates an event; `end` defaults to one hour after `start`. `time_zone` is the zone the event belongs to (a recurrence repeats at the same local time there; default UTC).',
      keywords: ['create', 'schedule', 'book', 'add', 'set', 'plan', 'invite', 'arrange', 'new'],
      input: {
        type: 'object',
        properties: {
          calendar_id: calendarId,
          summary: str({ minLength: 1, maxLength: 500 }),
          description: str({ maxLength: 8000 }),
          start: dateTime,
          end: dateTime,
          attendees,
          time_zone: timeZone,
          recurrence: { type: 'array', items: recurrenceLine, minItems: 1, maxItems: 20 },
        },
        required: ['summary', 'start'],
        additionalProperties: false,
      },
      output: calendarEvent,
      scopes: ['https://www.googleapis.com/auth/calendar.events'],
      side_effect: 'write',
    },
    {
      name: 'check_availability',
      description: 'Tells whether the calendars are free between two instants, with their busy periods (free/busy only, no event details).',
      keywords: ['free', 'busy', 'available', 'availability'],
      input: {
        type: 'object',
        properties: {
          time_min: dateTime,
          time_max: dateTime,
          calendar_ids: { type: 'array', items: str({ minLength: 1, maxLength: 200 }), minItems: 1, maxItems: 50, default: ['primary'] },
        },
        required: ['time_min', 'time_max'],
        additionalProperties: false,
      },
      output: {
        type: 'object',
        properties: {
          free: { type: 'boolean' },
          busy: {
            type: 'array',
            items: { type: 'object', properties: { start: dateTime, end: dateTime }, required: ['start', 'end'] },
          },
          time_min: dateTime,
          time_max: dateTime,
        },
        required: ['free', 'busy', 'time_min', 'time_max'],
      },
      // freeBusy.query does not accept calendar.events; this one reads availability only, of any calendar the user can see.
      scopes: ['https://www.googleapis.com/auth/calendar.events.freebusy'],
      side_effect: 'read',
    },
    {
      name: 'update_event',
      description:
        'Moves, reschedules or renames an existing event: new `start` and/or `end`, `summary`, or `attendees` (they replace the current ones). Given only `start`, the event keeps its duration.',
      keywords: ['update', 'move', 'reschedule', 'postpone', 'rename', 'change', 'shift', 'push', 'edit'],
      input: {
        type: 'object',
        properties: {
          calendar_id: calendarId,
          event_id: eventId,
          start: dateTime,
          end: dateTime,
          summary: str({ minLength: 1, maxLength: 500 }),
          attendees,
          time_zone: timeZone,
        },
        required: ['event_id'],
        anyOf: [{ required: ['start'] }, { required: ['end'] }, { required: ['summary'] }, { required: ['attendees'] }],
        additionalProperties: false,
      },
      output: calendarEvent,
      scopes: ['https://www.googleapis.com/auth/calendar.events'],
      side_effect: 'write',
    },
    {
      name: 'delete_event',
      description:
        'Cancels (deletes) an event; its attendees are told unless `notify_attendees` is false. An event already deleted answers `already_deleted: true`.',
      keywords: ['delete', 'cancel', 'remove', 'drop', 'clear'],
      input: {
        type: 'object',
        properties: { calendar_id: calendarId, event_id: eventId, notify_attendees: { type: 'boolean', default: true } },
        required: ['event_id'],
        additionalProperties: false,
      },
      output: {
        type: 'object',
        properties: { id: str(), deleted: { const: true }, already_deleted: { type: 'boolean' } },
        required: ['id', 'deleted'],
      },
      scopes: ['https://www.googleapis.com/auth/calendar.events'],
      side_effect: 'destructive',
    },
    {
      name: 'create_all_day_event',
      description:
        'Creates an all-day event over one or more days (`end_date` is the last day, included; default `start_date`), or an out-of-office block (`out_of_office`: Google Workspace, primary calendar, no attendees; midnight to midnight in `time_zone`, default UTC).',
      keywords: ['block', 'holiday', 'vacation', 'leave', 'off', 'away', 'ooo', 'all-day', 'day'],
      input: {
        type: 'object',
        properties: {
          calendar_id: calendarId,
          summary: str({ minLength: 1, maxLength: 500 }),
          start_date: date,
          end_date: date,
          out_of_office: { type: 'boolean', default: false },
          attendees,
          description: str({ maxLength: 8000 }),
          time_zone: timeZone,
        },
        required: ['summary', 'start_date'],
        additionalProperties: false,
      },
      output: {
        ...calendarEvent,
        required: [...calendarEvent.required, 'all_day', 'start_date', 'end_date'],
      },
      scopes: ['https://www.googleapis.com/auth/calendar.events'],
      side_effect: 'write',
    },
  ],
};
