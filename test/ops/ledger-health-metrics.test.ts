import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';

/**
 * src/metrics/ledger-health.ts promises bnpl_recon_database_last_error_timestamp_seconds is "when one
 * last failed (absent until then)"; ops/runbook.md (BnplReconDatabaseDown) sends the SRE to it for
 * the time of the last failure. prom-client gives an unlabelled gauge 0 from the start, which reads
 * as "the ledger last failed in 1970". (test/metrics/ledger-health.test.ts covers the value after a
 * failed read.)
 */
describe('ledger-health metrics on a healthy ledger', () => {
  it('export no bnpl_recon_database_last_error_timestamp_seconds sample before any read failed', async () => {
    const db = await createTestDatabase('ops_last_error', { poolMax: 2 });
    const { registry } = testMetrics(db);
    const text = await registry.metrics();
    expect(text).toMatch(/^bnpl_recon_database_up 1$/m);
    const samples = text.split('\n').filter((l) => l.startsWith('bnpl_recon_database_last_error_timestamp_seconds'));
    expect(samples).toEqual([]);
  });
});
