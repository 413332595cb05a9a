import { describe, expect, it } from 'vitest';
import { fetchAll } from '../../src/reports/source.js';
import { ageingSource } from '../../src/reports/invoices.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { factoringEvent, invoiceEvent } from '../payout-reports/fixtures.js';

let db: TestDatabase;
useTestDatabase('time_ageing_whole_days', (d) => (db = d));

/**
 * docs/reports.md: "The ageing counts the invoices not canceled, not declined for factoring and
 * listed by no completed payout, by whole days since the invoice date"; src/reports/invoices.ts
 * AGEING_BUCKETS: "(UTC days, whole days elapsed)". The query subtracts UTC calendar dates
 * (`now::date - created_at::date`), which is not the whole days elapsed: an invoice of 23:30 UTC is
 * a "day" old half an hour later.
 *
 * The invoice: created 2026-03-01T23:30:00Z (on the page with DISPLAY_TIME_ZONE=Europe/Berlin:
 * "02.03.2026, 00:30 CET"). Now: 2026-03-09T11:00:00Z (12:00 on 9 March in Berlin). Elapsed: 7 days
 * 11.5 hours, so 7 whole days, 7 calendar days in Berlin too: bucket 0-7. The report says 8-30.
 */
describe('report invoices --ageing at a bucket boundary', () => {
  it('puts an invoice 7 days and 11.5 hours old (7 whole days) in 0-7, not 8-30', async () => {
    await invoiceEvent(db, { ref: 'INV-LATE-EVENING', eventTime: '2026-03-01T23:30:00.000000000Z' });
    await factoringEvent(db, { ref: 'INV-LATE-EVENING', cents: 10_000n, receivedAt: '2026-03-01T23:31:00Z' });
    const rows = await fetchAll(ageingSource(db, { environment: 'sandbox', now: new Date('2026-03-09T11:00:00Z') }), undefined, 100);
    const byBucket = Object.fromEntries((rows ?? []).map((r) => [r['bucket'], r['invoices']]));
    expect(byBucket, 'an invoice 7 whole days old (created 2026-03-01T23:30Z, now 2026-03-09T11:00Z) counted as 8 days old').toEqual({
      '0-7': '1', '8-30': '0', '31-60': '0', 'over 60': '0',
    });
  });
});
