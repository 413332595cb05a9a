import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createWebhookMetrics } from '../../src/webhooks/metrics.js';

/**
 * BnplReconSlowWebhookAck says (ops/runbook.md) "the 99th percentile from request to stored answer
 * is above 2 s". It computes histogram_quantile(0.99) over the daemon's own
 * bnpl_recon_webhook_ack_duration_seconds buckets. Here the daemon's real histogram (its own bucket
 * layout) is fed one minute of acknowledgements, its bucket counts become the promtool input series
 * of 40 minutes at that rate, and the shipped alerts.yml is evaluated at 30 m.
 */

const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;

/** One minute of acks (seconds each) into the daemon's real histogram; its `_bucket` series for promtool. */
async function bucketSeries(acksPerMinute: number[]): Promise<string> {
  const registry = new Registry();
  const metrics = createWebhookMetrics(registry);
  for (const seconds of acksPerMinute) metrics.ackSeconds.observe({ outcome: 'stored' }, seconds);
  const { values } = await metrics.ackSeconds.get();
  const lines: string[] = [];
  for (const v of values) {
    if (v.metricName !== 'bnpl_recon_webhook_ack_duration_seconds_bucket') continue;
    const le = String((v.labels as Record<string, string | number>).le);
    lines.push(
      `  - series: 'bnpl_recon_webhook_ack_duration_seconds_bucket{job="bnpl-recon",instance="10.0.0.1:9464",outcome="stored",le="${le}"}'`,
      `    values: '0+${v.value}x40'`,
    );
  }
  expect(lines.length).toBeGreaterThan(10);
  return lines.join('\n');
}

function p99(acks: number[]): number {
  const sorted = [...acks].sort((a, b) => a - b);
  return sorted[Math.ceil(0.99 * sorted.length) - 1]!;
}

async function promtool(name: string, acks: number[], expectFiring: boolean): Promise<{ status: number | null; output: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bnpl-slow-ack-'));
  try {
    copyFileSync(path.resolve('ops/prometheus/alerts.yml'), path.join(dir, 'alerts.yml'));
    const exp = expectFiring
      ? `    exp_alerts:\n    - exp_labels: { severity: ticket, job: bnpl-recon, environment: production }\n      exp_annotations:\n        summary: p99 webhook acknowledgement above 2 s\n        description: "The provider gives up on a delivery after 5 s; slow commits risk turning deliveries into retries."\n        runbook_url: https://github.com/bnpl-recon/bnpl-recon/blob/main/ops/runbook.md#bnplreconslowwebhookack`
      : '    exp_alerts: []';
    const text = [
      'rule_files: [alerts.yml]',
      'evaluation_interval: 1m',
      'tests:',
      `- name: '${name}'`,
      '  interval: 1m',
      '  input_series:',
      `  - series: 'bnpl_recon_build_info{job="bnpl-recon",instance="10.0.0.1:9464",version="0.1.0",node="v22.12.0",commit="abc",environment="production"}'`,
      "    values: '1x40'",
      await bucketSeries(acks),
      '  alert_rule_test:',
      '  - eval_time: 30m',
      '    alertname: BnplReconSlowWebhookAck',
      exp,
      '',
    ].join('\n');
    writeFileSync(path.join(dir, 'case.test.yml'), text);
    const result = spawnSync('promtool', ['test', 'rules', 'case.test.yml'], { cwd: dir, encoding: 'utf8' });
    return { status: result.status, output: result.stdout + result.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.skipIf(!has('promtool'))('BnplReconSlowWebhookAck against the daemon\'s own ack histogram', () => {
  it('does not fire when the true p99 is 1.1 s (5 % of acks take 1.1 s, the rest 20 ms)', async () => {
    const acks = [...Array<number>(95).fill(0.02), ...Array<number>(5).fill(1.1)];
    expect(p99(acks)).toBe(1.1);
    const result = await promtool('p99 1.1 s: under the 2 s threshold', acks, false);
    expect(result.status, result.output).toBe(0);
  });

  it('fires when the true p99 is 2.4 s (2 % of acks take 2.4 s, the rest 20 ms)', async () => {
    const acks = [...Array<number>(98).fill(0.02), ...Array<number>(2).fill(2.4)];
    expect(p99(acks)).toBe(2.4);
    const result = await promtool('p99 2.4 s: over the 2 s threshold', acks, true);
    expect(result.status, result.output).toBe(0);
  });
});
