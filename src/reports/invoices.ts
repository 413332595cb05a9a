import type { Writable } from 'node:stream';
import { latestPayoutEvents } from '../ledger/payouts.js';
import type { ProviderEnvironment } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { decisionFirst, factoredOnlyInvoices, invoiceFacts } from '../ledger/invoices.js';
import { payoutCredits } from '../ledger/payout-credits.js';
import type { CsvOptions, ReportFormat, ReportShape } from './format.js';
import { decimalAmount, REPORT_TIME_FORMAT, streamSource, type ReportSource } from './source.js';
import type { StreamResult } from './writer.js';
import { topic } from '../provider/vocabulary.js';

/**
 * CONTRACT.md, `report invoices`: per invoice its reference, order, amount, factoring state, the
 * payout that paid it and when, the deductions, the net, the bank credit's date, the days from
 * invoice to cash and its open findings. Every amount as cents and as decimal with its currency.
 */
export const INVOICE_COLUMNS = [
  'invoice_uuid', 'reference', 'order_uuid', 'invoice_date', 'amount_cents', 'amount', 'currency', 'factoring_state', 'canceled',
  'payout_uuid', 'payout_sepa_reference', 'payout_date', 'payouts', 'deductions_cents', 'deductions', 'net_cents', 'net',
  'bank_credit_date', 'days_to_cash', 'open_findings',
] as const;

export const INVOICE_SHAPE: ReportShape = {
  columns: INVOICE_COLUMNS,
  numeric: new Set(['amount_cents', 'amount', 'payouts', 'deductions_cents', 'deductions', 'net_cents', 'net', 'days_to_cash', 'open_findings']),
  timestamps: new Set(['invoice_date', 'payout_date']),
  dates: new Set(['bank_credit_date']),
};

/**
 * One row per invoice (ledger/invoices.ts), and per approved invoice no invoice event names
 * (factoredOnlyInvoices: no order, date or days to cash), in invoice uuid order.
 *  - amount: the factored amount (latest factoring event with one), else the payout report row's
 *    Transaction Amount, else invoice/complete's gross amount;
 *  - factoring_state: the latest factoring event's, decision first (ledger/invoices.ts decisionFirst), empty without one;
 *  - payout: the first completed payout (by its event time) listing the reference; `payouts` counts
 *    them (2 or more: invoice_paid_out_twice);
 *  - deductions and net: that payout's report row for the invoice (Total Deductions, Transfer
 *    Amount), empty until its report is imported;
 *  - bank_credit_date: the first booking of a bank credit carrying the payout's SEPA reference;
 *    days_to_cash = that date - the invoice date (UTC days), empty until then;
 *  - open_findings: open discrepancies about the invoice (entity invoice).
 * Currency: the report row's, else `filters.currency`, the contract's (payout-reports/contract-terms.ts
 * unstatedCurrency: the provider's invoice and factoring events name none), else EUR.
 */
export function invoicesSource(database: Database, filters: { environment: ProviderEnvironment; currency?: string }): ReportSource {
  const { sql } = database;
  const env = filters.environment;
  return {
    sql,
    shape: INVOICE_SHAPE,
    key: 'invoice_uuid',
    query: (after, limit) => sql`
    with facts as materialized (${invoiceFacts(sql, env, { ...(after === undefined ? {} : { after }), ...(limit === undefined ? {} : { limit }) })}),
    -- Approved invoices no invoice event names (factoredOnlyInvoices): owed like any other, so listed.
    factored_only as materialized (
      select o.invoice_uuid, o.ref, null::uuid as order_uuid, null::timestamptz as created_at, null::timestamptz as canceled_at,
             null::bigint as gross_amount_cents
      from (${factoredOnlyInvoices(sql, env)}) o
      where o.invoice_uuid is not null ${after === undefined ? sql`` : sql`and o.invoice_uuid > ${after}::uuid`}
        and not exists (select 1 from invoice_events i where i.environment = ${env} and i.invoice_uuid = o.invoice_uuid)
      order by o.invoice_uuid
      ${limit === undefined ? sql`` : sql`limit ${limit}`}
    ),
    page as materialized (
      select * from (select invoice_uuid, ref, order_uuid, created_at, canceled_at, gross_amount_cents from facts
                     union all select * from factored_only) u
      order by invoice_uuid
      ${limit === undefined ? sql`` : sql`limit ${limit}`}
    ),
    latest as (${latestPayoutEvents(sql, env)}),
    listed as (
      select trim(r.ref) as ref, l.payout_uuid, l.sepa_key, l.sepa_reference, l.anchor,
             row_number() over (partition by trim(r.ref) order by l.anchor, l.payout_uuid) as nth,
             count(*) over (partition by trim(r.ref)) as payouts
      -- A payout's list may name an invoice twice ("INV-1, INV-1"): one payout, counted once.
      from latest l cross join lateral (select distinct trim(x) as ref from unnest(l.external_reference_ids) as x) r
      where l.status = 'complete' and trim(r.ref) in (select ref from page)
    ),
    -- Each credit is the payout's that holds its reference (ledger/payout-credits.ts payoutCredits).
    credits as (
      select c.payout_uuid, c.payout_reference, min(c.booking_date) as booked
      from (${payoutCredits(sql, env)}) c
      where c.payout_reference in (select sepa_key from listed where nth = 1) and c.direction = 'credit'
      group by c.payout_uuid, c.payout_reference
    )
    select p.invoice_uuid::text as invoice_uuid, p.ref as reference, p.order_uuid::text as order_uuid,
           to_char(p.created_at at time zone 'UTC', ${REPORT_TIME_FORMAT}) as invoice_date,
           a.cents::text as amount_cents, ${decimalAmount(sql, sql`a.cents`)} as amount,
           case when a.cents is not null then coalesce(w.currency, ${filters.currency ?? 'EUR'}::text) end as currency,
           split_part(f.topic, '/', 2) as factoring_state, (p.canceled_at is not null)::text as canceled,
           l.payout_uuid::text as payout_uuid, l.sepa_reference as payout_sepa_reference,
           to_char(l.anchor at time zone 'UTC', ${REPORT_TIME_FORMAT}) as payout_date, coalesce(l.payouts, 0)::text as payouts,
           w.total_deductions_cents::text as deductions_cents, ${decimalAmount(sql, sql`w.total_deductions_cents`)} as deductions,
           w.transfer_amount_cents::text as net_cents, ${decimalAmount(sql, sql`w.transfer_amount_cents`)} as net,
           c.booked::text as bank_credit_date, (c.booked - (p.created_at at time zone 'UTC')::date)::text as days_to_cash,
           (select count(*) from discrepancies d
            where d.environment = ${env} and d.entity_type = 'invoice' and d.entity_id = p.invoice_uuid::text and d.status = 'open')::text as open_findings
    from page p
    left join lateral (
      select e.topic, e.invoice_amount_cents from factoring_events e
      where e.environment = ${env} and e.invoice_external_reference_id = p.ref
      order by ${decisionFirst(sql, 'e.topic')}, e.received_at desc, e.event_key desc limit 1
    ) f on true
    left join listed l on l.ref = p.ref and l.nth = 1
    left join payout_report_rows w
      on w.environment = ${env} and w.payout_uuid = l.payout_uuid and w.doc_type = 'invoice' and w.doc_no = p.ref
    left join credits c on c.payout_uuid = l.payout_uuid and c.payout_reference = l.sepa_key
    cross join lateral (
      select coalesce((select e.invoice_amount_cents from factoring_events e
                       where e.environment = ${env} and e.invoice_external_reference_id = p.ref and e.invoice_amount_cents is not null
                       order by e.received_at desc, e.event_key desc limit 1),
                      w.transaction_amount_cents, p.gross_amount_cents) as cents
    ) a
    order by p.invoice_uuid`,
  };
}

export const AGEING_COLUMNS = ['bucket', 'invoices', 'amount_cents', 'amount', 'currency'] as const;

export const AGEING_SHAPE: ReportShape = { columns: AGEING_COLUMNS, numeric: new Set(['invoices', 'amount_cents', 'amount']) };

/** The ageing buckets, in whole days (24 hours each) elapsed since the invoice date. */
export const AGEING_BUCKETS = [
  { bucket: '0-7', from: 0, to: 7 },
  { bucket: '8-30', from: 8, to: 30 },
  { bucket: '31-60', from: 31, to: 60 },
  { bucket: 'over 60', from: 61, to: null },
] as const;

/**
 * The ageing of invoices not yet paid out: not canceled, factoring not declined (decision first),
 * and listed by no completed payout, and the approved invoices no invoice event names (aged from
 * their approval's arrival); by whole days since the invoice date at `now` (0 for an invoice dated later),
 * in the four buckets (every bucket present, zero when empty); amounts as in the invoices report
 * (the factored amount, else invoice/complete's gross; an invoice with no known amount is counted
 * and adds nothing), in `filters.currency`, the contract's (the events name none), else EUR.
 */
export function ageingSource(database: Database, filters: { environment: ProviderEnvironment; now?: Date; currency?: string }): ReportSource {
  const { sql } = database;
  const env = filters.environment;
  const now = (filters.now ?? new Date()).toISOString();
  const buckets = JSON.stringify(AGEING_BUCKETS.map((b, i) => ({ bucket: b.bucket, n: i, lo: b.from, hi: b.to })));
  return {
    sql,
    shape: AGEING_SHAPE,
    key: 'bucket',
    query: (after, limit) => sql`
    with b as (select * from jsonb_to_recordset(${buckets}::jsonb) as b(bucket text, n int, lo int, hi int)),
    paid as (
      select distinct trim(r.ref) as ref
      from (${latestPayoutEvents(sql, env)}) l
      cross join lateral unnest(l.external_reference_ids) as r(ref)
      where l.status = 'complete'
    ),
    waiting as (
      -- An invoice dated after \`now\` (a provider clock ahead of ours; the demo's simulated days) is
      -- the newest there is: 0 days old, so the buckets still add up to every invoice waiting.
      -- Whole days elapsed, not calendar days of one zone: an invoice of 23:30 UTC was a day old
      -- 30 minutes later counted in UTC dates (and 8 days old after 7 days and 11.5 hours), where in
      -- the merchant's zone it was issued past midnight. Elapsed time is the same in every zone.
      select i.ref, greatest(0, floor(extract(epoch from ${now}::timestamptz - i.created_at) / 86400))::int as age,
             coalesce(f.amount, i.gross_amount_cents) as cents
      from (${invoiceFacts(sql, env)}) i
      left join lateral (
        select (array_agg(e.topic order by ${decisionFirst(sql, 'e.topic')}, e.received_at desc, e.event_key desc))[1] as topic,
               (array_agg(e.invoice_amount_cents order by e.received_at desc, e.event_key desc) filter (where e.invoice_amount_cents is not null))[1] as amount
        from factoring_events e where e.environment = ${env} and e.invoice_external_reference_id = i.ref
      ) f on true
      where i.canceled_at is null and f.topic is distinct from ${topic('factoring/declined')} and i.ref not in (select ref from paid)
      union all
      -- Approved invoices no invoice event names, aged from their approval's arrival, as
      -- invoice_not_paid_out ages them.
      select o.ref, greatest(0, floor(extract(epoch from ${now}::timestamptz - o.received_at) / 86400))::int, o.invoice_amount_cents
      from (${factoredOnlyInvoices(sql, env)}) o
      where o.ref not in (select ref from paid)
    )
    select b.bucket, count(w.ref)::text as invoices, coalesce(sum(w.cents), 0)::text as amount_cents,
           ${decimalAmount(sql, sql`coalesce(sum(w.cents), 0)`)} as amount, ${filters.currency ?? 'EUR'}::text as currency
    from b left join waiting w on w.age >= b.lo and (b.hi is null or w.age <= b.hi)
    where ${after === undefined ? sql`true` : sql`b.n > (select n from b where bucket = ${after})`}
    group by b.bucket, b.n
    order by b.n
    ${limit === undefined ? sql`` : sql`limit ${limit}`}`,
  };
}

export function streamInvoicesReport(
  database: Database,
  filters: { environment: ProviderEnvironment; ageing?: boolean; currency?: string },
  format: ReportFormat,
  writable: Writable,
  csv?: CsvOptions,
): Promise<StreamResult> {
  return streamSource(filters.ageing ? ageingSource(database, filters) : invoicesSource(database, filters), format, writable, csv);
}
