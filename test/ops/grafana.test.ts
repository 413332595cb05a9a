import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_RATES, HOUR_MS } from '../../sim/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { sleep, startStack, waitFor, type Stack } from '../e2e/harness.js';

/**
 * The Grafana dashboard against a real Prometheus (Debian package `prometheus`; CI installs it) on
 * loopback, scraping a real daemon every second while the simulator sends it deliveries and the
 * daemon polls and reconciles: every template variable and every panel query must parse and return
 * data, and every panel at least one finite value (a quantile over an empty window is NaN).
 * $__rate_interval stands for 5m, a window covering the whole run, as Grafana's would in production.
 */

const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;

interface Target {
  expr: string;
  refId: string;
}
interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: Target[];
}
interface Variable {
  name: string;
  type: string;
  query: string | { query: string };
}
const dashboard = JSON.parse(readFileSync('ops/grafana/bnpl-recon.json', 'utf8')) as { uid: string; panels: Panel[]; templating: { list: Variable[] } };
const panels = dashboard.panels.filter((p) => p.type !== 'row');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Series {
  metric: Record<string, string>;
  value: [number, string];
}

describe('Grafana dashboard', () => {
  it('has a datasource variable, job/environment/replica variables, and every panel on ${datasource}', () => {
    const vars = Object.fromEntries(dashboard.templating.list.map((v) => [v.name, v]));
    expect(vars.datasource?.type).toBe('datasource');
    expect(vars.datasource?.query).toBe('prometheus');
    for (const name of ['job', 'environment', 'instance']) expect(vars[name]?.type, name).toBe('query');
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
    expect(panels.length).toBeGreaterThanOrEqual(15);
    for (const panel of panels) {
      expect(panel.datasource?.uid, panel.title).toBe('${datasource}');
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) expect(target.expr, panel.title).toMatch(/job=~"\$job", instance=~"\$instance"/);
    }
  });

  describe.skipIf(!has('prometheus'))('against a real Prometheus scraping the daemon under simulated traffic', () => {
    let db: TestDatabase | undefined;
    let stack: Stack | undefined;
    let prometheus: ChildProcess | undefined;
    let prometheusLog = '';
    afterAll(async () => {
      if (prometheus && prometheus.exitCode === null) {
        const exited = new Promise((resolve) => prometheus!.once('exit', resolve));
        prometheus.kill('SIGTERM');
        await exited;
      }
      await stack?.stop();
    });

    it('every variable and panel query parses and returns data', { timeout: 180_000 }, async () => {
      db = await createTestDatabase('grafana_dashboard', { poolMax: 4 });
      stack = await startStack({ db, seed: 'grafana', faults: DEFAULT_FAULT_RATES, ordersPerDay: 96, graceSeconds: 2 });
      const metrics = new URL(stack.daemon.metricsUrl);

      const dir = mkdtempSync(path.join(tmpdir(), 'prometheus-'));
      writeFileSync(
        path.join(dir, 'prometheus.yml'),
        [
          'global: { scrape_interval: 1s, evaluation_interval: 1s }',
          'scrape_configs:',
          '  - job_name: bnpl-recon',
          `    metrics_path: ${metrics.pathname}`,
          `    static_configs: [{ targets: ["${metrics.host}"] }]`,
          '',
        ].join('\n'),
      );
      const port = await freePort();
      const api = `http://127.0.0.1:${port}`;
      prometheus = spawn('prometheus', [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      prometheus.stderr!.on('data', (d: Buffer) => (prometheusLog += d.toString()));

      const query = async (expr: string): Promise<{ status: number; body: { status: string; error?: string; data?: { result: Series[] } } }> => {
        const res = await request(`${api}/api/v1/query?${new URLSearchParams({ query: expr })}`);
        return { status: res.statusCode, body: (await res.body.json()) as { status: string; error?: string; data?: { result: Series[] } } };
      };
      await waitFor(
        'Prometheus to scrape the daemon',
        async () => {
          try {
            const { body } = await query('up{job="bnpl-recon"} == 1');
            return (body.data?.result.length ?? 0) > 0 ? true : undefined;
          } catch {
            return undefined;
          }
        },
        30_000,
        250,
      ).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}\n${prometheusLog.slice(-2000)}`);
      });

      // Traffic while Prometheus watches: deliveries in several steps, two polls (each followed by
      // a pass), so every counter and histogram moves between scrapes.
      for (let step = 0; step < 4; step += 1) {
        await stack.sim.advance(3 * HOUR_MS);
        await stack.sim.drain();
        if (step === 1 || step === 3) await stack.daemon.pollNow();
        await sleep(1500);
      }
      await stack.daemon.reconcileNow();
      await sleep(3000);

      // The template variables, as Grafana resolves label_values(selector, label).
      const values: Record<string, string> = {};
      for (const variable of dashboard.templating.list.filter((v) => v.type === 'query')) {
        const text = typeof variable.query === 'string' ? variable.query : variable.query.query;
        const m = /^label_values\((.+), (\w+)\)$/.exec(text);
        expect(m, text).not.toBeNull();
        const selector = m![1]!.replace(/\$(\w+)/g, (_, name: string) => values[name]!);
        const res = await request(`${api}/api/v1/label/${m![2]}/values?${new URLSearchParams({ 'match[]': selector })}`);
        const body = (await res.body.json()) as { data: string[] };
        expect(body.data.length, `${variable.name}: ${text}`).toBeGreaterThan(0);
        // As Grafana puts a value into a =~ matcher: regex-escaped, then escaped for a PromQL string.
        values[variable.name] = body.data[0]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\\/g, '\\\\');
      }
      expect(values.environment).toBe('sandbox');

      const substitute = (expr: string) => expr.replace(/\$__rate_interval/g, '5m').replace(/\$(\w+)/g, (_, name: string) => values[name] ?? `$${name}`);
      const problems: string[] = [];
      for (const panel of panels) {
        for (const target of panel.targets ?? []) {
          const expr = substitute(target.expr);
          const { status, body } = await query(expr);
          const result = body.data?.result ?? [];
          if (status !== 200 || body.status !== 'success') problems.push(`${panel.title} ${target.refId}: ${body.error ?? status}`);
          else if (result.length === 0) problems.push(`${panel.title} ${target.refId}: no data for ${expr}`);
          else if (!result.some((s) => Number.isFinite(Number(s.value[1])))) problems.push(`${panel.title} ${target.refId}: only NaN/Inf for ${expr}`);
        }
      }
      expect(problems).toEqual([]);

      // The check tells a broken query from a working one.
      expect((await query('sum(rate(bnpl_recon_no_such_metric_total[5m]))')).body.data?.result ?? []).toEqual([]);
      expect((await query('sum(rate(bnpl_recon_webhook_deliveries_total[5m]')).status).toBe(400);
    });
  });
});
