import type { Writable } from 'node:stream';
import type { ProviderEnvironment } from '../config/schema.js';
import { creditLines } from '../ledger/payout-credits.js';
import type { Database } from '../db/database.js';
import type { CsvOptions, ReportFormat, ReportShape } from './format.js';
import { REPORT_TIME_FORMAT, streamSource, type ReportSource } from './source.js';
import type { StreamResult } from './writer.js';

/**
 * CONTRACT.md, `report payouts`: payout, SEPA reference, amount, status, matched bank line, invoices;
 * the decimal amount and its currency stand next to the cents, and what the bank credited (and the
 * difference from the payout) follows.
 */
export const PAYOUT_COLUMNS = [
  'payout_uuid', 'sepa_reference', 'amount_cents', 'amount', 'currency', 'status', 'matched_bank_line', 'invoice_references',
  'credited_cents', 'credited_amount', 'difference', 'received_at',
] as const;

export const PAYOUT_SHAPE: ReportShape = {
  columns: PAYOUT_COLUMNS,
  numeric: new Set(['amount_cents', 'amount', 'credited_cents', 'credited_amount', 'difference']),
  timestamps: new Set(['received_at']),
};

/**
 * One row per payout from its latest payout event. matched_bank_line: every bank credit carrying the
 * payout's SEPA reference (as its reference or in its remittance text, compared upper-case), as '<bank entry
 * reference, or #line id> <booking date>' joined with ';', empty when none; invoice_references are
 * joined with ';'. credited_cents sums those credits; difference = credited − payout (decimal), empty
 * when nothing was credited. Currency: the credits' when there are any, else EUR (SEPA transfers are
 * euro-only; payout events name no currency). Cents leave Postgres as text (bigint), never a float.
 */
export function payoutsSource(database: Database, filters: { environment: ProviderEnvironment }): ReportSource {
  const { sql } = database;
  return {
    sql,
    shape: PAYOUT_SHAPE,
    key: 'payout_uuid',
    query: (after, limit) => sql`
    -- Credit lines grouped once by the payout reference they carry (ledger/payout-credits.ts: the
    -- reference wherever the bank put it).
    with credits as materialized (
      select l.payout_reference,
             string_agg(coalesce(l.bank_reference, '#' || l.id::text) || ' ' || l.booking_date::text, ';' order by l.booking_date, l.id) as lines,
             sum(l.amount_cents) as cents, min(l.currency) as currency
      from (${creditLines(sql, filters.environment)}) l
      where l.payout_reference is not null
      group by l.payout_reference
    ),
    latest as (
      select distinct on (payout_uuid) *
      from payout_events
      where environment = ${filters.environment} and ${after === undefined ? sql`true` : sql`payout_uuid > ${after}::uuid`}
      order by payout_uuid, event_time_sortable desc nulls last, received_at desc, event_key desc
    ),
    page as (select * from latest order by payout_uuid ${limit === undefined ? sql`` : sql`limit ${limit}`})
    select e.payout_uuid::text as payout_uuid, e.sepa_instruction_id as sepa_reference, e.amount_cents::text as amount_cents,
           round(e.amount_cents::numeric / 100, 2)::text as amount,
           case when e.amount_cents is not null then coalesce(c.currency, 'EUR') end as currency,
           e.status, c.lines as matched_bank_line,
           array_to_string(e.external_reference_ids, ';') as invoice_references,
           c.cents::text as credited_cents, round(c.cents::numeric / 100, 2)::text as credited_amount,
           round((c.cents - e.amount_cents)::numeric / 100, 2)::text as difference,
           to_char(e.received_at at time zone 'UTC', ${REPORT_TIME_FORMAT}) as received_at
    from page e
    left join credits c on c.payout_reference = upper(e.sepa_instruction_id)
    order by e.payout_uuid`,
  };
}

export function streamPayoutsReport(
  database: Database,
  filters: { environment: ProviderEnvironment },
  format: ReportFormat,
  writable: Writable,
  csv?: CsvOptions,
): Promise<StreamResult> {
  return streamSource(payoutsSource(database, filters), format, writable, csv);
}
