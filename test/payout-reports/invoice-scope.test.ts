import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { factoringEvent, findings, importCsv, importReport, invoiceEvent, invoiceRow, OTHER_IBAN, pass, payoutEvent, transferOf } from './fixtures.js';
import type { PassSummary } from '../../src/reconcile/types.js';
import { DAY, HOUR, MINUTE, realClock } from '../helpers/real-clock.js';

// Reports and statements are stamped with the database's clock as they are stored, so the passes
// run on the real clock (T0 = now), moved forward by at most hours: a full pass comes every 24 h.
const { at, iso, day } = realClock();

const reportKinds = ['payout_deduction_mismatch', 'payout_report_mismatch'];
const invoiceKinds = ['invoice_not_paid_out', 'invoice_paid_out_twice', 'payout_pays_canceled_invoice', 'buyer_paid_merchant_directly',
  'payout_deduction_mismatch', 'payout_report_mismatch', 'payout_unknown_invoice'];

/** Every invoice kind's findings, for comparing what passes left. */
async function invoiceFindings(d: TestDatabase) {
  return Object.fromEntries(await Promise.all(invoiceKinds.map(async (kind) => [kind, await findings(d, kind)] as const)));
}

describe('an incremental pass judges the invoice kinds again only when their evidence changed', () => {
  let d: TestDatabase;
  const inv: Record<string, string> = {};
  beforeAll(async () => {
    d = await createTestDatabase('i2c_invoice_scope');
    // A: owed for ten days, never paid out. B: its deadline falls at T0 + 4 h. D: paid by P2.
    inv.A = await invoiceEvent(d, { ref: 'INV-A', eventTime: iso(-10 * DAY) });
    await factoringEvent(d, { ref: 'INV-A', receivedAt: iso(-10 * DAY) });
    inv.B = await invoiceEvent(d, { ref: 'INV-B', eventTime: iso(-8 * DAY) });
    await factoringEvent(d, { ref: 'INV-B', receivedAt: iso(-7 * DAY + 4 * HOUR) });
    inv.D = await invoiceEvent(d, { ref: 'INV-D', eventTime: iso(-2 * DAY) });
    await factoringEvent(d, { ref: 'INV-D', receivedAt: iso(-DAY) });
    // A payout naming an invoice the ledger does not know.
    await payoutEvent(d, { sepa: 'PO2026000000000001', cents: 100n, eventTime: iso(-2 * DAY), invoices: ['INV-X'] });
    await payoutEvent(d, { sepa: 'PO2026000000000002', cents: 9_700n, eventTime: iso(-3 * HOUR), invoices: ['INV-D'] });
  });

  const judged = (summary: PassSummary) => summary.invoices;

  it('stands unchanged, or judges again naming what changed, and ends where a full pass does', async () => {
    const first = await pass(d, at(0));
    expect(first).toMatchObject({ mode: 'full', invoices: { judged: true } });
    expect((await findings(d, 'invoice_not_paid_out')).map((f) => f.entity_id)).toEqual([inv.A]);
    expect((await findings(d, 'payout_unknown_invoice')).map((f) => [f.subject, f.status])).toEqual([['INV-X', 'open']]);

    await importCsv(d, [{ ref: 'S1', date: day(0), cents: 500n, sepa: 'INV-D', iban: OTHER_IBAN }]);
    const statement = await pass(d, at(MINUTE));
    expect(statement).toMatchObject({ mode: 'incremental', invoices: { judged: true, reason: 'a bank statement was imported' } });
    expect(await findings(d, 'buyer_paid_merchant_directly')).toHaveLength(1);

    const rows = [invoiceRow({ doc: 'INV-D', cents: 10_000n })];
    await importReport(d, rows.map((r) => ({ ...r, payoutReference: 'PO2026000000000002' })));
    expect(transferOf(rows)).not.toBe(9_700n); // the report disagrees with the payout's amount: payout_report_mismatch
    const report = await pass(d, at(2 * MINUTE));
    expect(judged(report)).toEqual({ judged: true, reason: 'a payout report was imported' });
    expect(await findings(d, 'payout_report_mismatch')).toHaveLength(1);

    // Still within the margin after the report's import; then nothing is new.
    expect(judged(await pass(d, at(2 * HOUR)))).toMatchObject({ judged: true });
    const before = await invoiceFindings(d);
    const quiet = await pass(d, at(2 * HOUR + MINUTE));
    expect(quiet).toMatchObject({ mode: 'incremental', invoices: { judged: false }, opened: 0, reopened: 0, resolved: 0 });
    expect(quiet.stepMs.invoice_evidence).toBeUndefined();
    expect(quiet.found.invoice_not_paid_out).toBeUndefined();
    expect(await invoiceFindings(d)).toEqual(before);

    // Other settings: judged again (B is due after 6 days), and again when they change back.
    const six = await pass(d, at(2 * HOUR + 2 * MINUTE), { days: 6 });
    expect(judged(six)).toEqual({ judged: true, reason: 'the previous pass judged the invoices with other settings' });
    expect((await findings(d, 'invoice_not_paid_out')).find((f) => f.entity_id === inv.B)?.status).toBe('open');
    const seven = await pass(d, at(2 * HOUR + 3 * MINUTE));
    expect(judged(seven)).toMatchObject({ judged: true });
    expect((await findings(d, 'invoice_not_paid_out')).find((f) => f.entity_id === inv.B)?.status).toBe('resolved');

    // B's deadline has not come: nothing new. Once it has, judged again and B is flagged.
    expect(judged(await pass(d, at(3 * HOUR)))).toMatchObject({ judged: false });
    const due = await pass(d, at(4 * HOUR + MINUTE));
    // A deadline is no evidence of the kinds that read the payout reports: they stand.
    expect(judged(due)).toEqual({ judged: true, reason: 'an invoice reached its payout deadline', standing: reportKinds });
    expect(due.found.payout_report_mismatch).toBeUndefined();
    expect((await findings(d, 'invoice_not_paid_out')).find((f) => f.entity_id === inv.B)?.status).toBe('open');

    // X's invoice webhook arrives: its finding resolves. A payout lists A: A's resolves.
    await invoiceEvent(d, { ref: 'INV-X', eventTime: iso(4 * HOUR + 2 * MINUTE) });
    const x = await pass(d, at(4 * HOUR + 3 * MINUTE));
    // No payout report names INV-X: the report kinds' findings stand, the report's mismatch open.
    expect(judged(x)).toEqual({ judged: true, reason: 'an invoice event arrived', standing: reportKinds });
    expect(x.found.payout_report_mismatch).toBeUndefined();
    expect((await findings(d, 'payout_report_mismatch')).map((f) => f.status)).toEqual(['open']);
    expect((await findings(d, 'payout_unknown_invoice')).map((f) => f.status)).toEqual(['resolved']);
    await pass(d, at(5 * HOUR + 5 * MINUTE)); // past the margin after X's invoice event
    // An invoice event of a reference the report's row names (Doc No INV-D): every kind is judged.
    await invoiceEvent(d, { ref: 'INV-D', eventTime: iso(5 * HOUR + 6 * MINUTE) });
    const named = await pass(d, at(5 * HOUR + 7 * MINUTE));
    expect(judged(named)).toEqual({ judged: true, reason: 'an invoice event arrived' });
    expect(named.found.payout_report_mismatch).toBe(1);
    await pass(d, at(6 * HOUR + 8 * MINUTE)); // past the margin after it
    // So is a factoring event naming it (the row's payment method); one naming no row is not.
    await factoringEvent(d, { ref: 'INV-B', receivedAt: iso(6 * HOUR + 9 * MINUTE) });
    expect(judged(await pass(d, at(6 * HOUR + 10 * MINUTE)))).toEqual({ judged: true, reason: 'a factoring event arrived', standing: reportKinds });
    await pass(d, at(7 * HOUR + 11 * MINUTE));
    await factoringEvent(d, { ref: 'INV-D', receivedAt: iso(7 * HOUR + 12 * MINUTE) });
    expect(judged(await pass(d, at(7 * HOUR + 13 * MINUTE)))).toEqual({ judged: true, reason: 'a factoring event arrived' });
    await pass(d, at(8 * HOUR + 14 * MINUTE));
    await payoutEvent(d, { sepa: 'PO2026000000000003', cents: 9_700n, eventTime: iso(8 * HOUR + 15 * MINUTE), invoices: ['INV-A'] });
    const paid = await pass(d, at(8 * HOUR + 16 * MINUTE));
    expect(judged(paid)).toEqual({ judged: true, reason: 'a payout event arrived or crossed the grace period' });
    expect((await findings(d, 'invoice_not_paid_out')).find((f) => f.entity_id === inv.A)?.status).toBe('resolved');

    // A full pass right after changes nothing the incremental ones left.
    const settled = await invoiceFindings(d);
    const full = await pass(d, at(8 * HOUR + 17 * MINUTE), { full: true });
    expect(full).toMatchObject({ mode: 'full', opened: 0, reopened: 0, resolved: 0 });
    expect(await invoiceFindings(d)).toEqual(settled);
  });
});
