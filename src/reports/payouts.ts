import type { Writable } from 'node:stream';
import type { ProviderEnvironment } from '../config/schema.js';
import { creditLines } from '../ledger/payout-credits.js';
import type { Database } from '../db/database.js';
import type { Cell, ReportFormat } from './format.js';
import { streamReport, type StreamResult } from './writer.js';

/** CONTRACT.md, `report payouts`: payout, SEPA reference, amount, status, matched bank line, invoices. */
export const PAYOUT_COLUMNS = [
  'payout_uuid', 'sepa_reference', 'amount_cents', 'status', 'matched_bank_line', 'invoice_references',
] as const;

/**
 * One row per payout from its latest payout event. matched_bank_line: every bank credit carrying the
 * payout's SEPA reference (compared upper-case, as statement references are stored), as '<bank entry
 * reference, or #line id> <booking date>' joined with ';', empty when none; invoice_references are joined with ';'.
 * amount_cents leaves Postgres as text (bigint), never a float.
 */
export async function streamPayoutsReport(
  database: Database,
  filters: { environment: ProviderEnvironment },
  format: ReportFormat,
  writable: Writable,
): Promise<StreamResult> {
  const { sql } = database;
  const cursor = sql<Record<string, Cell>[]>`
    -- Credit lines grouped once by the payout reference they carry (ledger/payout-credits.ts).
    with credits as materialized (
      select l.payout_reference,
             string_agg(coalesce(l.bank_reference, '#' || l.id::text) || ' ' || l.booking_date::text, ';' order by l.booking_date, l.id) as lines
      from (${creditLines(sql, filters.environment)}) l
      where l.payout_reference is not null
      group by l.payout_reference
    )
    select distinct on (payout_uuid)
           payout_uuid::text as payout_uuid, sepa_instruction_id as sepa_reference, amount_cents::text as amount_cents,
           status,
           (select c.lines from credits c where c.payout_reference = upper(e.sepa_instruction_id)) as matched_bank_line,
           array_to_string(external_reference_ids, ';') as invoice_references
    from payout_events e
    where environment = ${filters.environment}
    order by payout_uuid, event_time_sortable desc nulls last, received_at desc, event_key desc`.cursor(1000);
  return streamReport(cursor, PAYOUT_COLUMNS, format, writable);
}
