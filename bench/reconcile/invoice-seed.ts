import type { Sql } from 'postgres';

/**
 * The invoice-to-cash part of the reconciliation benchmark's ledger (issue 24), seeded beside the
 * orders by seed.ts when asked: per order one invoice (invoice/created, invoice/payment,
 * invoice/complete with its gross amount, external_reference_id INV-<i> as the invoice reference)
 * and a factoring/approved naming it; payouts of 50 invoices each (payout/complete listing their
 * references, the amount the sum of the report's transfers); one payout report per payout with one
 * row per invoice, deducted as BENCH_CONTRACT_TERMS says (Discount = amount x MDR, the fixed fee on
 * the order's first invoice, VAT on both, each rounded half away from zero: src/payout-reports/
 * deductions.ts); each payout's bank credit in one statement. Every event also has its delivery
 * (seed.ts writes the deliveries of bench_ev, and these rows join it).
 *
 * One fault in 10,000 orders of each invoice kind, by i % 10,000 (clear of the order faults, which
 * are i % 1000 in 1..5), and one in 200 payouts of payout_report_mismatch:
 *  11 invoice_not_paid_out: factored ten days ago (INVOICE_PAYOUT_DAYS is 7), no payout lists it;
 *  12 invoice_paid_out_twice: a second payout, of another SEPA reference, lists it again (its
 *     report row carries no fixed fee: the order's fee was charged on the first);
 *  13 payout_pays_canceled_invoice: invoice/canceled minutes after creation, hours before its payout;
 *  14 buyer_paid_merchant_directly: a bank credit from the buyer naming the invoice;
 *  15 payout_deduction_mismatch: the report row charges the fixed fee twice (60 cents, VAT on it);
 *  payout p % 200 = 7: payout_report_mismatch: the payout event says one cent more than its report.
 */

/** The simulator's default contract (sim/contract.ts DEFAULT_CONTRACT_TERMS), as CONTRACT_TERMS reads it. */
export const BENCH_CONTRACT_TERMS = JSON.stringify({
  currency: 'EUR',
  mdr: [
    { payment_method: 'bank_transfer', payment_terms_days: 30, percent: '2.5' },
    { payment_method: 'bank_transfer', percent: '2.9' },
    { percent: '3.0' },
  ],
  fixed_fee_cents: 30,
  vat_percent: '19',
});

export const INVOICES_PER_PAYOUT = 50;

/** Main payouts: invoices 1-50 in payout 1, and so on. */
export function payoutCount(orders: number): number {
  return Math.ceil(orders / INVOICES_PER_PAYOUT);
}

/**
 * The invoice-to-cash events seed.ts adds to its bench_ev source (columns i, entity_type, topic,
 * state, seq, at): factoring per order, the cancellations, the payouts (i = payout number; the
 * second payouts of the paid-twice faults are number payouts + i).
 */
export function invoiceToCashEvents(sql: Sql, orders: number) {
  const payouts = payoutCount(orders);
  return sql`
    union all
    select i, 'factoring', 'factoring/approved', null, 8,
           case when i % 10000 = 11 then now() - interval '10 days' + (i % 3600) * interval '1 second' end
    from generate_series(1, ${orders}) i
    union all
    select i, 'invoice', 'invoice/canceled', null, 9, null from generate_series(1, ${orders}) i where i % 10000 = 13
    union all
    select p, 'payout', 'payout/complete', null, 0, now() - interval '6 hours' + (p % 3600) * interval '1 second'
    from generate_series(1, ${payouts}) p
    union all
    select ${payouts} + i, 'payout', 'payout/complete', null, 0, now() - interval '3 hours'
    from generate_series(1, ${orders}) i where i % 10000 = 12`;
}

/** The delivery entity uuid of each bench_ev row, by entity type. */
export function entityIdOf(sql: Sql) {
  return sql`case entity_type when 'order' then md5('o' || i) when 'invoice' then md5('inv' || i)
                              when 'factoring' then md5('f' || i) else md5('p' || i) end::uuid::text`;
}

const MERCHANT_IBAN = 'DE02100100109307118603';
const PROVIDER_IBAN = 'DE89370400440532013000';

/** Writes the typed rows of the invoice-to-cash events in bench_ev, the reports and the statement; returns the seeded faults. */
export async function seedInvoiceToCash(sql: Sql, orders: number): Promise<Record<string, number>> {
  const payouts = payoutCount(orders);
  const gross = sql`(5000 + (i::bigint * 7919) % 95000)`;
  await sql`
    insert into invoice_events (environment, event_key, topic, received_at, invoice_uuid, order_uuid, external_reference_id,
                                event_time, event_time_sortable, gross_amount_cents, amount_cents)
    select 'sandbox', event_key, topic, ts + interval '1 second', entity_id::uuid, order_uuid, 'INV-' || i, sortable, sortable,
           case when topic = 'invoice/complete' then ${gross} end, case when topic = 'invoice/complete' then ${gross} end
    from bench_ev where entity_type = 'invoice'`;
  await sql`
    insert into factoring_events (environment, event_key, topic, received_at, factoring_uuid, invoice_external_reference_id, invoice_uuid,
                                  factoring_state, invoice_amount_cents, payment_method, payment_terms_days)
    select 'sandbox', event_key, topic, ts + interval '1 second', entity_id::uuid, 'INV-' || i, md5('inv' || i)::uuid,
           'approved', ${gross}, case when i % 4 = 3 then 'direct_debit' else 'bank_transfer' end, case when i % 2 = 0 then 30 else 14 end
    from bench_ev where entity_type = 'factoring'`;
  // One report row per invoice a payout lists, with the contract's deductions: MDR 2.5 % for
  // bank_transfer at 30 days, 2.9 % for bank_transfer otherwise, 3.0 % for direct_debit.
  await sql`
    create unlogged table bench_rows as
    with listed as (
      select i, ((i - 1) / ${INVOICES_PER_PAYOUT} + 1)::int as p, 1 as nth from generate_series(1, ${orders}) i where i % 10000 <> 11
      union all
      select i, ${payouts} + i, 2 from generate_series(1, ${orders}) i where i % 10000 = 12
    ),
    priced as (
      select l.i, l.p, ${gross} as g,
             case when i % 4 = 3 then 30000 when i % 2 = 0 then 25000 else 29000 end as rate,
             (case when l.nth = 2 then 0 when i % 10000 = 15 then 60 else 30 end)::bigint as fee
      from listed l
    ),
    discounted as (select *, round(g * rate / 1000000.0)::bigint as discount from priced)
    select *, round((discount + fee) * 190000 / 1000000.0)::bigint as vat from discounted`;
  await sql`
    create unlogged table bench_payouts as
    select p, md5('p' || p)::uuid as payout_uuid, 'PO' || lpad(p::text, 16, '0') as sepa,
           array_agg('INV-' || i order by i) as refs, sum(g - discount - fee - vat)::bigint as transfer, count(*)::int as n,
           sum(g - discount - fee - vat)::bigint + case when p <= ${payouts} and p % 200 = 7 then 1 else 0 end as amount
    from bench_rows group by p`;
  await sql`
    insert into payout_events (environment, event_key, topic, received_at, payout_uuid, status, sepa_instruction_id, amount_cents,
                               external_reference_ids, event_time, event_time_sortable)
    select 'sandbox', e.event_key, e.topic, e.ts + interval '1 second', b.payout_uuid, 'complete', b.sepa, b.amount, b.refs, e.sortable, e.sortable
    from bench_ev e join bench_payouts b on b.p = e.i where e.entity_type = 'payout'`;
  await sql`
    insert into payout_reports (id, environment, sha256, file_name, format, imported_at, row_count)
    select p, 'sandbox', md5('report' || p), 'payout-' || sepa || '.csv', 'csv', now() - interval '2 hours', n from bench_payouts`;
  await sql`select setval('payout_reports_id_seq', (select max(id) from payout_reports))`;
  await sql`
    insert into payout_report_rows (environment, report_id, line, payout_uuid, order_no, doc_no, doc_type, currency,
                                    transaction_amount_cents, discount_rate_micros, mdr_rate_micros, transaction_fee_cents,
                                    gross_purchase_price_cents, discount_cents, vat_on_discount_cents, transfer_amount_cents, total_deductions_cents)
    select 'sandbox', r.p, 1 + row_number() over (partition by r.p order by r.i), b.payout_uuid, 'EXT-' || r.i, 'INV-' || r.i, 'invoice', 'EUR',
           r.g, r.rate, r.rate, r.fee, r.g, r.discount, r.vat, r.g - r.discount - r.fee - r.vat, r.discount + r.fee + r.vat
    from bench_rows r join bench_payouts b on b.p = r.p`;
  const [statement] = await sql<{ id: string }[]>`
    insert into bank_statements (environment, file_sha256, file_name, format, account_iban, period_from, period_to, imported_at, line_count, statement_count)
    values ('sandbox', md5('bench statement'), 'statement.xml', 'camt053', ${MERCHANT_IBAN}, now() - interval '2 days', now(), now() - interval '2 hours',
            (select count(*) from bench_payouts) + (select count(*) from generate_series(1, ${orders}) i where i % 10000 = 14), 1)
    returning id`;
  const statementId = statement!.id;
  await sql`
    insert into statement_periods (statement_id, section_index, environment, period_from, period_to, account_iban)
    values (${statementId}, 0, 'sandbox', now() - interval '2 days', now(), ${MERCHANT_IBAN})`;
  // The payouts' credits, then the buyers' direct payments (14): their remittance names the invoice.
  await sql`
    insert into statement_lines (environment, statement_id, line_key, position_key, entry_key, entry_index, tx_index, account_iban,
                                 booking_date, value_date, amount_cents, currency, direction, counterparty_iban, counterparty_name,
                                 end_to_end_id, bank_reference, remittance, sepa_reference)
    select 'sandbox', ${statementId}, 'bench:' || n, 'bench:' || n, 'bench:' || n, n, 0, ${MERCHANT_IBAN},
           current_date, current_date, amount, 'EUR', 'credit', iban, name, e2e, 'BR' || n, remittance, ref
    from (
      select p as n, amount, ${PROVIDER_IBAN}::text as iban, 'Provider GmbH' as name, sepa as e2e, 'Auszahlung ' || sepa as remittance, sepa as ref
      from bench_payouts
      union all
      select 100000000 + i, ${gross}, 'DE' || lpad((i % 100000000)::text, 20, '0'), 'Buyer ' || i, null, 'Rechnung INV-' || i, 'INV-' || i
      from generate_series(1, ${orders}) i where i % 10000 = 14
    ) l`;
  await sql`
    insert into statement_entries (environment, entry_key, statement_id, account_iban, booking_date, currency, direction, amount_cents,
                                   entry_reference, lines_entry_key, match)
    select environment, entry_key, statement_id, account_iban, booking_date, currency, direction, amount_cents, bank_reference, entry_key, 'new'
    from statement_lines where statement_id = ${statementId}`;
  await sql`drop table bench_rows, bench_payouts`;
  const everyTenThousandth = (k: number): number => (orders >= k ? Math.floor((orders - k) / 10000) + 1 : 0);
  return {
    invoice_not_paid_out: everyTenThousandth(11),
    invoice_paid_out_twice: everyTenThousandth(12),
    payout_pays_canceled_invoice: everyTenThousandth(13),
    buyer_paid_merchant_directly: everyTenThousandth(14),
    payout_deduction_mismatch: everyTenThousandth(15),
    payout_report_mismatch: payouts >= 7 ? Math.floor((payouts - 7) / 200) + 1 : 0,
  };
}
