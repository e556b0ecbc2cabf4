import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '@tes/testing';

/**
 * Monitoring as code (deploy/k8s/components/monitoring): the PrometheusRule's rules pass
 * `promtool check rules` and its unit tests (`promtool test rules`, promtool-tests.yaml); the
 * Grafana dashboard's queries parse; rules and dashboard name only metrics that exist.
 * promtool comes from scripts/promtool.sh (built from source through the Go module proxy, cached):
 * scripts/test.sh builds it before jest; without the cache the first build takes minutes, hence the
 * timeout of beforeAll.
 */
const DIR = path.join(REPO_ROOT, 'deploy/k8s/components/monitoring');
let work: string;
let promtool: string;

function run(cmd: string, args: string[], cwd = work): { code: number | null; out: string } {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 600_000 });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

/** The PrometheusRule's `spec:` block, dedented: a plain Prometheus rule file (groups: ...). */
function ruleFile(): string {
  const text = readFileSync(path.join(DIR, 'prometheus-rules.yaml'), 'utf8');
  const lines = text.split('\n');
  const spec = lines.indexOf('spec:');
  expect(spec).toBeGreaterThan(0);
  const body = lines.slice(spec + 1);
  // Everything after spec: belongs to it (2-space indent or blank): no other top-level key follows.
  expect(body.every((l) => l === '' || l.startsWith('  '))).toBe(true);
  return body.map((l) => l.slice(2)).join('\n');
}

beforeAll(() => {
  work = mkdtempSync(path.join(tmpdir(), 'tes-promtool-'));
  const built = run('bash', [path.join(REPO_ROOT, 'scripts/promtool.sh')], REPO_ROOT);
  if (built.code !== 0) throw new Error(`scripts/promtool.sh failed:\n${built.out}`);
  promtool = built.out.trim().split('\n').pop() ?? '';
  writeFileSync(path.join(work, 'tes.rules.yaml'), ruleFile());
  copyFileSync(path.join(DIR, 'promtool-tests.yaml'), path.join(work, 'promtool-tests.yaml'));
}, 960_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('Prometheus rules and dashboard', () => {
  it('pass promtool check rules (syntax, PromQL, no duplicate names)', () => {
    const r = run(promtool, ['check', 'rules', 'tes.rules.yaml']);
    expect(r.out).toMatch(/SUCCESS: \d+ rules found/);
    expect(r.code).toBe(0);
  });

  it('pass their promtool unit tests, and a wrong expectation fails them', () => {
    const r = run(promtool, ['test', 'rules', 'promtool-tests.yaml']);
    expect(r.out).toContain('SUCCESS');
    expect(r.code).toBe(0);
    // The tests can fail: expect the dead-letter alert on the wrong queue.
    const tests = readFileSync(path.join(work, 'promtool-tests.yaml'), 'utf8');
    expect(tests).toContain('queue: executor.steps.dead');
    writeFileSync(path.join(work, 'broken-tests.yaml'), tests.replace('queue: executor.steps.dead', 'queue: orchestrator.p3.dead'));
    const broken = run(promtool, ['test', 'rules', 'broken-tests.yaml']);
    expect(broken.code).not.toBe(0);
    expect(broken.out).toMatch(/FAILED/);
  });

  it('alert on everything the runbook promises', () => {
    const rules = ruleFile();
    for (const alert of [
      'TesDeadLetters',
      'TesPartitionLag',
      'TesQueueLag',
      'TesQueueBacklogGrowing',
      'TesPartitionWithoutConsumer',
      'TesWebhookSuccessLow',
      'TesApiErrorBudgetFastBurn',
      'TesApiErrorBudgetSlowBurn',
      'TesTokenRefreshFailures',
      'TesPodRestarting',
      'TesServiceDown',
    ]) {
      expect(rules).toContain(`- alert: ${alert}\n`);
      // Every alert is exercised by the unit tests.
      expect(readFileSync(path.join(DIR, 'promtool-tests.yaml'), 'utf8')).toContain(`alertname: ${alert}\n`);
    }
    const docs = readFileSync(path.join(REPO_ROOT, 'docs/operations.md'), 'utf8');
    for (const [, anchor] of rules.matchAll(/runbook: docs\/operations\.md#([a-z0-9-]+)/g)) {
      const heading = docs.split('\n').some((l) => /^#+ /.test(l) && slug(l.replace(/^#+ /, '')) === anchor);
      expect([anchor, heading]).toEqual([anchor, true]);
    }
  });

  it('the dashboard is Grafana JSON whose queries parse and name real metrics', () => {
    const dashboard = JSON.parse(readFileSync(path.join(DIR, 'dashboards/tes-overview.json'), 'utf8')) as {
      uid: string;
      panels: { title: string; targets: { expr: string }[] }[];
    };
    expect(dashboard.uid).toBe('tes-overview');
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(10);
    // promtool parses PromQL in rule files: each query as a recording rule.
    const asRules = ['groups:', '  - name: dashboard', '    rules:']
      .concat(exprs.flatMap((e, i) => [`      - record: dashboard:q${i}`, `        expr: ${JSON.stringify(e)}`]))
      .join('\n');
    writeFileSync(path.join(work, 'dashboard.rules.yaml'), `${asRules}\n`);
    const r = run(promtool, ['check', 'rules', 'dashboard.rules.yaml']);
    expect(r.out).toContain(`SUCCESS: ${exprs.length} rules found`);

    const exported = metricNames();
    const recorded = new Set([...ruleFile().matchAll(/- record: (\S+)/g)].map((m) => m[1]));
    const external =
      /^(rabbitmq_detailed_queue_(messages|messages_ready|consumers)|kube_pod_container_status_restarts_total|up|process_resident_memory_bytes)$/;
    const used = [...exprs, ...[...ruleFile().matchAll(/expr: (.*)/g)].map((m) => m[1] ?? '')].flatMap((e) =>
      // Label values ("orchestrator\\.p[0-9]+") are not names: strings are blanked first.
      [...e.replace(/"(?:[^"\\]|\\.)*"/g, '""').matchAll(/([a-z_:][a-z0-9_:]*)\s*(?:\{|\[|\))/g)].map((m) => m[1] ?? ''),
    );
    const unknown = used.filter(
      (n) => !exported.has(n.replace(/_(bucket|count|sum)$/, '')) && !recorded.has(n) && !external.test(n) && !PROMQL.has(n),
    );
    expect(unknown).toEqual([]);
  });
});

/** Functions and keywords of PromQL that the metric-name scan above also sees. */
const PROMQL = new Set([
  'sum',
  'max',
  'rate',
  'increase',
  'delta',
  'histogram_quantile',
  'by',
  'and',
  'le',
  'queue',
  'route',
  'status',
  'tool',
  'outcome',
  'pod',
  'service',
  'job',
  'namespace',
  'container',
]);

/** The names the services export (packages/metrics). */
function metricNames(): Set<string> {
  const src = readFileSync(path.join(REPO_ROOT, 'packages/metrics/src/metrics.ts'), 'utf8');
  return new Set([...src.matchAll(/name: '([a-z_]+)'/g)].map((m) => m[1] ?? ''));
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');
}
