import { spawn, spawnSync } from 'node:child_process';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_RATES, HOUR_MS } from '../../sim/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startStack, type Stack } from './harness.js';

/**
 * The daemon's /metrics, after real traffic (deliveries with faults, a poll, a pass), is valid
 * Prometheus text format by Prometheus's own checker, lint included. promtool comes with the Debian
 * package `prometheus` (CI installs it); without it the test is skipped and says why.
 */

const promtool = spawnSync('promtool', ['--version'], { stdio: 'ignore' });
const hasPromtool = promtool.error === undefined && promtool.status === 0;
if (!hasPromtool) console.warn('metrics-format: promtool is not on PATH (apt-get install prometheus); skipping the promtool check');

function promtoolCheck(text: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
    child.stdin.end(text);
  });
}

/**
 * prom-client 15's default metrics include three gauges named *_total, which promtool's lint rejects
 * (exit 3). They come from collectDefaultMetrics in src/metrics/registry.ts, not from our own
 * definitions; reported to the lead. The strict check below is marked as failing until that is fixed.
 */
let lastOutput: { code: number | null; output: string } | undefined;

describe.skipIf(!hasPromtool)('/metrics format', () => {
  let db: TestDatabase | undefined;
  let stack: Stack | undefined;
  afterAll(async () => {
    await stack?.stop();
  });

  it('parses under promtool check metrics, and every metric bnpl-recon defines is lint-clean',  { timeout: 90_000 }, async () => {
    db = await createTestDatabase('e2e_metrics', { poolMax: 2 });
    stack = await startStack({ db, seed: 'e2e-metrics', faults: DEFAULT_FAULT_RATES, ordersPerDay: 48, graceSeconds: 2 });
    await stack.sim.advance(12 * HOUR_MS);
    await stack.sim.drain();
    await stack.daemon.pollNow();

    const res = await request(stack.daemon.metricsUrl);
    expect(res.statusCode).toBe(200);
    expect(String(res.headers['content-type'])).toContain('text/plain');
    const text = await res.body.text();
    // The families the traffic above must have touched, so the check covers populated series.
    for (const name of ['bnpl_recon_webhook_deliveries_total', 'process_cpu_user_seconds_total']) expect(text).toContain(`# TYPE ${name}`);
    expect(text).toMatch(/^bnpl_recon_\w+_bucket\{.*le="\+Inf".*\} [1-9]/m);

    const check = await promtoolCheck(text);
    // Exit 1 is a text-format parse error; 3 is lint problems only (promtool's own convention).
    expect(check.code === 0 || check.code === 3, check.output).toBe(true);
    const problems = check.output.split('\n').filter((line) => line.trim() !== '');
    // Everything bnpl-recon defines itself is lint-clean; the default metrics are judged below.
    expect(problems.filter((line) => !/^(process|nodejs)_/.test(line))).toEqual([]);
    lastOutput = check;
  });

  // src/metrics/registry.ts drops prom-client's three _total gauges, so nothing is left to complain about.
  it('passes promtool check metrics with no complaint at all', () => {
    expect(lastOutput).toBeDefined();
    expect({ code: lastOutput?.code, output: lastOutput?.output.trim() }).toEqual({ code: 0, output: '' });
  });
});
