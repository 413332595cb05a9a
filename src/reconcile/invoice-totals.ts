import type { TransactionSql } from 'postgres';
import type { RuleParams } from './types.js';
import { topic } from '../provider/vocabulary.js';
import { factoredWithoutInvoiceEvent, invoiceSettings } from './rules/invoice-common.js';
import { unstatedCurrency } from '../payout-reports/contract-terms.js';

/**
 * Records on the pass's run (reconcile_runs.invoice_totals) what the invoice metrics show (money in
 * transit and what the payout reports kept back: payout-import/metrics.ts), from the invoice
 * evidence the pass staged (rules/invoice-common.ts) and the report rows:
 *  - in_transit / in_transit_cents: invoices whose latest factoring event is factoring/approved,
 *    not canceled, that no completed payout lists, and the sum of their factored amounts; with them
 *    the approved references no invoice event carries (rules/invoice-common.ts);
 *  - kept: per currency of the report rows (a row naming none is in the contract's currency, else
 *    EUR, as the deduction rule and the reports take it: unstatedCurrency),
 *    discount, fixed_fee, vat (invoice rows), credit_notes, buyer_payments, disputes (the amounts
 *    those rows took off the payout, their own fee and VAT included), in cents: the parts add up to
 *    what the reports kept back, as the payouts report's composition does. Amounts of two
 *    currencies are never added (docs/how-it-decides.md): a EUR and a GBP payout's 2.50 each were
 *    one "5.00". Before any report of a completed payout is imported, zeros in that same currency,
 *    so the gauges read "nothing kept back" rather than nothing. Only the rows of payouts
 *    whose latest event is payout/complete, as the deduction and buyer payment rules read them: a
 *    cancelled payout kept nothing back, and its documents are settled again by the payout that
 *    re-issues them (counting both doubled the totals).
 * Why here and not at scrape time: read from the ledger on each scrape it cost 0.9 s at 100,000
 * invoices (about 9 s at 1,000,000) on every scrape of every replica; the pass has the sets staged.
 * Amounts are decimal strings (cents beyond 2^53 stay exact).
 */
export async function recordInvoiceTotals(tx: TransactionSql, p: RuleParams, runId: number): Promise<void> {
  const currency = unstatedCurrency(invoiceSettings(p).terms);
  await tx`
    with transit as (
      select count(*) as n, coalesce(sum(o.invoice_amount_cents), 0) as cents
      from (
        select i.ref, f.invoice_amount_cents
        from pass_invoices i
        join pass_factoring f on f.ref = i.ref
        where f.topic = ${topic('factoring/approved')} and i.canceled_at is null
        union all
        select x.ref, x.invoice_amount_cents from (${factoredWithoutInvoiceEvent(tx, p.environment)}) x
      ) o
      where not exists (select 1 from pass_listings l where l.status = 'complete' and l.ref = o.ref)
    ),
    kept as (
      select coalesce(upper(w.currency), ${currency}::text) as currency,
             coalesce(sum(discount_cents) filter (where doc_type = 'invoice'), 0) as discount,
             coalesce(sum(transaction_fee_cents) filter (where doc_type = 'invoice'), 0) as fixed_fee,
             coalesce(sum(vat_on_discount_cents) filter (where doc_type = 'invoice'), 0) as vat,
             coalesce(-sum(transfer_amount_cents) filter (where doc_type = 'credit_note'), 0) as credit_notes,
             coalesce(-sum(transfer_amount_cents) filter (where doc_type = 'buyer_payment'), 0) as buyer_payments,
             coalesce(-sum(transfer_amount_cents) filter (where doc_type = 'dispute'), 0) as disputes
      from payout_report_rows w
      join pass_payouts l on l.payout_uuid = w.payout_uuid and l.status = 'complete'
      where w.environment = ${p.environment}
      group by 1
    )
    update reconcile_runs r
    set invoice_totals = jsonb_build_object(
          'in_transit', (select n from transit), 'in_transit_cents', (select cents::text from transit),
          'kept', (select coalesce(jsonb_object_agg(k.currency, jsonb_build_object(
                     'discount', k.discount::text, 'fixed_fee', k.fixed_fee::text, 'vat', k.vat::text,
                     'credit_notes', k.credit_notes::text, 'buyer_payments', k.buyer_payments::text, 'disputes', k.disputes::text)),
                   jsonb_build_object(${currency}::text, jsonb_build_object(
                     'discount', '0', 'fixed_fee', '0', 'vat', '0', 'credit_notes', '0', 'buyer_payments', '0', 'disputes', '0')))
                   from kept k))
    where r.id = ${runId}`;
}
