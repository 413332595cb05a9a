import type { TransactionSql } from 'postgres';
import { insertIntoFound } from '../found.js';
import type { Rule, RuleParams } from '../types.js';
import { invoiceSettings } from './invoice-common.js';
import { topic } from '../../provider/vocabulary.js';
import { invoiceCreation, invoiceCreationBound } from '../../ledger/invoices.js';

/**
 * payout_deduction_mismatch: a payout report row keeps back what the contract (CONTRACT_TERMS)
 * does not allow, or its own figures do not add up. Without CONTRACT_TERMS deductions are
 * reported, not judged: this rule finds nothing.
 *
 * Evidence: a stored payout report row (payout_report_rows) of a payout whose latest event is
 * payout/complete, and at least one of these (docs/contract-terms.md, "What is checked"):
 *  - on every row, its own arithmetic, exactly: gross (Gross Purchase Price is not the Transaction
 *    Amount), total (Total Deductions is not Discount + Transaction Fee + VAT on Discount), transfer
 *    (Transfer Amount is not Gross Purchase Price - Total Deductions);
 *  - on rows in the contract's currency (or of unstated currency), against the contract:
 *    - mdr: an invoice row's MDR % column, when present, is not the contract's rate for it;
 *    - discount: on an invoice row whose MDR the contract gives, |Discount - Transaction Amount x
 *      MDR| >= 1 cent (the documented rounding: a reported value is accepted when it is the exact
 *      one rounded up or down to the cent). The MDR is the most specific entry for the invoice's
 *      payment method and payment terms (its latest factoring event naming a method, approved
 *      first): method and terms, then method, then the default. No entry fits, the method is
 *      unknown while the contract has method entries, or the terms are unknown while it has entries
 *      per terms for the method: not judged;
 *    - fee: the order's first invoice row in a completed payout (by its invoice's creation, the
 *      invoice/created event's time to the nanosecond, when every row of the order has an
 *      invoice/created event, else by payout time, then line; the order is
 *      the invoice event's order, else the order another row of the same Order No names, else the
 *      Order No) must carry the contract's fixed fee, every later invoice row of the order and
 *      every other row 0 (charged twice, or not on the first invoice); in the first row's payout
 *      the fee on exactly one of the order's rows there, 0 on the others, is accepted whichever
 *      row carries it. Not judged on an invoice row with no order known, nor on the first row when
 *      another invoice of the order may carry the fee: one an earlier completed payout lists whose
 *      report row for it is not stored (the fee may have been charged there), or one with no report
 *      row of a completed payout stored that may have been created first: no invoice/created
 *      received, or its time no later than the first row's invoice's (its invoice/created, else its
 *      first event of any topic: created no later than that), or the first row has no invoice event;
 *    - vat: on an invoice row, |VAT on Discount - Discount x VAT %| >= 1 cent (vat_on_fixed_fee
 *      false), |VAT on Discount - (Discount + Transaction Fee) x VAT %| >= 1 cent (true), or both
 *      (not set: provider-merchant-docs.md's "VAT on the fee" reads as the Discount alone, a
 *      contract may charge it on the fixed fee too; a row fitting either proves no mismatch).
 *  Credit notes, buyer payments and disputes are not judged on their Discount or VAT: the provider's
 *  documentation gives them a fee rate of their own ("Discount %: the total fee rate applied to the
 *  document"), which the contract does not state.
 *
 * Near misses: a discount or VAT off by less than a cent (rounded the other way); the fixed fee on
 * the first invoice of an order and none on its second, also across payouts, when the report lists
 * the second above the first, and when the first is paid out after the second; a cancelled payout's
 * rows; a credit note that refunds its share of the fee; an invoice whose payment method or terms
 * no MDR entry decides.
 *
 * Entity the invoice (the uuid of the invoice whose reference is the row's Doc No, else the Doc No), subject
 * the payout's uuid (for credit note, buyer payment and dispute rows the payout's uuid and the
 * doc type, so one payout's invoice and its buyer payment stay apart); expected and observed list
 * each failing check as name=cents, e.g. fee=30 / fee=60. Resolves when the terms change to agree
 * (rows are never replaced), or by acknowledgement.
 */
export const payoutDeductionMismatch: Rule = {
  kind: 'payout_deduction_mismatch',
  entities: ['invoice'],
  async collect(tx: TransactionSql, p: RuleParams): Promise<number> {
    const { terms } = invoiceSettings(p);
    if (!terms) return 0;
    const mdr = JSON.stringify(terms.mdr.map((m) => ({ payment_method: m.paymentMethod, payment_terms_days: m.paymentTermsDays, rate_micros: m.rateMicros })));
    const result = await tx`
      with terms as materialized (
        select * from jsonb_to_recordset(${mdr}::text::jsonb) as m(payment_method text, payment_terms_days int, rate_micros bigint)
      ),
      general as (select not exists (select 1 from terms where payment_method is not null or payment_terms_days is not null) as general_only),
      -- The currency test is a column, not a filter: as a filter the planner guessed 0.5 % of the
      -- rows passed it and probed the invoices row by row for all of them.
      report as materialized (
        select w.*, l.anchor, l.sepa_instruction_id,
               (${terms.currency}::text is null or w.currency is null or upper(w.currency) = upper(${terms.currency}::text)) as judged
        from payout_report_rows w
        join pass_payouts l on l.payout_uuid = w.payout_uuid and l.status = 'complete'
        where w.environment = ${p.environment}
      ),
      -- Each invoice row's invoice (of those with its reference, one naming an order first, then
      -- the first created: pass_invoices) and payment method (the latest factoring event naming
      -- one, approved first), each as one join: looked up row by row they took 45 s for 1,000,000
      -- rows (bench/README.md, reconcile).
      invoice_of as (
        select distinct on (ref) ref as doc_no, invoice_uuid, order_uuid
        from pass_invoices
        order by ref, (order_uuid is null), created_at, invoice_uuid
      ),
      method_of as (
        select distinct on (f.invoice_external_reference_id) f.invoice_external_reference_id as doc_no, f.payment_method, f.payment_terms_days
        from factoring_events f
        where f.environment = ${p.environment} and f.payment_method is not null and f.invoice_external_reference_id is not null
        order by f.invoice_external_reference_id, (f.topic = ${topic('factoring/approved')}) desc, f.received_at desc, f.event_key desc
      ),
      with_invoice as (
        select r.*, i.invoice_uuid, i.order_uuid as invoice_order_uuid, fa.payment_method, fa.payment_terms_days
        from report r
        left join invoice_of i on r.doc_type = 'invoice' and i.doc_no = r.doc_no
        left join method_of fa on r.doc_type = 'invoice' and fa.doc_no = r.doc_no
      ),
      -- An Order No whose other rows' invoices name one order is that order, so an invoice with no
      -- invoice event of its own still counts under the order its sibling's event names.
      order_of_no as (
        select order_no, (array_agg(distinct invoice_order_uuid))[1] as order_uuid
        from with_invoice
        where order_no is not null and invoice_order_uuid is not null
        group by order_no
        having count(distinct invoice_order_uuid) = 1
      ),
      rows as (
        select w.*, coalesce(w.invoice_order_uuid, o.order_uuid) as order_uuid,
               case when w.doc_type = 'invoice' and w.judged
                    then coalesce(coalesce(w.invoice_order_uuid, o.order_uuid)::text, 'order-no:' || w.order_no) end collate "C" as order_key
        from with_invoice w
        left join order_of_no o on o.order_no = w.order_no
      ),
      -- The fee is "charged once per order, on its first invoice" (provider-merchant-docs.md): the
      -- invoice created first, not the row a report lists first nor the one paid out first (an
      -- export sorted by Doc No, or a first invoice held in review and paid after the second, made
      -- two false findings when ranked by payout and line). By the invoice's creation when every
      -- row of the order has one, the payout time, payout and line breaking ties; by those alone
      -- when one has none. The creation is the invoice/created event's own time, as text to the
      -- nanosecond (ledger/invoices.ts invoiceCreation says why not pass_invoices.created_at: a
      -- later event's time standing in for a missing invoice/created, and microseconds, each made
      -- false findings). None: no invoice event (its order came from its Order No), or no
      -- invoice/created received. Looked up for the orders with more than one row only: one row is
      -- first whatever its creation.
      several as (
        select order_key from rows where order_key is not null group by order_key having count(*) > 1
      ),
      created_of as (
        ${invoiceCreation(tx, p.environment, tx`select r.invoice_uuid from rows r join several s on s.order_key = r.order_key where r.invoice_uuid is not null`)}
      ),
      order_known as (
        select r.order_key, bool_and(c.created_key is not null) as known
        from rows r
        join several s on s.order_key = r.order_key
        left join created_of c on c.invoice_uuid = r.invoice_uuid
        group by r.order_key
      ),
      -- The first invoice row of each order, sorted on the few columns that decide it: sorting the
      -- whole rows spilled 230 MB to disk at 1,000,000 rows.
      first_of_order as (
        select distinct on (r.order_key) r.order_key, r.payout_uuid, r.doc_no
        from rows r
        left join order_known k on k.order_key = r.order_key
        left join created_of c on c.invoice_uuid = r.invoice_uuid
        where r.order_key is not null
        order by r.order_key, case when k.known then c.created_key end collate "C", r.anchor, r.payout_uuid, r.line, r.doc_no
      ),
      ranked as (
        select r.*, f.payout_uuid as first_payout_uuid,
               case when r.order_key is null then null
                    when f.payout_uuid = r.payout_uuid and f.doc_no = r.doc_no then 1 else 2 end as nth
        from rows r
        left join first_of_order f on f.order_key = r.order_key
      ),
      -- Within the payout of the order's first row, the fee on exactly one of the order's rows
      -- there and 0 on the others is accepted whichever row carries it: that payout charged it
      -- once, and which of its rows is the first invoice is what creation times (ties, or none)
      -- may not decide.
      fee_once as (
        select order_key, payout_uuid
        from ranked
        where order_key is not null and payout_uuid = first_payout_uuid
        group by order_key, payout_uuid
        having count(*) filter (where transaction_fee_cents <> 0) = 1
           and sum(transaction_fee_cents) = ${terms.fixedFeeCents.toString()}::numeric
      ),
      -- The MDR entry for each payment method and terms the rows have (a few), not for each row.
      -- Terms unknown while the contract has entries per terms for the method: no rate (a guess).
      rates as (
        select c.payment_method, c.payment_terms_days, m.rate_micros
        from (select distinct payment_method, payment_terms_days from rows where doc_type = 'invoice' and judged) c
        cross join lateral (
          select t.rate_micros from terms t
          where (c.payment_method is not null or (select general_only from general))
            and not (c.payment_method is not null and c.payment_terms_days is null
                     and exists (select 1 from terms d where d.payment_method = c.payment_method and d.payment_terms_days is not null))
            and (t.payment_method is null or t.payment_method = c.payment_method)
            and (t.payment_terms_days is null or t.payment_terms_days = c.payment_terms_days)
          order by (t.payment_method is not null)::int * 2 + (t.payment_terms_days is not null)::int desc limit 1
        ) m
      ),
      expected as (
        select r.*, m.rate_micros,
               case when not r.judged then null
                    when r.doc_type <> 'invoice' then 0::bigint
                    when r.nth = 1 then ${terms.fixedFeeCents.toString()}::bigint
                    when r.nth > 1 then 0::bigint end as fee_expected
        from ranked r
        left join rates m on r.doc_type = 'invoice' and r.judged
          and m.payment_method is not distinct from r.payment_method and m.payment_terms_days is not distinct from r.payment_terms_days
      ),
      -- A first row whose fee is not the contract's is not judged when another invoice of the order
      -- may carry it: one a completed payout before the row's lists with no report row for it stored
      -- (the fee may have been charged there; with that row stored, its fee is known and ranked
      -- above), or one with no report row of a completed payout stored that may have been created
      -- first (it is the order's first invoice, paid out without a report imported or not paid out
      -- yet: the fee is charged there). May have been created first: its invoice/created time is no
      -- later than the latest the row's invoice can have been created (its invoice/created time,
      -- else its first event's: invoiceCreationBound, to the nanosecond), or either is unknown (no
      -- invoice/created of the other invoice, no event of the row's). Not pass_invoices.created_at:
      -- for the other invoice it too falls back to the first event of any topic, so an earlier
      -- invoice whose invoice/created was lost and whose invoice/complete came after the row's
      -- creation counted as created later (a false fee finding). Looked up for those few rows only
      -- (every first row: a hash of all invoices).
      fee_suspects as materialized (
        select order_uuid, payout_uuid, doc_no, anchor, invoice_uuid from expected
        where nth = 1 and order_uuid is not null and transaction_fee_cents <> fee_expected
      ),
      fee_siblings as materialized (
        select s.payout_uuid, s.doc_no, s.anchor, s.invoice_uuid as suspect_uuid, i.invoice_uuid, i.ref
        from fee_suspects s
        join pass_invoices i on i.order_uuid = s.order_uuid and i.ref <> s.doc_no
      ),
      fee_created as (
        ${invoiceCreationBound(tx, p.environment, tx`select invoice_uuid from fee_suspects where invoice_uuid is not null union select invoice_uuid from fee_siblings`)}
      ),
      fee_unknown as (
        select distinct s.payout_uuid, s.doc_no
        from fee_siblings s
        left join fee_created cs on cs.invoice_uuid = s.suspect_uuid
        left join fee_created ci on ci.invoice_uuid = s.invoice_uuid
        where exists (select 1 from pass_listings l
                      where l.ref = s.ref and l.status = 'complete' and (l.anchor, l.payout_uuid) < (s.anchor, s.payout_uuid)
                        and not exists (select 1 from payout_report_rows w
                                        where w.environment = ${p.environment} and w.payout_uuid = l.payout_uuid
                                          and w.doc_type = 'invoice' and w.doc_no = l.ref))
           or ((ci.created_key is null or cs.created_by_key is null or ci.created_key <= cs.created_by_key)
               and not exists (select 1 from payout_report_rows w
                               join pass_payouts l on l.payout_uuid = w.payout_uuid and l.status = 'complete'
                               where w.environment = ${p.environment} and w.doc_no = s.ref and w.doc_type = 'invoice'))
      ),
      -- Each check's verdict per row first; what was expected and reported is spelled out for the
      -- failing rows only (a handful), not for every row. Sums in numeric: a report may hold amounts
      -- whose sum a bigint cannot (the reader accepts any amount a bigint stores). Every row is
      -- checked for its own arithmetic; the contract's checks (mdr, discount, vat on invoice rows,
      -- the fee on every row) only for rows in the contract's currency.
      verdicts as (
        select e.*,
               e.doc_type = 'invoice' and e.mdr_rate_micros is not null and e.mdr_rate_micros <> e.rate_micros as mdr_failed,
               e.doc_type = 'invoice' and abs(e.discount_cents::numeric * 1000000 - e.transaction_amount_cents::numeric * e.rate_micros) >= 1000000 as discount_failed,
               e.transaction_fee_cents <> e.fee_expected
                 and not exists (select 1 from fee_unknown u where u.payout_uuid = e.payout_uuid and u.doc_no = e.doc_no)
                 and not exists (select 1 from fee_once o where o.order_key = e.order_key and o.payout_uuid = e.payout_uuid) as fee_failed,
               -- VAT on the Discount, or on the Discount and the fixed fee (ContractTerms.vatOnFixedFee):
               -- a reading the terms leave open fails only when the row fits neither.
               e.doc_type = 'invoice' and e.judged
                 and (${terms.vatOnFixedFee ?? null}::boolean is true
                      or abs(e.vat_on_discount_cents::numeric * 1000000 - e.discount_cents::numeric * ${terms.vatRateMicros}) >= 1000000)
                 and (${terms.vatOnFixedFee ?? null}::boolean is false
                      or abs(e.vat_on_discount_cents::numeric * 1000000 - (e.discount_cents::numeric + e.transaction_fee_cents) * ${terms.vatRateMicros}) >= 1000000) as vat_failed,
               e.total_deductions_cents::numeric <> e.discount_cents::numeric + e.transaction_fee_cents + e.vat_on_discount_cents as total_failed,
               e.transfer_amount_cents::numeric <> e.gross_purchase_price_cents::numeric - e.total_deductions_cents as transfer_failed,
               e.gross_purchase_price_cents <> e.transaction_amount_cents as gross_failed
        from expected e
      ),
      checks as (
        select v.*, c.name, c.want, c.got
        from verdicts v
        cross join lateral (values
          ('mdr', trim_scale(v.rate_micros::numeric / 10000), trim_scale(v.mdr_rate_micros::numeric / 10000), v.mdr_failed),
          ('discount', round(v.transaction_amount_cents::numeric * v.rate_micros / 1000000), v.discount_cents::numeric, v.discount_failed),
          ('fee', v.fee_expected::numeric, v.transaction_fee_cents::numeric, v.fee_failed),
          ('vat', round((v.discount_cents::numeric + case when ${terms.vatOnFixedFee ?? null}::boolean is true then v.transaction_fee_cents else 0 end)
                        * ${terms.vatRateMicros} / 1000000), v.vat_on_discount_cents::numeric, v.vat_failed),
          ('total', v.discount_cents::numeric + v.transaction_fee_cents + v.vat_on_discount_cents, v.total_deductions_cents::numeric, v.total_failed),
          ('transfer', v.gross_purchase_price_cents::numeric - v.total_deductions_cents, v.transfer_amount_cents::numeric, v.transfer_failed),
          ('gross', v.transaction_amount_cents::numeric, v.gross_purchase_price_cents::numeric, v.gross_failed)
        ) as c(name, want, got, failed)
        where (v.mdr_failed or v.discount_failed or v.fee_failed or v.vat_failed or v.total_failed or v.transfer_failed or v.gross_failed) and c.failed
      ),
      judged as (
        select payout_uuid, sepa_instruction_id, doc_type, doc_no, invoice_uuid, line, upper(currency) as currency,
               string_agg(name || '=' || want::text, ';' order by name) as want,
               string_agg(name || '=' || got::text, ';' order by name) as got
        from checks
        group by payout_uuid, sepa_instruction_id, doc_type, doc_no, invoice_uuid, line, upper(currency)
      )
      ${insertIntoFound(tx)}
      select ${p.environment}::provider_environment, 'payout_deduction_mismatch', 'invoice', coalesce(j.invoice_uuid::text, j.doc_no),
             case when j.doc_type = 'invoice' then j.payout_uuid::text else j.payout_uuid::text || ':' || j.doc_type::text end,
             case when j.doc_type = 'invoice' then j.doc_no end, j.sepa_instruction_id, j.want, j.got,
             format('Payout %s (SEPA reference %s), report row %s (%s %s): expected %s, reported %s.',
                    j.payout_uuid, coalesce(j.sepa_instruction_id, '(none)'), j.line, replace(j.doc_type::text, '_', ' '), j.doc_no, j.want, j.got),
             jsonb_build_object('payout_uuid', j.payout_uuid, 'doc_no', j.doc_no, 'doc_type', j.doc_type, 'line', j.line,
                                'expected', j.want, 'observed', j.got,
                                -- the row's currency (a row naming none is the contract's), for people: amounts are in it
                                'currency', coalesce(j.currency, upper(${terms.currency}::text))),
             md5(j.doc_no || '|' || j.want || '|' || j.got)
      from judged j`;
    return result.count;
  },
};
