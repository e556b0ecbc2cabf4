/**
 * The rules planner's own time per prompt: every request of the dev corpus and of the held-out
 * sets, planned ROUNDS times after one warm-up pass (the first call compiles the language data's
 * patterns). Prints p50, p99 and max per call in milliseconds, and the slowest prompts.
 *
 *   pnpm bench:planner            (ROUNDS=20 by default)
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { planWithRules } from '@tes/planner';
import { loadCorpus } from '../eval/planner/corpus.js';

const ROUNDS = Number(process.env['ROUNDS'] ?? 20);
const now = new Date('2026-03-04T10:00:00Z');
const root = join(import.meta.dirname, '..', 'eval', 'planner');
const heldOut = join(root, 'heldout');
const prompts = [...loadCorpus(join(root, 'corpus')), ...readdirSync(heldOut).flatMap((set) => loadCorpus(join(heldOut, set)))].map(
  (e) => e.prompt,
);

const t0 = performance.now();
planWithRules(prompts[0] ?? 'echo hi', { now });
const first = performance.now() - t0;
for (const p of prompts) planWithRules(p, { now });

const samples: { ms: number; prompt: string }[] = [];
for (let r = 0; r < ROUNDS; r++) {
  for (const prompt of prompts) {
    const t = performance.now();
    planWithRules(prompt, { now });
    samples.push({ ms: performance.now() - t, prompt });
  }
}
samples.sort((a, b) => a.ms - b.ms);
const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]?.ms ?? 0;
const fmt = (ms: number) => ms.toFixed(3);
console.log(`planner latency: ${prompts.length} prompts × ${ROUNDS} rounds = ${samples.length} calls (node ${process.version})`);
console.log(`first call (cold): ${fmt(first)} ms`);
console.log(`p50 ${fmt(at(0.5))} ms · p99 ${fmt(at(0.99))} ms · max ${fmt(samples[samples.length - 1]?.ms ?? 0)} ms`);
const slowest = new Map<string, number>();
for (const s of samples.slice(-50).reverse()) if (!slowest.has(s.prompt)) slowest.set(s.prompt, s.ms);
console.log('slowest prompts:');
for (const [prompt, ms] of [...slowest].slice(0, 5)) console.log(`  ${fmt(ms)} ms  ${prompt.slice(0, 100)}`);
