/**
 * `pnpm eval:planner [--llm] [--verbose] [--category NAME] [--corpus DIR]`: scores the planner on
 * the labeled corpus in eval/planner/corpus (or DIR, e.g. a held-out set) and prints a table per
 * category. Exits 1 when any plan holds a side effect that was not asked for or a wrong write.
 * See eval/planner/README.md.
 */
import { writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { BUILT_IN_TOOLS, findAction, type ToolDef } from '@tes/catalog';
import * as planner from '@tes/planner';
import type { PlanOutcome } from '@tes/planner';
import { CATEGORIES, loadCorpus } from './corpus.js';
import { score, expectedSteps, type CorpusEntry, type Outcome, type PlannedStep, type Score, type SideEffectOf } from './score.js';
import { scriptFor, startScriptedModel } from './scripted-model.js';

/** "tomorrow" and "Thursday" in the labels are relative to this instant (a Wednesday). */
export const NOW = new Date('2026-03-04T10:00:00Z');

const args = process.argv.slice(2);
const verbose = args.includes('--verbose');
const llm = args.includes('--llm');
const only = args.includes('--category') ? args[args.indexOf('--category') + 1] : undefined;
const corpusDir = args.includes('--corpus') ? resolve(args[args.indexOf('--corpus') + 1] ?? '') : join(import.meta.dirname, 'corpus');
const heldOut = args.includes('--corpus');

const sideEffectOf: SideEffectOf = (name) => {
  const [tool = '', action = ''] = name.split('.');
  return findAction(tool, action)?.side_effect;
};

function fromPlanOutcome(o: PlanOutcome): Outcome {
  return o.ok
    ? { ok: true, steps: o.plan.steps }
    : { ok: false, code: o.refusal.code, message: o.refusal.message, suggestion: o.refusal.suggestion ?? '' };
}

/**
 * The LLM planner, whichever signature it has: the target `planWithLlm(prompt, options) →
 * Promise<PlanOutcome>`, or today's `planWithLlm(prompt, tool, options) → {steps, planner, fallback_reason}`
 * (an empty plan then counts as a refusal without a suggestion).
 */
async function planWithModel(
  prompt: string,
  options: { baseUrl: string; apiKey: string; model: string; now: Date; tools: readonly ToolDef[]; timeoutMs: number },
): Promise<Outcome> {
  const call = planner.planWithLlm as unknown as (...a: unknown[]) => Promise<unknown>;
  const answer = (call.length >= 3 ? await call(prompt, undefined, options) : await call(prompt, options)) as
    PlanOutcome | { steps: PlannedStep[]; planner: string; fallback_reason?: string };
  if ('ok' in answer) return fromPlanOutcome(answer);
  return answer.steps.length
    ? { ok: true, steps: answer.steps }
    : { ok: false, code: 'no_steps', message: answer.fallback_reason ?? 'no steps', suggestion: '' };
}

/** A planner that throws has not refused cleanly: it scores as a refusal with no suggestion. */
async function guarded(plan: () => Outcome | Promise<Outcome>): Promise<Outcome> {
  try {
    return await plan();
  } catch (err) {
    return { ok: false, code: 'threw', message: (err as Error).message, suggestion: '' };
  }
}

interface Row {
  n: number;
  supported: number;
  planned_right: number;
  refused_right: number;
  refused_wrongly: number;
  wrong_plan: number;
  unasked: number;
  wrong_writes: number;
  no_suggestion: number;
}

const emptyRow = (): Row => ({
  n: 0,
  supported: 0,
  planned_right: 0,
  refused_right: 0,
  refused_wrongly: 0,
  wrong_plan: 0,
  unasked: 0,
  wrong_writes: 0,
  no_suggestion: 0,
});

function add(row: Row, e: CorpusEntry, s: Score): void {
  row.n++;
  if (!('refuse' in e.expect)) row.supported++;
  row[s.verdict]++;
  if (s.unasked.length) row.unasked++;
  if (s.wrong_writes.length) row.wrong_writes++;
  if (s.no_suggestion) row.no_suggestion++;
}

function printTable(rows: [string, Row][]): void {
  const head = [
    'category',
    'n',
    'planned right',
    'refused right',
    'refused wrongly',
    'wrong plan',
    'wrong write',
    'unasked side effect',
    'no suggestion',
  ];
  const cells = rows.map(([name, r]) => [
    name,
    String(r.n),
    `${r.planned_right}/${r.supported}`,
    `${r.refused_right}/${r.n - r.supported}`,
    String(r.refused_wrongly),
    String(r.wrong_plan),
    String(r.wrong_writes),
    String(r.unasked),
    String(r.no_suggestion),
  ]);
  const width = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((v, i) => (i === 0 ? v.padEnd(width[i]!) : v.padStart(width[i]!))).join('  ');
  console.log(line(head));
  console.log(width.map((w) => '-'.repeat(w)).join('  '));
  cells.forEach((c, i) => {
    if (i === cells.length - 1) console.log(width.map((w) => '-'.repeat(w)).join('  '));
    console.log(line(c));
  });
}

const pct = (a: number, b: number) => (b ? `${((100 * a) / b).toFixed(1)} %` : '-');

async function main(): Promise<number> {
  const corpus = loadCorpus(corpusDir).filter((e) => !only || e.category === only || e.id === only);
  const missing = new Set(corpus.flatMap((e) => expectedSteps(e.expect).map((s) => s.action)).filter((a) => !sideEffectOf(a)));
  const model = llm ? await startScriptedModel(corpus) : undefined;
  const results: { entry: CorpusEntry; outcome: Outcome; score: Score; fault?: string }[] = [];
  try {
    for (const entry of corpus) {
      const outcome = model
        ? await guarded(() =>
            planWithModel(entry.prompt, {
              baseUrl: model.baseUrl,
              apiKey: 'scripted',
              model: 'scripted-model',
              now: NOW,
              tools: BUILT_IN_TOOLS,
              timeoutMs: 5000,
            }),
          )
        : await guarded(() => fromPlanOutcome(planner.planWithRules(entry.prompt, { now: NOW, tools: BUILT_IN_TOOLS })));
      const fault = model ? scriptFor(entry).fault : undefined;
      results.push({ entry, outcome, score: score(entry, outcome, sideEffectOf), ...(fault ? { fault } : {}) });
    }
  } finally {
    await model?.close();
  }

  const byCategory = new Map<string, Row>(CATEGORIES.map((c) => [c, emptyRow()]));
  const total = emptyRow();
  for (const r of results) {
    add(byCategory.get(r.entry.category)!, r.entry, r.score);
    add(total, r.entry, r.score);
  }
  console.log(
    `planner eval (${heldOut ? corpusDir : 'dev corpus'}): ${llm ? 'LLM planner with a scripted model' : 'rules planner'}, ${results.length} requests, now = ${NOW.toISOString()}\n`,
  );
  printTable([...[...byCategory].filter(([, r]) => r.n > 0), ['total', total]]);
  console.log(
    `\nsupported requests planned right: ${total.planned_right}/${total.supported} (${pct(total.planned_right, total.supported)})` +
      `\nrequests to refuse refused: ${total.refused_right}/${total.n - total.supported}` +
      `\nplans with an unasked side effect: ${total.unasked}` +
      `\nplans with a wrong write: ${total.wrong_writes}` +
      `\nrefusals without a suggestion: ${total.no_suggestion}`,
  );
  if (model) {
    const faulty = results.filter((r) => r.fault);
    const stopped = faulty.filter((r) => r.score.unasked.length === 0).length;
    console.log(
      `scripted model: misbehaved on ${faulty.length} requests, ${stopped} stopped by the checks; consulted for ${model.asked.size}/${results.length} requests`,
    );
  }
  if (missing.size) console.log(`labels use actions the catalog does not have (yet): ${[...missing].sort().join(', ')}`);

  const failures = results.filter(
    (r) => r.score.verdict === 'wrong_plan' || r.score.verdict === 'refused_wrongly' || r.score.unasked.length || r.score.no_suggestion,
  );
  if (verbose) {
    console.log(`\nfailures (${failures.length}):`);
    for (const r of failures) {
      console.log(
        `\n[${r.entry.id}] ${r.score.verdict}${r.score.unasked.length ? `, UNASKED ${r.score.unasked.join(', ')}` : ''}${r.score.wrong_writes.length ? `, WRONG WRITE ${r.score.wrong_writes.join(', ')}` : ''}${r.fault ? ` (model fault: ${r.fault})` : ''}`,
      );
      console.log(`  prompt:   ${r.entry.prompt}`);
      console.log(`  expected: ${JSON.stringify(r.entry.expect)}`);
      console.log(
        `  got:      ${JSON.stringify(r.outcome.ok ? r.outcome.steps : { refused: r.outcome.code, message: r.outcome.message, suggestion: r.outcome.suggestion })}`,
      );
      if (r.score.why) console.log(`  why:      ${r.score.why}`);
    }
  }

  const report = join(import.meta.dirname, `report${heldOut ? `-${basename(corpusDir)}` : ''}${llm ? '-llm' : ''}.json`);
  writeFileSync(
    report,
    JSON.stringify(
      {
        planner: llm ? 'llm (scripted model)' : 'rules',
        now: NOW.toISOString(),
        totals: total,
        categories: Object.fromEntries(byCategory),
        results: results.map((r) => ({
          id: r.entry.id,
          category: r.entry.category,
          prompt: r.entry.prompt,
          verdict: r.score.verdict,
          unasked: r.score.unasked,
          wrong_writes: r.score.wrong_writes,
          no_suggestion: r.score.no_suggestion,
          ...(r.score.why ? { why: r.score.why } : {}),
          ...(r.fault ? { model_fault: r.fault } : {}),
          expected: r.entry.expect,
          got: r.outcome,
        })),
      },
      null,
      2,
    ) + '\n',
  );
  console.log(`\nreport: ${report}${verbose ? '' : ' (failures listed with --verbose)'}`);
  return total.unasked > 0 || total.wrong_writes > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(2);
  },
);
