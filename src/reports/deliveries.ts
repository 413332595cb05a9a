import type { Writable } from 'node:stream';
import { UsageError } from '../config/usage-error.js';
import type { ProviderEnvironment } from '../config/schema.js';
import type { Database } from '../db/database.js';
import type { CsvOptions, ReportFormat, ReportShape } from './format.js';
import { REPORT_TIME_FORMAT, streamSource, type ReportSource } from './source.js';
import type { StreamResult } from './writer.js';

/**
 * `report deliveries`: what is still stored unparsed, one row per (status, topic, reason) with how
 * many deliveries, the first of them (its id, for the evidence view) and when they arrived, and the
 * newest parser version that looked at them (webhooks/parser-version.ts).
 */
export const DELIVERY_COLUMNS = [
  'status', 'topic', 'reason', 'count', 'first_delivery_id', 'first_received_at', 'last_received_at', 'parser_version',
] as const;

export const DELIVERY_SHAPE: ReportShape = {
  columns: DELIVERY_COLUMNS,
  numeric: new Set(['count', 'first_delivery_id', 'parser_version']),
  timestamps: new Set(['first_received_at', 'last_received_at']),
};

export const DELIVERY_STATUS_FILTERS = ['unknown_topic', 'invalid_shape', 'unparsed'] as const;
export type DeliveryStatusFilter = (typeof DELIVERY_STATUS_FILTERS)[number];

export function parseDeliveryStatus(value: string | undefined): DeliveryStatusFilter {
  const status = value ?? 'unparsed';
  if (!(DELIVERY_STATUS_FILTERS as readonly string[]).includes(status)) {
    throw new UsageError(`status must be one of ${DELIVERY_STATUS_FILTERS.join(', ')}, not '${status}'`);
  }
  return status as DeliveryStatusFilter;
}

export interface DeliveriesReportFilters {
  environment: ProviderEnvironment;
  status: DeliveryStatusFilter;
}

/**
 * Groups are read through the partial index of unparsed deliveries (a few rows however large the
 * ledger); each group's first delivery id is unique to it, so it orders the report and keys a page.
 * The reason is the parse error as stored (the field and what was wrong with it).
 */
export function deliveriesSource(database: Database, filters: DeliveriesReportFilters): ReportSource {
  const { sql } = database;
  const status = filters.status === 'unparsed' ? sql`true` : sql`parse_status = ${filters.status}`;
  return {
    sql,
    shape: DELIVERY_SHAPE,
    key: 'first_delivery_id',
    query: (after, limit) => sql`
    with groups as (
      select parse_status::text as status, topic, parse_error as reason, count(*) as count, min(id) as first_delivery_id,
             min(received_at) as first_received_at, max(received_at) as last_received_at, max(parser_version) as parser_version
      from webhook_deliveries
      where environment = ${filters.environment} and parse_status <> 'parsed' and ${status}
      group by parse_status, topic, parse_error
    )
    select status, topic, reason, count::text as count, first_delivery_id::text as first_delivery_id,
           to_char(first_received_at at time zone 'UTC', ${REPORT_TIME_FORMAT}) as first_received_at,
           to_char(last_received_at at time zone 'UTC', ${REPORT_TIME_FORMAT}) as last_received_at, parser_version
    from groups
    where ${after === undefined ? sql`true` : sql`first_delivery_id > ${after}::bigint`}
    order by first_delivery_id
    ${limit === undefined ? sql`` : sql`limit ${limit}`}`,
    map: (row) => {
      row.count = Number(row.count);
      row.first_delivery_id = Number(row.first_delivery_id);
    },
  };
}

export function streamDeliveriesReport(database: Database, filters: DeliveriesReportFilters, format: ReportFormat, writable: Writable, csv?: CsvOptions): Promise<StreamResult> {
  return streamSource(deliveriesSource(database, filters), format, writable, csv);
}
