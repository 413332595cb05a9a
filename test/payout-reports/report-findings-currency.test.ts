import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { discrepancySource } from '../../src/reports/discrepancies.js';
import type { DeductionTerms } from '../../src/reconcile/types.js';
import { createTestDatabase } from '../helpers/database.js';
import { factoringEvent, importReport, invoiceEvent, invoiceRow, pass, payoutEvent, TERMS, transferOf } from '../payout-reports/fixtures.js';

// The page's own module, as test/web/format.test.ts loads it.
interface PageFormat {
  moneyCents(cents: string, currency: string): string;
  namedCentsInText(text: string, currency: string): string;
}
const { moneyCents, namedCentsInText } = (await import(new URL('../../web/format.js', import.meta.url).href)) as PageFormat;

const day = (d: number) => `2026-03-${String(d).padStart(2, '0')}T06:00:00.000000000Z`;
const at = (d: number) => new Date(`2026-03-${String(d).padStart(2, '0')}T12:00:00Z`);

// provider-merchant-docs.md: payout report amounts "are in the payout's currency (EUR or GBP)";
// docs/contract-terms.md: `currency` absent, "the terms apply to every currency". The page
// (web/discrepancies.js, the finding's dialog) shows a payout_report_mismatch's expected/observed with
// moneyCents / namedCentsInText in the currency `d.currency || d.evidence?.currency || 'EUR'`, d being
// GET /api/discrepancies/{id}'s discrepancy (discrepancySource's row plus the stored evidence). Neither
// finding has an amount at stake, so its currency must come from its evidence: without it a GBP
// payout's figures were shown as euros.
describe('findings about a GBP payout report are shown in pounds on the page', () => {
  it('payout_report_mismatch and payout_deduction_mismatch of a GBP payout are not written in €', async () => {
    const d = await createTestDatabase('report_findings_currency');
    await invoiceEvent(d, { ref: 'INV-G', order: randomUUID(), eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-G', receivedAt: day(1) });
    const sepa = 'PO2026030200000061';
    const good = invoiceRow({ doc: 'INV-G', order: 'ORD-G', cents: 10_000n, ref: sepa }); // discount 250 at 2.5 %
    // The report keeps back 1.00 more discount than the contract's 2.5 %, and its transfer is what the payout paid less 1.00.
    const row = { ...good, currency: 'GBP' as const, discountCents: 350n, totalDeductionsCents: good.totalDeductionsCents + 100n, transferAmountCents: good.transferAmountCents - 100n };
    await payoutEvent(d, { sepa, cents: transferOf([good]), eventTime: day(2), invoices: ['INV-G'] });
    await importReport(d, [row]);
    const terms: DeductionTerms = { ...TERMS, currency: null };
    await pass(d, at(3), { terms });

    const source = discrepancySource(d, { environment: 'sandbox', status: 'all' });
    const rows = (await source.query(undefined, undefined)) as Record<string, unknown>[];
    const evidence = await d.sql<{ id: string; evidence: Record<string, unknown> | null }[]>`select id::text, evidence from discrepancies`;
    const detail = (kind: string) => {
      const r = rows.find((x) => x.kind === kind);
      expect(r, `no ${kind} finding`).toBeDefined();
      return { ...r!, evidence: evidence.find((e) => e.id === String(r!.id))?.evidence ?? null } as Record<string, unknown> & { evidence: Record<string, unknown> | null };
    };

    const shownIn = (f: { currency?: unknown; evidence: Record<string, unknown> | null }) => (f.currency as string | null) || (f.evidence?.currency as string | undefined) || 'EUR';
    const mismatch = detail('payout_report_mismatch');
    expect(mismatch.evidence?.currency).toBe('GBP');
    const mismatchCurrency = shownIn(mismatch);
    const shownExpected = moneyCents(String(mismatch.expected), mismatchCurrency);
    expect.soft(shownExpected, `payout_report_mismatch of a GBP payout: expected ${String(mismatch.expected)} cents shown as '${shownExpected}'`).toBe(moneyCents(String(mismatch.expected), 'GBP'));

    const deduction = detail('payout_deduction_mismatch');
    expect(deduction.evidence?.currency).toBe('GBP');
    const shownDeduction = namedCentsInText(String(deduction.observed), shownIn(deduction));
    expect.soft(shownDeduction, `payout_deduction_mismatch of a GBP row: observed '${String(deduction.observed)}' shown as '${shownDeduction}'`)
      .toBe(namedCentsInText(String(deduction.observed), 'GBP'));
  });
});
