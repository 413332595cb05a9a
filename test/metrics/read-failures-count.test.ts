import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { waitFor } from '../helpers/wait.js';

/**
 * src/metrics/ledger-health.ts: "A read past the timeout counts once as a failure of `source`";
 * ops/runbook.md: bnpl_recon_ledger_read_failures_total "counts scrape-time reads that failed".
 * A read that stalls past the scrape's 2 s and then ends in an error (the server ended its session:
 * a failover, a DBA's pg_terminate_backend, TCP giving up on a half-open socket) is one failed read.
 */
const failures = (text: string, source: string): number => Number(new RegExp(`^bnpl_recon_ledger_read_failures_total\\{source="${source}"\\} (\\S+)$`, 'm').exec(text)?.[1]);

const dbs: TestDatabase[] = [];
afterAll(async () => {
  for (const d of dbs) await d.close?.().catch(() => undefined);
});

async function stalledThenKilled(table: 'discrepancies' | 'poll_runs', source: 'discrepancies' | 'freshness', label: string): Promise<number> {
  const db = await createTestDatabase(label);
  dbs.push(db);
  const { registry } = testMetrics(db);
  const before = failures(await registry.metrics(), source);
  const blocker = await db.sql.reserve();
  try {
    await blocker`begin`;
    await blocker.unsafe(`lock table ${table} in access exclusive mode`);
    // This scrape's read waits for the lock past the 2 s timeout: one failed read, counted.
    await registry.metrics();
    // The stalled read's session is ended by the server (as a failover or a DBA would).
    const killed = await blocker<{ n: number }[]>`
      select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock'`;
    expect(killed[0]!.n).toBe(1);
  } finally {
    await blocker`rollback`;
    blocker.release();
  }
  // Let the killed read settle, then a scrape whose read succeeds.
  let after = NaN;
  await waitFor(
    'a scrape after the stalled read settled',
    async () => {
      const text = await registry.metrics();
      after = failures(text, source);
      return /^bnpl_recon_database_up 1$/m.test(text) ? true : undefined;
    },
    10_000,
    200,
  );
  await new Promise((r) => setTimeout(r, 300));
  after = failures(await registry.metrics(), source);
  return after - before;
}

describe('ledger_read_failures_total counts a stalled read that then fails once', () => {
  it('discrepancies: one read timed out and then ended in an error counts 1', { timeout: 30_000 }, async () => {
    expect({ failedReadsCounted: await stalledThenKilled('discrepancies', 'discrepancies', 'read_failures_disc') }).toEqual({ failedReadsCounted: 1 });
  });

  it('freshness: one read timed out and then ended in an error counts 1', { timeout: 30_000 }, async () => {
    expect({ failedReadsCounted: await stalledThenKilled('poll_runs', 'freshness', 'read_failures_fresh') }).toEqual({ failedReadsCounted: 1 });
  });
});
