import type { PendingQuery, Row, Sql, TransactionSql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';
import { topic } from '../provider/vocabulary.js';

/**
 * The first non-null value by arrival is `min(arrival key || value)`: the key, the arrival time in
 * UTC to the microsecond at a fixed width (compared in the "C" collation), sorts as the times do.
 * An ordered aggregate (`(array_agg(v order by received_at))[1]`) sorted each invoice's events on
 * its own: at 1,000,000 invoices 8.4 s of the pass's staging, about half of it in those sorts.
 */
const ARRIVAL_KEY_LENGTH = 20;
const firstArrived = (sql: Sql | TransactionSql) => sql`(to_char(i.received_at at time zone 'UTC', 'YYYYMMDDHH24MISSUS') collate "C")`;

/**
 * The first key of an order that ranks a factoring decision (approved, declined) above a
 * factoring/pending, whatever their arrival: manual review comes before the decision
 * (provider-api.md: factoring/pending is factoring_state manual_review), factoring payloads carry no
 * event_time, and a pending whose first delivery failed arrives after the decision by its retry.
 * Taken as the latest by arrival, it made an approved invoice look undecided: invoice_not_paid_out
 * never flagged it (and resolved its open finding), and the invoices report and the ageing showed it
 * pending (or a declined invoice waiting for money). The rules and the reports rank by this one key.
 */
export function decisionFirst(sql: Sql | TransactionSql, column = 'topic'): PendingQuery<Row[]> {
  return sql`(${sql(column)} = ${topic('factoring/pending')})`;
}

/**
 * Invoices known only from their factoring, for the reports: the references whose latest factoring
 * event (decision first) is factoring/approved and that no invoice event carries (their
 * invoice/created was lost, or is still to come), with the uuid the latest approval naming one
 * gives (provider-api.md: factoring/approved adds invoice_uuid), when that ranked event arrived and
 * its amount. The provider owes the merchant for them as for any approved invoice (CONTRACT.md,
 * invoice_not_paid_out: "an invoice factored (or created)"); the pass finds the same set over its
 * staged tables (reconcile/rules/invoice-common.ts factoredWithoutInvoiceEvent).
 */
export function factoredOnlyInvoices(sql: Sql | TransactionSql, environment: ProviderEnvironment) {
  return sql`
    select (select a.invoice_uuid from factoring_events a
            where a.environment = ${environment} and a.invoice_external_reference_id = f.ref
              and a.topic = ${topic('factoring/approved')} and a.invoice_uuid is not null
            order by a.received_at desc, a.event_key desc limit 1) as invoice_uuid,
           f.ref, f.received_at, f.invoice_amount_cents
    from (
      select distinct on (e.invoice_external_reference_id collate "C") e.invoice_external_reference_id as ref, e.topic, e.received_at, e.invoice_amount_cents
      from factoring_events e
      where e.environment = ${environment} and e.invoice_external_reference_id is not null
      order by e.invoice_external_reference_id collate "C", ${decisionFirst(sql, 'e.topic')}, e.received_at desc, e.event_key desc
    ) f
    where f.topic = ${topic('factoring/approved')}
      and not exists (select 1 from invoice_events i where i.environment = ${environment} and i.external_reference_id = f.ref)`;
}

/**
 * Each invoice the ledger has an invoice event of, by invoice uuid, with its reference (the
 * merchant's external_reference_id, which payouts list), its order, when it was created (the
 * invoice/created event's own time, else its arrival; else the first event's: a time for the
 * reports and deadlines, to the microsecond, which ranks invoices only as invoiceCreation says)
 * and when canceled.
 * The invoice rules and the invoices report read invoices through this one definition. `page`
 * limits it to the invoices after a uuid, in uuid order (invoice_events_invoice_idx); unpaged, the
 * rows come in no order (the pass stages them as a set: sorting 1,000,000 invoices by uuid took
 * 0.7-1.0 s of its staging).
 */
export function invoiceFacts(
  sql: Sql | TransactionSql,
  environment: ProviderEnvironment,
  page: { after?: string; limit?: number; arrivedSince?: PendingQuery<Row[]> } = {},
) {
  // `arrivedSince` (an SQL timestamptz): only the invoices with an event received at or after it
  // (invoice_events_received_idx), each with all its events.
  const arrived = page.arrivedSince === undefined
    ? sql``
    : sql`and i.invoice_uuid in (select invoice_uuid from invoice_events where environment = ${environment} and received_at >= ${page.arrivedSince})`;
  return sql`
    select i.invoice_uuid,
           substr(min(${firstArrived(sql)} || i.external_reference_id), ${ARRIVAL_KEY_LENGTH + 1}) as ref,
           substr(min(${firstArrived(sql)} || i.order_uuid::text), ${ARRIVAL_KEY_LENGTH + 1})::uuid as order_uuid,
           coalesce(min(coalesce(i.event_time_sortable::timestamptz, i.received_at)) filter (where i.topic = ${topic('invoice/created')}),
                    min(coalesce(i.event_time_sortable::timestamptz, i.received_at))) as created_at,
           min(coalesce(i.event_time_sortable::timestamptz, i.received_at)) filter (where i.topic = ${topic('invoice/canceled')}) as canceled_at,
           max(i.gross_amount_cents) filter (where i.topic = ${topic('invoice/complete')}) as gross_amount_cents
    from invoice_events i
    where i.environment = ${environment} and ${page.after === undefined ? sql`true` : sql`i.invoice_uuid > ${page.after}::uuid`} ${arrived}
    group by i.invoice_uuid
    having count(i.external_reference_id) > 0
    ${page.after === undefined && page.limit === undefined ? sql`` : sql`order by i.invoice_uuid`}
    ${page.limit === undefined ? sql`` : sql`limit ${page.limit}`}`;
}

/** An invoice event's time as invoiceCreation describes it: the event's own time, else its arrival. */
const timeKey = (sql: Sql | TransactionSql) =>
  sql`(coalesce(i.event_time_sortable, to_char(i.received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"000Z"')) collate "C")`;

/**
 * When each of `invoices` (an SQL query of invoice uuids) was created, to rank an order's invoices
 * by it (payout_deduction_mismatch, the order's first invoice): its invoice/created event's
 * event_time_sortable, else that event's arrival in the same form (`YYYY-MM-DDTHH:MI:SS.nnnnnnnnnZ`,
 * UTC, nine fractional digits: fixed width, so text order in the "C" collation is time order).
 * Not invoiceFacts' created_at, for two reasons:
 *  - created_at falls back to the invoice's first event of any topic: an invoice whose
 *    invoice/created never arrived but whose invoice/complete did, weeks after it was paid out,
 *    ranked after an invoice of the same order created days after it (a false fee finding). An
 *    invoice with no invoice/created has no row here: its creation is unknown;
 *  - created_at is a timestamptz, to the microsecond: two invoices created 300 ns apart (event_time
 *    carries up to nine digits, provider-api.md) tied, and the tie left the order to payout order
 *    (two false fee findings when the first was paid out second).
 */
export function invoiceCreation(sql: Sql | TransactionSql, environment: ProviderEnvironment, invoices: PendingQuery<Row[]>) {
  return sql`
    select i.invoice_uuid, min(${timeKey(sql)}) as created_key
    from invoice_events i
    where i.environment = ${environment} and i.topic = ${topic('invoice/created')} and i.invoice_uuid in (${invoices})
    group by i.invoice_uuid`;
}

/**
 * invoiceCreation's created_key (null without an invoice/created event) beside created_by_key, the
 * latest each of `invoices` can have been created, in the same form: its creation when known, else
 * its first event's time of any topic (an invoice exists before any event about it). One row per
 * invoice with any event. payout_deduction_mismatch asks whether an invoice may have been created
 * before another: an invoice whose invoice/complete (paid, so created earlier) came before another's
 * invoice/created cannot have been created after it, while created_key alone would not say.
 */
export function invoiceCreationBound(sql: Sql | TransactionSql, environment: ProviderEnvironment, invoices: PendingQuery<Row[]>) {
  return sql`
    select i.invoice_uuid,
           min(${timeKey(sql)}) filter (where i.topic = ${topic('invoice/created')}) as created_key,
           coalesce(min(${timeKey(sql)}) filter (where i.topic = ${topic('invoice/created')}), min(${timeKey(sql)})) as created_by_key
    from invoice_events i
    where i.environment = ${environment} and i.invoice_uuid in (${invoices})
    group by i.invoice_uuid`;
}
