import { beforeAll, describe, expect, it } from 'vitest';
import { PayoutReportRefusedError } from '../../src/payout-import/import.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { deductionRow, importReport, invoiceRow, payoutEvent, transferOf } from './fixtures.js';

let db: TestDatabase;
useTestDatabase('payout_report_import', (d) => (db = d));

const T = '2026-03-02T06:00:00.000000000Z';
const counts = async () => {
  const [c] = await db.sql<{ reports: number; rows: number }[]>`
    select (select count(*) from payout_reports)::int as reports, (select count(*) from payout_report_rows)::int as rows`;
  return c!;
};

describe('importPayoutReport', () => {
  let p1: string;
  let p2: string;
  const one = [invoiceRow({ doc: 'INV-1', order: 'O-1', cents: 10_000n }), invoiceRow({ doc: 'INV-2', order: 'O-1', cents: 5_000n, feeCents: 0n }), deductionRow({ doc: 'CN-1', type: 'credit_note', cents: 1_000n })];
  beforeAll(async () => {
    p1 = await payoutEvent(db, { sepa: 'PO2026030200000001', cents: transferOf(one), eventTime: T, invoices: ['INV-1', 'INV-2'] });
    // Same invoices as p1 at another amount, and two twins listing INV-9 at one amount.
    p2 = await payoutEvent(db, { sepa: 'PO2026030200000002', cents: 1n, eventTime: T, invoices: ['INV-2', 'INV-1'] });
    await payoutEvent(db, { sepa: 'PO2026030200000003', cents: 9_000n, eventTime: T, invoices: ['INV-9'] });
    await payoutEvent(db, { sepa: 'PO2026030200000004', cents: 9_000n, eventTime: T, invoices: ['INV-9'] });
  });

  it('ties rows without a payout reference to the one payout whose invoices and amount they match, and stores every row', async () => {
    const r = await importReport(db, one);
    expect(r).toMatchObject({ alreadyImported: false, rows: 3, rowsNew: 3, payouts: [p1] });
    const stored = await db.sql<{ line: number; doc_no: string; doc_type: string; payout_uuid: string; transfer_amount_cents: string }[]>`
      select line, doc_no, doc_type::text, payout_uuid::text, transfer_amount_cents::text from payout_report_rows order by line`;
    expect(stored).toEqual([
      { line: 2, doc_no: 'INV-1', doc_type: 'invoice', payout_uuid: p1, transfer_amount_cents: one[0]!.transferAmountCents.toString() },
      { line: 3, doc_no: 'INV-2', doc_type: 'invoice', payout_uuid: p1, transfer_amount_cents: one[1]!.transferAmountCents.toString() },
      { line: 4, doc_no: 'CN-1', doc_type: 'credit_note', payout_uuid: p1, transfer_amount_cents: '-1000' },
    ]);
  });

  it('re-importing the same file adds nothing; another file about the same payout adds nothing it already holds', async () => {
    expect(await importReport(db, one)).toMatchObject({ alreadyImported: true, rowsNew: 0, payouts: [p1] });
    const again = await importReport(db, one.map((r) => ({ ...r, payoutReference: 'po2026030200000001' })), 'other bytes');
    expect(again).toMatchObject({ alreadyImported: false, rowsNew: 0, payouts: [p1] });
    expect(await counts()).toEqual({ reports: 2, rows: 3 });
  });

  it('ties rows by their payout reference, the SEPA reference or the payout uuid', async () => {
    const rows = [invoiceRow({ doc: 'INV-9', cents: 9_300n, ref: 'PO2026030200000003' }), invoiceRow({ doc: 'INV-1', cents: 4n, ref: p2 })];
    const r = await importReport(db, rows);
    expect(r.rowsNew).toBe(2);
    expect([...r.payouts].sort()).toEqual([p2, (await db.sql<{ u: string }[]>`select payout_uuid::text as u from payout_events where sepa_instruction_id = 'PO2026030200000003'`)[0]!.u].sort());
  });

  it('refuses, storing nothing, rows that fit several payouts, naming them', async () => {
    const before = await counts();
    const rows = [invoiceRow({ doc: 'INV-9', cents: 9_000n, feeCents: 0n, rateMicros: 0, vatMicros: 0 })];
    await expect(importReport(db, rows, 'twins')).rejects.toThrow(/fit several payouts: .*PO2026030200000003.*PO2026030200000004|fit several payouts: .*PO2026030200000004.*PO2026030200000003/);
    expect(await counts()).toEqual(before);
  });

  it('refuses rows that fit no payout exactly, naming the payouts listing some of their invoices', async () => {
    const before = await counts();
    const rows = [invoiceRow({ doc: 'INV-1', cents: 10_000n }), invoiceRow({ doc: 'INV-2', cents: 5_000n })];
    const error = await importReport(db, rows, 'nomatch').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayoutReportRefusedError);
    expect(String((error as Error).message)).toMatch(new RegExp(`fit no payout exactly; payouts listing some of those invoices: .*${p1}.*`));
    expect(String((error as Error).message)).toContain(p2);
    expect(await counts()).toEqual(before);
  });

  it('refuses a reference that names no payout, and a document twice for one payout', async () => {
    const before = await counts();
    await expect(importReport(db, [invoiceRow({ doc: 'INV-1', cents: 1n, ref: 'PO2099010100000000' })])).rejects.toThrow('payout reference PO2099010100000000 names no payout in the ledger');
    await expect(importReport(db, [invoiceRow({ doc: 'INV-1', cents: 1n }), invoiceRow({ doc: 'INV-1', cents: 2n })])).rejects.toThrow('lines 2 and 3 both settle invoice INV-1');
    await expect(importReport(db, [])).rejects.toThrow('no rows');
    expect(await counts()).toEqual(before);
  });
});
