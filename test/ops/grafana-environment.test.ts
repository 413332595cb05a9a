import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';

/**
 * docs/operating.md: the dashboard is used by picking "job, environment and replicas"; the runbook
 * and src/metrics/ledger-health.ts: a sandbox and a production daemon may be scraped under one job,
 * and build_info's `environment` is how "dashboards pick replicas". With the Replica variable on
 * "All" (Grafana's first option and so the default), a panel must still show only the chosen
 * environment's daemons. The panel queries are evaluated by promtool as Grafana substitutes the
 * variables: a variable's All is its allValue when it has one, else the alternation of the values
 * its query offers (for Replica: the chosen environment's instances). Replica's allValue `.+`
 * showed every environment's daemons.
 */

const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;

interface Target {
  expr: string;
}
interface Panel {
  title: string;
  type: string;
  targets?: Target[];
  panels?: Panel[];
}
interface Variable {
  name: string;
  includeAll?: boolean;
  allValue?: string;
}
const dashboard = JSON.parse(readFileSync('ops/grafana/bnpl-recon.json', 'utf8')) as { panels: Panel[]; templating: { list: Variable[] } };
const flat = (ps: Panel[]): Panel[] => ps.flatMap((p) => [p, ...flat(p.panels ?? [])]);
const panels = flat(dashboard.panels);

function panelExpr(title: string, index = 0): string {
  const panel = panels.find((p) => p.title === title);
  expect(panel, title).toBeDefined();
  return panel!.targets![index]!.expr;
}

const vars = Object.fromEntries(dashboard.templating.list.map((v) => [v.name, v]));
/**
 * As Grafana substitutes them: All is the variable's allValue, or else the alternation of the values
 * its query offers (`offered`); environment is a single value.
 */
function substitute(expr: string, offered: { job: string[]; instance: string[] }): string {
  const all = (name: 'job' | 'instance') => vars[name]!.allValue ?? `(${offered[name].map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`;
  const values: Record<string, string> = { job: all('job'), environment: 'production', instance: all('instance') };
  return expr.replace(/\$__rate_interval/g, '5m').replace(/\$(\w+)/g, (_, name: string) => values[name] ?? `$${name}`);
}

describe.skipIf(!has('promtool'))('Grafana dashboard, environment = production, Replica = All', () => {
  it('a production and a sandbox daemon under one job: the panels show production only', () => {
    expect(vars.instance?.includeAll).toBe(true);
    const prod = 'job="bnpl-recon",instance="recon-1:9464"';
    const sandbox = 'job="bnpl-recon",instance="recon-1:9465"';
    // What the variables' queries offer with environment = production: its one replica.
    const offered = { job: ['bnpl-recon'], instance: ['recon-1:9464'] };
    const build = (env: string) => `version="0.1.0",node="v22.12.0",commit="abc",environment="${env}"`;
    const cases = {
      rule_files: [],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: [
            { series: `bnpl_recon_build_info{${prod},${build('production')}}`, values: '1x20' },
            { series: `bnpl_recon_build_info{${sandbox},${build('sandbox')}}`, values: '1x20' },
            // Production: 3 open missed webhooks; sandbox (fault-injected test traffic): 40.
            { series: `bnpl_recon_discrepancies_open{${prod},kind="missed_webhook"}`, values: '3x20' },
            { series: `bnpl_recon_discrepancies_open{${sandbox},kind="missed_webhook"}`, values: '40x20' },
            // Production's last complete poll at t=0 (stale); the sandbox's polls keep completing.
            { series: `bnpl_recon_poll_last_complete_timestamp_seconds{${prod},environment="production"}`, values: '0x20' },
            { series: `bnpl_recon_poll_last_complete_timestamp_seconds{${sandbox},environment="sandbox"}`, values: '0+60x20' },
          ],
          promql_expr_test: [
            {
              expr: substitute(panelExpr('Open discrepancies by kind'), offered),
              eval_time: '10m',
              exp_samples: [{ labels: '{kind="missed_webhook"}', value: 3 }],
            },
            {
              expr: substitute(panelExpr('Time since the last complete poll'), offered),
              eval_time: '10m',
              exp_samples: [{ labels: '{}', value: 600 }],
            },
          ],
        },
      ],
    };
    const dir = mkdtempSync(path.join(tmpdir(), 'dashboard-env-'));
    writeFileSync(path.join(dir, 'cases.yml'), stringify(cases));
    const result = spawnSync('promtool', ['test', 'rules', 'cases.yml'], { cwd: dir, encoding: 'utf8' });
    const output = result.stdout + result.stderr;
    expect(output, output).toContain('SUCCESS');
    expect(result.status, output).toBe(0);
  });
});
