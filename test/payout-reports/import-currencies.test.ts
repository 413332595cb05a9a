import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PayoutReportRefusedError } from '../../src/payout-import/import.js';
import { createTestDatabase } from '../helpers/database.js';
import { factoringEvent, findings, importReport, invoiceEvent, invoiceRow, pass, payoutEvent, transferOf } from './fixtures.js';

const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const at = (d: number, time = '12:00:00') => new Date(`2026-03-${String(d).padStart(2, '0')}T${time}Z`);

// provider-merchant-docs.md: "Amounts are in the payout's currency (EUR or GBP)": one payout, one currency.
// docs/how-it-decides.md: "amounts of different currencies are never compared".

describe('payout reports whose rows for one payout are in two currencies', () => {
  it('refuses the file at import, naming the payout and the currencies: pounds are never added to euros', async () => {
    const d = await createTestDatabase('pr_report_mixed_currency');
    for (const ref of ['INV-1', 'INV-2']) {
      await invoiceEvent(d, { ref, order: randomUUID(), eventTime: day(1) });
      await factoringEvent(d, { ref, receivedAt: day(1) });
    }
    const rows = [
      invoiceRow({ doc: 'INV-1', order: 'ORD-1', cents: 10_000n, line: 2 }),
      { ...invoiceRow({ doc: 'INV-2', order: 'ORD-2', cents: 10_000n, line: 3 }), currency: 'GBP' as const },
    ];
    // The sum of both rows' Transfer Amounts is the payout's amount: tied to it, then refused.
    const payout = await payoutEvent(d, { sepa: 'PO2026030200000041', cents: transferOf(rows), eventTime: day(2), invoices: ['INV-1', 'INV-2'] });
    const error = await importReport(d, rows).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(PayoutReportRefusedError);
    expect((error as Error).message).toBe(`rows of payout ${payout} name more than one currency: EUR (line 2), GBP (line 3); a payout is paid in one currency`);
    expect((await d.sql`select count(*)::int as n from payout_report_rows`)[0]!.n).toBe(0);
  });

  it('refuses a second file about a payout in another currency than the rows stored for it', async () => {
    const d = await createTestDatabase('pr_report_second_currency');
    const rows = [invoiceRow({ doc: 'INV-1', cents: 10_000n, ref: 'PO2026030200000042' })];
    const payout = await payoutEvent(d, { sepa: 'PO2026030200000042', cents: transferOf(rows), eventTime: day(2), invoices: ['INV-1', 'INV-2'] });
    await importReport(d, rows, 'eur');
    const gbp = [{ ...invoiceRow({ doc: 'INV-2', cents: 10_000n, ref: 'PO2026030200000042' }), currency: 'GBP' as const }];
    await expect(importReport(d, gbp, 'gbp')).rejects.toThrow(`rows of payout ${payout} name more than one currency: EUR (a report imported before), GBP (line 2)`);
  });

  it('flags, without adding them, a payout\'s rows stored in two currencies before the import refused them', async () => {
    const d = await createTestDatabase('pr_report_stored_mixed');
    const rows = [invoiceRow({ doc: 'INV-1', cents: 10_000n, line: 2 }), invoiceRow({ doc: 'INV-2', cents: 10_000n, line: 3 })];
    const payout = await payoutEvent(d, { sepa: 'PO2026030200000043', cents: transferOf(rows), eventTime: day(2), invoices: ['INV-1', 'INV-2'] });
    await importReport(d, rows);
    // As an earlier release stored such a file: one of its rows in pounds.
    await d.sql`update payout_report_rows set currency = 'GBP' where doc_no = 'INV-2'`;
    await pass(d, at(4), { terms: null });
    expect((await findings(d, 'payout_report_mismatch')).map((f) => [f.entity_id, f.expected, f.observed])).toEqual([
      [payout, transferOf(rows).toString(), '9667 EUR + 9667 GBP'],
    ]);
  });
});
