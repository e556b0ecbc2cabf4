import type { ToolHints } from '../../types.js';

export const GOOGLE_CALENDAR_HINTS: ToolHints = {
  nouns: ['calendar', 'gcal', 'event', 'events', 'meeting', 'meetings', 'appointment', 'appointments', 'agenda', 'schedule', 'call', 'standup', 'sync', 'free', 'busy', 'available', 'availability'],
  actions: {
    create_event: {
      verbs: ['create', 'schedule', 'book', 'add', 'set', 'arrange', 'plan', 'put', 'organize', 'invite', 'block', 'reserve', 'make', 'new', 'setup'],
      objects: ['event', 'meeting', 'appointment', 'call', 'standup', 'sync', 'calendar', 'lunch', 'review', 'session', 'time', 'interview', 'reminder', 'demo', '1:1', 'one-on-one', 'dinner', 'coffee', 'workshop', 'retro', 'catch-up'],
      not: ['free', 'busy', 'available', 'availability'],
    },
    list_events: {
      verbs: ['list', 'show', 'get', 'what', 'which', 'check', 'see', 'find', 'display', 'any', 'read', 'look', 'give'],
      objects: ['events', 'meetings', 'appointments', 'agenda', 'calendar', 'schedule', 'event', 'meeting', 'busy'],
      not: ['free', 'available', 'availability'],
    },
    check_availability: {
      verbs: ['am', 'is', 'are', 'check', 'find', 'see', 'know', 'tell', 'show', 'get', 'when'],
      objects: ['free', 'available', 'availability', 'busy', 'free time', 'conflict', 'conflicts', 'open'],
      phrases: ['am i free', 'am i available', 'am i busy', 'is my calendar free', 'do i have anything', 'anything on my calendar'],
    },
  },
};
