import { planWithRules } from './rules.js';

/** The seven languages the rules planner reads, and a clear refusal for the others. `now` is a Wednesday. */
const now = new Date('2026-03-04T10:00:00Z');
const plan = (prompt: string) => planWithRules(prompt, { now });
const actions = (prompt: string) => {
  const o = plan(prompt);
  if (!o.ok) throw new Error(`refused: ${o.refusal.message}`);
  return o.plan.steps.map((s) => `${s.tool}.${s.action}`);
};

describe('languages', () => {
  it.each([
    ['pt', 'Fecha a issue 12 em acme/web', ['github.close_issue']],
    [
      'pt',
      'Envia um email para ana@x.pt a dizer que a reunião mudou e depois publica no #geral "feito"',
      ['gmail.send_email', 'slack.post_message'],
    ],
    ['it', 'Chiudi la issue 12 in acme/web', ['github.close_issue']],
    ['it', 'Aggiungi un commento alla PR 12 di acme/api: serve un test in più', ['github.comment_on_pull_request']],
    ['nl', 'Sluit issue 12 in acme/web', ['github.close_issue']],
    ['nl', 'Ben ik morgen vrij tussen 14:00 en 15:00?', ['google_calendar.check_availability']],
    ['fr', 'Crée une réunion demain à 10h avec ana@x.fr', ['google_calendar.create_event']],
    ['de', 'Füge das Label "bug" zu Issue 3 in acme/api hinzu', ['github.add_labels']],
  ])('reads %s: %s', (_lang, prompt, expected) => {
    expect(actions(prompt)).toEqual(expected);
  });

  it('reads the hour of "às 15h" and a weekday as a day, not Dutch "vrij" as Friday', () => {
    const pt = plan('Estou livre amanhã às 15h?');
    expect(pt.ok && pt.plan.steps[0]?.input).toMatchObject({ time_min: '2026-03-05T15:00:00Z' });
    const nl = plan('Ben ik morgen vrij tussen 14:00 en 15:00?');
    expect(nl.ok && nl.plan.steps[0]?.input).toMatchObject({ time_min: '2026-03-05T14:00:00Z', time_max: '2026-03-05T15:00:00Z' });
  });

  it.each([
    ['Japanese', 'acme/webのissue 12をクローズして'],
    ['Polish', 'Wyślij wiadomość na kanał #ogólny: spotkanie jutro o 10'],
    ['Polish', 'Zamknij zgłoszenie 12 w acme/web'],
    ['Swedish', 'Skicka ett meddelande till #dev och skapa ett möte imorgon'],
    ['Korean', '#eng 채널에 배포 완료라고 보내줘'],
  ])('refuses %s, naming it and the languages it reads', (language, prompt) => {
    const o = plan(prompt);
    expect(o.ok).toBe(false);
    if (o.ok) return;
    expect(o.refusal.message).toContain(language);
    expect(o.refusal.suggestion).toContain('Portuguese');
  });

  it('a message in quotes may be in any language', () => {
    expect(actions("post '今日は休みです' to #eng")).toEqual(['slack.post_message']);
    expect(actions('send "Zamknij drzwi, proszę" to #pl-team')).toEqual(['slack.post_message']);
  });
});
