import { SANDBOX_HOST, sandboxScope } from '../sandbox-scope.js';
import { text, ToolError, type ActionImpl, type ToolContext } from '../tool.js';
import type { SandboxDoc } from '../../domain/sandbox.js';
import { checkOutOfOffice, dayRange, rescheduled } from './dates.js';
import { eventIdFor, eventZone, noSuchEvent } from './event.js';

/**
 * update_event, delete_event and create_all_day_event in the sandbox (test keys). A deleted
 * event stays in the store marked `cancelled` (as Google keeps it): list_events and
 * check_availability leave it out, a second delete answers `already_deleted`.
 */
async function find(ctx: ToolContext, input: Record<string, unknown>): Promise<SandboxDoc> {
  const scope = await sandboxScope(ctx, 'google_calendar');
  const id = text(input['event_id']);
  const events = await ctx.env.sandbox.list(scope, 'event', text(input['calendar_id'], 'primary'));
  const doc = events.find((d) => d.data['id'] === id);
  if (doc) return doc;
  // `<id>_<start>`: one occurrence of a recurring event, as list_events names it.
  const series = /^(.+)_\d{8}T\d{6}Z$/.exec(id)?.[1];
  if (series && events.some((d) => d.data['id'] === series && !d.data['cancelled'])) {
    throw new ToolError(
      'step_failed',
      `The sandbox changes whole recurring events only; "${id}" is one occurrence of "${series}"`,
      false,
      `Name the recurring event "${series}" itself (the change applies to every occurrence), or try the step with a live key`,
    );
  }
  throw noSuchEvent(input);
}

/** The event as the actions answer it (the store's own marks left out). */
function shown(data: Record<string, unknown>): Record<string, unknown> {
  const { cancelled: _c, deleted_by: _d, ...event } = data;
  return event;
}

export const googleCalendarEditsSandbox: Record<string, ActionImpl> = {
  update_event: async (input, ctx) => {
    const asked = eventZone(input);
    const doc = await find(ctx, input);
    if (doc.data['cancelled']) throw noSuchEvent(input, true);
    const { all_day: _a, start_date: _s, end_date: _e, ...event } = doc.data;
    const times = rescheduled({ start: text(event['start']), end: text(event['end']) }, input);
    const next: Record<string, unknown> = {
      // Given times, an all-day event becomes a timed one (as on Google).
      ...(times ? event : doc.data),
      ...(input['summary'] !== undefined ? { summary: input['summary'] } : {}),
      ...(Array.isArray(input['attendees']) ? { attendees: input['attendees'] } : {}),
      ...(times ? { start: new Date(times.start).toISOString(), end: new Date(times.end).toISOString() } : {}),
      ...(times && asked ? { time_zone: asked } : {}),
    };
    await ctx.env.sandbox.setData(doc._id, next);
    return shown(next);
  },
  delete_event: async (input, ctx) => {
    const doc = await find(ctx, input);
    const id = text(input['event_id']);
    // The same step run again (redelivery) answers as the first time; another step finds it gone.
    if (doc.data['cancelled'])
      return { id, deleted: true, ...(doc.data['deleted_by'] === ctx.step.idempotency_key ? {} : { already_deleted: true }) };
    await ctx.env.sandbox.setData(doc._id, { ...doc.data, cancelled: true, deleted_by: ctx.step.idempotency_key });
    return { id, deleted: true };
  },
  create_all_day_event: async (input, ctx) => {
    const days = dayRange(input);
    const ooo = checkOutOfOffice(input);
    const scope = await sandboxScope(ctx, 'google_calendar');
    const id = eventIdFor(ctx.step.idempotency_key).slice(0, 26);
    const doc = await ctx.env.sandbox.createOnce(scope, 'event', text(input['calendar_id'], 'primary'), ctx.step.idempotency_key, () => ({
      id,
      summary: input['summary'],
      ...(input['description'] ? { description: input['description'] } : {}),
      start: days.start,
      end: days.end,
      attendees: input['attendees'] ?? [],
      url: `${SANDBOX_HOST}/calendar/event/${id}`,
      ...(input['time_zone'] !== undefined ? { time_zone: days.zone } : {}),
      all_day: true,
      start_date: days.startDate,
      end_date: days.endDate,
      ...(ooo ? { out_of_office: true } : {}),
    }));
    return shown(doc.data);
  },
};
