import type { Sql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqlClient } from '../../src/db/database.js';
import { importPayoutReport, PayoutReportImportStoppedError } from '../../src/payout-import/import.js';
import { readPayoutReport, type PayoutReportFile } from '../../src/payout-reports/read.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { payoutEvent } from '../statements/fixtures.js';

/**
 * importPayoutReport's `signal` (the payout report inbox passes the daemon's shutdown signal): an
 * import waiting behind a lock held on a table it writes is stopped at once when the signal
 * aborts, its transaction rolled back, nothing of the file stored, and its pool connection usable
 * again. Before, the import took no signal: it waited for the lock until
 * PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS (120 s by default), and the daemon's stop with it.
 */
const HEADER = 'Order No;Doc No;Doc Type;Transaction Amount;Discount %;MDR %;Transaction Fee;Gross Purchase Price;Discount;VAT on Discount;Transfer Amount;Total Deductions;Payout Reference';
const ROW = 'ORD-1;INV-1;Invoice;1.234,56 €;2,5 %;2,5;0,30 €;1.234,56 €;30,86 €;5,92 €;1.197,48 €;37,08 €;PO0000000000000042';

let db: TestDatabase;
let report: PayoutReportFile;
let locker: Sql;

beforeAll(async () => {
  db = await createTestDatabase('payout_report_import_stop', { poolMax: 3 });
  await payoutEvent(db, { sepa: 'PO0000000000000042', cents: 119748n, invoices: ['INV-1'], eventTime: '2026-03-02T10:00:00Z' });
  report = await readPayoutReport(Buffer.from(`${HEADER}\r\n${ROW}\r\n`));
  locker = createSqlClient(db.url, { poolMax: 1, applicationName: 'import-stop-test-locker' });
});
afterAll(async () => {
  await locker?.end({ timeout: 2 });
});

describe('a payout report import stopped by its signal', () => {
  it('stops while it waits on a lock, stores nothing, and the same report imports afterwards', { timeout: 60_000 }, async () => {
    const held = await locker.reserve();
    const stop = new AbortController();
    let outcome: unknown;
    let tookMs = Number.NaN;
    try {
      await held`begin`;
      await held`lock table payout_reports in access exclusive mode`;
      const importing = importPayoutReport(db, 'sandbox', report, { fileName: 'report.csv', timeoutSeconds: 120, signal: stop.signal }).then(
        (r) => ({ stored: r }),
        (error: unknown) => error,
      );
      await waitFor('the import to wait on the lock', async () => {
        const rows = await db.sql`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike '%payout_reports%'`;
        return rows.length > 0 ? true : undefined;
      }, 20_000, 50);

      const aborted = performance.now();
      stop.abort(new Error('payout-report-inbox stopping'));
      // The lock is still held: only the stop can end the import now.
      outcome = await Promise.race([importing, sleep(5_000).then(() => 'still waiting after 5 s')]);
      tookMs = performance.now() - aborted;
    } finally {
      await held`rollback`.catch(() => undefined);
      held.release();
    }

    expect(tookMs, String(outcome)).toBeLessThan(2_000);
    expect(outcome).toBeInstanceOf(PayoutReportImportStoppedError);
    const [stored] = await db.sql<{ reports: number; rows: number }[]>`
      select (select count(*)::int from payout_reports) as reports, (select count(*)::int from payout_report_rows) as rows`;
    expect(stored).toEqual({ reports: 0, rows: 0 });
    // Nothing left waiting or open in a transaction on the ledger: the rollback went through.
    const left = await db.sql`select state from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and state <> 'idle' and application_name <> 'import-stop-test-locker'`;
    expect(left).toEqual([]);

    const again = await importPayoutReport(db, 'sandbox', report, { fileName: 'report.csv' });
    expect({ alreadyImported: again.alreadyImported, rowsNew: again.rowsNew }).toEqual({ alreadyImported: false, rowsNew: 1 });
  });

  it('does not start when its signal has already aborted', async () => {
    const stop = new AbortController();
    stop.abort(new Error('stopping'));
    await expect(importPayoutReport(db, 'sandbox', report, { fileName: 'other.csv', signal: stop.signal })).rejects.toBeInstanceOf(PayoutReportImportStoppedError);
  });
});
