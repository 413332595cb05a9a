import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
const alertsFile = path.resolve('ops/prometheus/alerts.yml');

/** promtool's own rule unit tests: the alert fires on the first unparsed delivery, and stops once none come. */
function unitTest(series: string, expectations: { at: string; firing: boolean }[]): string {
  return `rule_files: [${JSON.stringify(alertsFile)}]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'bnpl_recon_webhook_deliveries_unparsed_total{topic_family="payout",reason="invalid_field",instance="a"}'
        values: '${series}'
    alert_rule_test:
${expectations
  .map(({ at, firing }) => `      - eval_time: ${at}
        alertname: BnplReconDeliveriesUnparsed
        exp_alerts: ${firing ? `
          - exp_labels: { severity: ticket, topic_family: payout, reason: invalid_field }
            exp_annotations:
              summary: "Webhook deliveries stored unparsed (payout, invalid_field)"
              description: "Stored with their raw bytes but without a typed row, so reconciliation does not see them: the provider may have changed a payload. The parse_error column of webhook_deliveries names the field and why."` : '[]'}`)
  .join('\n')}
`;
}

function promtoolTest(yaml: string): { status: number | null; output: string } {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'alert-test-')), 'unparsed.test.yml');
  writeFileSync(file, yaml);
  const result = spawnSync('promtool', ['test', 'rules', file], { encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('BnplReconDeliveriesUnparsed', () => {
  it.skipIf(!has('promtool'))('fires after one unparsed delivery and clears when none follow', () => {
    // Zero for 10 minutes (the series exists from start: metrics.ts creates it at 0), one delivery, then none.
    const ok = promtoolTest(unitTest('0x10 1x40', [
      { at: '5m', firing: false },
      { at: '12m', firing: true },
      { at: '40m', firing: false },
    ]));
    expect(ok.output).toContain('SUCCESS');
    expect(ok.status).toBe(0);
    // The same expectations against a flat series fail: the test can tell.
    const flat = promtoolTest(unitTest('0x50', [{ at: '12m', firing: true }]));
    expect(flat.status).not.toBe(0);
  });
});
