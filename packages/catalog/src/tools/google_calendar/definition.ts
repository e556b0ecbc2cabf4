import { dateTime, email, limit, listOf, str, type ToolDef } from '../../types.js';

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
  },
  required: ['id', 'summary', 'start', 'end', 'attendees', 'url'],
} as const;

const calendarId = str({ minLength: 1, maxLength: 200, default: 'primary' });

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
      description: 'Creates an event; `end` defaults to one hour after `start`.',
      keywords: ['create', 'schedule', 'book', 'add', 'set', 'plan', 'invite', 'arrange', 'new'],
      input: {
        type: 'object',
        properties: {
          calendar_id: calendarId,
          summary: str({ minLength: 1, maxLength: 500 }),
          description: str({ maxLength: 8000 }),
          start: dateTime,
          end: dateTime,
          attendees: { type: 'array', items: email, maxItems: 100 },
        },
        required: ['summary', 'start'],
        additionalProperties: false,
      },
      output: calendarEvent,
      scopes: ['https://www.googleapis.com/auth/calendar.events'],
      side_effect: 'write',
    },
  ],
};
