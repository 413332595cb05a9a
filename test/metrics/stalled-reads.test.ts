import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';

/**
 * ledger-health.ts LedgerReads.collector: one read of a source in flight at a time, so scrapes of a
 * stalled database do not pile queries up; and ledger_read_failures_total counts "scrape-time reads
 * that failed" once per read, not once per gauge (docs/operating.md, ops/runbook.md).
 */
const failures = (text: string, source: string): number => Number(new RegExp(`^bnpl_recon_ledger_read_failures_total\\{source="${source}"\\} (\\S+)$`, 'm').exec(text)?.[1]);

let dbs: TestDatabase[] = [];
afterAll(async () => {
  for (const d of dbs) await d.close?.().catch(() => undefined);
});

describe('scrape-time reads of a stalled ledger', () => {
  it('one scrape whose discrepancies read times out counts one failure, not one per gauge', { timeout: 30_000 }, async () => {
    const db = await createTestDatabase('mt_metrics_count');
    dbs.push(db);
    const { registry } = testMetrics(db);
    const before = failures(await registry.metrics(), 'discrepancies');
    const blocker = await db.sql.reserve();
    try {
      await blocker`begin`;
      await blocker`lock table discrepancies in access exclusive mode`;
      const after = failures(await registry.metrics(), 'discrepancies');
      expect({ failedReadsCounted: after - before }).toEqual({ failedReadsCounted: 1 });
    } finally {
      await blocker`rollback`;
      blocker.release();
    }
  });

  it('three scrapes of a ledger whose poll_runs is locked leave at most one freshness query in flight', { timeout: 30_000 }, async () => {
    const db = await createTestDatabase('mt_metrics_pile');
    dbs.push(db);
    const { registry } = testMetrics(db);
    await registry.metrics();
    const blocker = await db.sql.reserve();
    try {
      await blocker`begin`;
      await blocker`lock table poll_runs in access exclusive mode`;
      for (let i = 0; i < 3; i++) await registry.metrics();
      const [row] = await blocker<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and state = 'active' and query like '%from poll_runs%'`;
      expect({ freshnessQueriesInFlight: row!.n }).toEqual({ freshnessQueriesInFlight: 1 });
    } finally {
      await blocker`rollback`;
      blocker.release();
    }
  });
});
