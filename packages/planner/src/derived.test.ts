import { planWithRules } from './rules.js';

/**
 * Derive what is harmless (a subject, a title, a default length, a zone from a city) and say so;
 * never where a write lands or what it says: those unknown are refused, naming exactly that.
 */
const now = new Date('2026-03-04T10:00:00Z');
const plan = (prompt: string) => planWithRules(prompt, { now });

describe('derived values', () => {
  it('derives an email subject from the message in the user’s words, and lists it', () => {
    const o = plan('email lee@x.io that the deck is ready');
    expect(o.ok && o.plan.steps[0]?.input).toEqual({ to: ['lee@x.io'], subject: 'The deck is ready', body: 'the deck is ready' });
    expect(o.ok && o.plan.planner.derived).toEqual(expect.arrayContaining([expect.stringMatching(/^step 0 subject: "The deck is ready"/)]));
  });

  it('derives an event title and its zone from a city, and lists both with the default length', () => {
    const o = plan('schedule lunch with sam@globex.com march 10 at noon in Denver');
    expect(o.ok && o.plan.steps[0]?.input).toMatchObject({
      summary: 'Lunch',
      start: '2026-03-10T12:00:00-06:00',
      time_zone: 'America/Denver',
    });
    const derived = (o.ok && o.plan.planner.derived) || [];
    expect(derived.some((d) => d.startsWith('step 0 summary: "Lunch"'))).toBe(true);
    expect(derived.some((d) => d.startsWith('step 0 time_zone: "America/Denver"'))).toBe(true);
    expect(derived.some((d) => d.startsWith('step 0 end:'))).toBe(true);
  });

  it('lists nothing when everything was said', () => {
    const o = plan('send an email to bob@x.io with subject "Q2" saying "numbers attached"');
    expect(o.ok && o.plan.planner.derived).toBeUndefined();
  });

  it.each([
    ['email the team that the deck is ready', /recipient/],
    ['email bob@x.io', /text/],
    ['post that the deploy is done', /channel/],
    ['close the issue in acme/api', /issue number/],
    ['cancel my meeting', /which event/],
  ])('refuses "%s", naming what is missing', (prompt, missing) => {
    const o = plan(prompt);
    expect(o.ok).toBe(false);
    if (!o.ok) expect(`${o.refusal.message} ${o.refusal.suggestion}`).toMatch(missing);
  });
});
