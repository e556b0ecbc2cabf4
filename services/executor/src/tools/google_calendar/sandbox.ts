import { eventIdFor } from './live.js';
import { text, type ActionImpl } from '../tool.js';
import { SANDBOX_HOST, sandboxScope } from '../../sandbox/sandbox-scope.js';

/** A simulated Google Calendar: events persist per account, user and calendar. */
export const googleCalendarSandbox: Record<string, ActionImpl> = {
  create_event: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'google_calendar');
    const calendar = text(input['calendar_id'], 'primary');
    const start = new Date(text(input['start'])).toISOString();
    const end = input['end'] ? new Date(text(input['end'])).toISOString() : new Date(Date.parse(start) + 3_600_000).toISOString();
    const id = eventIdFor(ctx.step.idempotency_key).slice(0, 26);
    const doc = await ctx.env.sandbox.createOnce(scope, 'event', calendar, ctx.step.idempotency_key, () => ({
      id,
      summary: input['summary'],
      ...(input['description'] ? { description: input['description'] } : {}),
      start,
      end,
      attendees: input['attendees'] ?? [],
      url: `${SANDBOX_HOST}/calendar/event/${id}`,
    }));
    return doc.data;
  },
  list_events: async (input, ctx) => {
    const scope = await sandboxScope(ctx, 'google_calendar');
    const min = Date.parse((input['time_min'] as string | undefined) ?? new Date().toISOString());
    const max = input['time_max'] ? Date.parse(text(input['time_max'])) : min + 7 * 86_400_000;
    const q = (input['query'] as string | undefined)?.toLowerCase();
    const items = (await ctx.env.sandbox.list(scope, 'event', text(input['calendar_id'], 'primary')))
      .map((d) => d.data)
      // Overlapping the window, as Google does.
      .filter((e) => Date.parse(text(e['end'])) > min && Date.parse(text(e['start'])) < max)
      .filter((e) => !q || `${text(e['summary'])} ${text(e['description'])}`.toLowerCase().includes(q))
      .sort((a, b) => Date.parse(text(a['start'])) - Date.parse(text(b['start'])))
      .slice(0, Number(input['limit'] ?? 25));
    return { items, count: items.length };
  },
};
