/** The provider API this tool's live actions call: its base URL (overridable by `GOOGLE_CALENDAR_API_URL`) and the name users see. */
export const googleCalendarApi = {
  urlVariable: 'GOOGLE_CALENDAR_API_URL',
  defaultUrl: 'https://www.googleapis.com/calendar/v3',
  label: 'Google Calendar',
} as const;
