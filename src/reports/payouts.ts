import type { Writable } from 'node:stream';
import type { ProviderEnvironment } from '../config/schema.js';
import { instructedCurrency, payoutCredits } from '../ledger/payout-credits.js';
import { latestPayoutEvents } from '../ledger/payouts.js';
import type { Database } from '../db/database.js';
import type { CsvOptions, ReportFormat, ReportShape } from './format.js';
import { decimalAmount, REPORT_TIME_FORMAT, streamSource, type ReportSource } from './source.js';
import type { StreamResult } from './writer.js';

/** The payout's composition from its payout report, each as cents and decimal (payoutsSource says how). */
const COMPOSITION = ['gross', 'fee', 'vat', 'credit_notes', 'buyer_payments', 'other_deductions', 'net'] as const;

/**
 * CONTRACT.md, `report payouts`: payout, SEPA reference, amount, status, matched bank line, invoices;
 * the decimal amount and its currency stand next to the cents, and what the bank credited (and the
 * difference from the payout) follows.
 */
export const PAYOUT_COLUMNS = [
  'payout_uuid', 'sepa_reference', 'amount_cents', 'amount', 'currency', 'status', 'matched_bank_line', 'invoice_references',
  'credited_cents', 'credited_amount', 'difference', 'received_at',
  ...COMPOSITION.flatMap((c) => [`report_${c}_cents`, `report_${c}`] as const),
] as const;

export const PAYOUT_SHAPE: ReportShape = {
  columns: PAYOUT_COLUMNS,
  numeric: new Set(['amount_cents', 'amount', 'credited_cents', 'credited_amount', 'difference', ...COMPOSITION.flatMap((c) => [`report_${c}_cents`, `report_${c}`])]),
  timestamps: new Set(['received_at']),
};

/**
 * One row per payout from its latest payout event (ledger/payouts.ts latestPayoutEvents; its SEPA
 * reference the latest one any of its events named). matched_bank_line: every bank credit carrying the
 * payout's SEPA reference (as its reference or in its remittance text, compared upper-case), as '<bank entry
 * reference, or #line id> <booking date>' joined with ';', empty when none, and empty for a payout
 * whose reference another payout announced first (ledger/payout-credits.ts payoutCredits), with a
 * debit carrying the reference (a storno, a return) listed as '<reference> <date> debit'; invoice_references are
 * joined with ';'. credited_cents sums those credits less those debits; difference = credited − payout (decimal), empty
 * when nothing was credited. Lines in more than one currency are not added, nor lines in another
 * currency than the payout report's (a GBP payout booked converted into a EUR account), nor an FX
 * payment's: credited and difference are empty and each listed line ends with its currency.
 * Currency: the payout report's (its rows' Currency column or currency signs; rows naming none are
 * in `filters.currency`), else the currency an FX credit was instructed in, else the credits', else
 * `filters.currency`, the contract's
 * (payout-reports/contract-terms.ts unstatedCurrency: payout events name no currency), else EUR.
 * Cents leave Postgres as text (bigint), never a float.
 *
 * The composition, from the payout's report rows (payout_report_rows; empty until a report is
 * imported): gross = the invoice rows' Gross Purchase Price; fee = their Discount plus Transaction
 * Fee; vat = their VAT on Discount (another row's fee or VAT is in what it takes off); credit_notes, buyer_payments and other_deductions (disputes) = what
 * those rows take off (positive); net = the sum of every row's Transfer Amount, which
 * payout_report_mismatch compares with amount_cents. gross - fee - vat - credit_notes -
 * buyer_payments - other_deductions = net when the report's rows add up.
 */
export interface PayoutsFilters {
  environment: ProviderEnvironment;
  /** The currency of a payout nothing names one for: the contract's; unset, EUR. */
  currency?: string;
}

export function payoutsSource(database: Database, filters: PayoutsFilters): ReportSource {
  const { sql } = database;
  const unstated = filters.currency ?? 'EUR';
  return {
    sql,
    shape: PAYOUT_SHAPE,
    key: 'payout_uuid',
    query: (after, limit) => sql`
    -- Credit lines grouped once by the payout they pay (ledger/payout-credits.ts: the reference
    -- wherever the bank put it, a later payout claiming the same reference paid by none).
    with credits as materialized (
      -- Lines in two currencies have no sum (amounts of different currencies are never added:
      -- docs/how-it-decides.md): credited and difference stay empty, and each line names its
      -- currency instead.
      select payout_uuid, payout_reference, lines_with_currency, fx, instructed,
             case when currencies = 1 then lines else lines_with_currency end as lines,
             case when currencies = 1 then cents end as cents,
             case when currencies = 1 then currency end as currency
      from (
        select l.payout_uuid, l.payout_reference,
               string_agg(coalesce(l.bank_reference, '#' || l.id::text) || ' ' || l.booking_date::text
                          || case when l.direction = 'debit' then ' debit' else '' end, ';' order by l.booking_date, l.id) as lines,
               string_agg(coalesce(l.bank_reference, '#' || l.id::text) || ' ' || l.booking_date::text
                          || case when l.direction = 'debit' then ' debit' else '' end || ' ' || coalesce(upper(l.currency), 'no currency'),
                          ';' order by l.booking_date, l.id) as lines_with_currency,
               count(distinct coalesce(upper(l.currency), '')) as currencies,
               -- An FX payment: instructed in another currency than the one booked (statements/camt053.ts
               -- INSTRUCTED_NOTE), as payout_amount_mismatch reads it (reconcile/rules/payout-common.ts).
               coalesce(bool_or(${instructedCurrency(sql, sql`l.remittance`)} <> upper(l.currency)), false) as fx,
               min(${instructedCurrency(sql, sql`l.remittance`)}) as instructed,
               sum(l.signed_cents) as cents, min(upper(l.currency)) as currency
        from (${payoutCredits(sql, filters.environment)}) l
        group by l.payout_uuid, l.payout_reference
      ) grouped
    ),
    latest as (${latestPayoutEvents(sql, filters.environment, after)}),
    page as (select * from latest order by payout_uuid ${limit === undefined ? sql`` : sql`limit ${limit}`}),
    -- In numeric, as sum(bigint) is, and so the one addition before a sum: the reader accepts any
    -- amount a bigint stores (payout-reports/rows.ts MAX_CENTS), so one row's Discount + Transaction
    -- Fee, as bigint, can be "bigint out of range" on a row the import and the pass accept.
    composed as (
      select w.payout_uuid,
             sum(w.gross_purchase_price_cents) filter (where w.doc_type = 'invoice') as gross,
             sum(w.discount_cents::numeric + w.transaction_fee_cents) filter (where w.doc_type = 'invoice') as fee,
             sum(w.vat_on_discount_cents) filter (where w.doc_type = 'invoice') as vat,
             -sum(w.transfer_amount_cents) filter (where w.doc_type = 'credit_note') as credit_notes,
             -sum(w.transfer_amount_cents) filter (where w.doc_type = 'buyer_payment') as buyer_payments,
             -sum(w.transfer_amount_cents) filter (where w.doc_type = 'dispute') as other_deductions,
             sum(w.transfer_amount_cents) as net,
             min(upper(w.currency)) as currency
      from payout_report_rows w
      where w.environment = ${filters.environment} and w.payout_uuid in (select payout_uuid from page)
      group by w.payout_uuid
    )
    select e.payout_uuid::text as payout_uuid, e.sepa_reference, e.amount_cents::text as amount_cents,
           ${decimalAmount(sql, sql`e.amount_cents`)} as amount,
           case when e.amount_cents is not null or c.payout_uuid is not null or r.payout_uuid is not null
                then coalesce(x.report_currency, c.instructed, c.currency, ${unstated}::text) end as currency,
           e.status, case when x.comparable then c.lines else c.lines_with_currency end as matched_bank_line,
           array_to_string(e.external_reference_ids, ';') as invoice_references,
           case when x.comparable then c.cents end::text as credited_cents,
           case when x.comparable then ${decimalAmount(sql, sql`c.cents`)} end as credited_amount,
           case when x.comparable then ${decimalAmount(sql, sql`c.cents - e.amount_cents`)} end as difference,
           to_char(e.received_at at time zone 'UTC', ${REPORT_TIME_FORMAT}) as received_at
           ${COMPOSITION.map((c) => sql`,
             case when r.payout_uuid is not null then coalesce(${sql(`r.${c}`)}, 0)::text end as ${sql(`report_${c}_cents`)},
             case when r.payout_uuid is not null then ${decimalAmount(sql, sql`coalesce(${sql(`r.${c}`)}, 0)`)} end as ${sql(`report_${c}`)}`)}
    from page e
    left join credits c on c.payout_uuid = e.payout_uuid and c.payout_reference = e.sepa_key
    left join composed r on r.payout_uuid = e.payout_uuid
    -- A credit booked in another currency than the payout report's (a GBP payout converted into a
    -- EUR account) says nothing about the amount, as payout_amount_mismatch judges it: not added to
    -- nor subtracted from the payout's, and its lines name their currency.
    -- Report rows naming no currency are in the contract's (unstatedCurrency), as the deduction and
    -- amount rules take them.
    cross join lateral (
      select case when r.payout_uuid is not null then coalesce(r.currency, ${unstated}::text) end as report_currency
    ) rc
    cross join lateral (
      select rc.report_currency, not coalesce(c.fx, false) and (rc.report_currency is null or c.currency is not distinct from rc.report_currency) as comparable
    ) x
    order by e.payout_uuid`,
  };
}

export function streamPayoutsReport(
  database: Database,
  filters: PayoutsFilters,
  format: ReportFormat,
  writable: Writable,
  csv?: CsvOptions,
): Promise<StreamResult> {
  return streamSource(payoutsSource(database, filters), format, writable, csv);
}
