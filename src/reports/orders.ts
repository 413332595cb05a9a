import type { Writable } from 'node:stream';
import type { ProviderEnvironment } from '../config/schema.js';
import type { Database } from '../db/database.js';
import type { CsvOptions, ReportFormat, ReportShape } from './format.js';
import { streamSource, type ReportSource } from './source.js';
import type { StreamResult } from './writer.js';

/** CONTRACT.md, `report orders`: these columns, in this order. */
export const ORDER_COLUMNS = [
  'uuid', 'external_reference_id', 'api_state', 'webhook_state', 'last_event_time', 'deliveries', 'open_discrepancies',
] as const;

export const ORDER_SHAPE: ReportShape = { columns: ORDER_COLUMNS, numeric: new Set(['deliveries', 'open_discrepancies']) };

export interface OrdersReportFilters {
  environment: ProviderEnvironment;
}

/**
 * One row per order the ledger knows in one environment (polled, or named by an order webhook):
 *  - api_state: the last polled state (empty when never polled);
 *  - webhook_state / last_event_time: the latest order event by event_time_sortable (all nine
 *    fractional digits; ties broken by event_key), its event_time as the provider sent it;
 *  - deliveries: every stored delivery naming the order, retries included;
 *  - open_discrepancies: discrepancies about the order with status open.
 * Aggregates are hashed by Postgres before the first row; the cursor streams the result in uuid
 * order, so Node holds one batch at a time. A page (after, limit) is keyed on the uuid.
 */
export function ordersSource(database: Database, filters: OrdersReportFilters): ReportSource {
  const { sql } = database;
  const env = filters.environment;
  return {
    sql,
    shape: ORDER_SHAPE,
    key: 'uuid',
    query: (after, limit) => sql`
    with orders as (
      select order_uuid from (
        select order_uuid from order_snapshots where environment = ${env}
        union
        select order_uuid from order_events where environment = ${env}
      ) u
      where ${after === undefined ? sql`true` : sql`order_uuid > ${after}::uuid`}
      order by order_uuid
      ${limit === undefined ? sql`` : sql`limit ${limit}`}
    ),
    latest as (
      select distinct on (order_uuid) order_uuid, order_state, event_time, external_reference_id
      from order_events where environment = ${env}
      order by order_uuid, event_time_sortable desc, event_key desc
    ),
    deliveries as (
      select entity_id, count(*) as n from webhook_deliveries
      where environment = ${env} and entity_type = 'order' group by entity_id
    ),
    open as (
      select entity_id, count(*) as n from discrepancies
      where environment = ${env} and entity_type = 'order' and status = 'open' group by entity_id
    )
    select o.order_uuid::text as uuid,
           coalesce(s.external_reference_id, l.external_reference_id) as external_reference_id,
           s.state as api_state, l.order_state as webhook_state, l.event_time as last_event_time,
           coalesce(d.n, 0)::int as deliveries, coalesce(x.n, 0)::int as open_discrepancies
    from orders o
    left join order_snapshots s on s.environment = ${env} and s.order_uuid = o.order_uuid
    left join latest l on l.order_uuid = o.order_uuid
    left join deliveries d on d.entity_id = o.order_uuid::text
    left join open x on x.entity_id = o.order_uuid::text
    order by o.order_uuid`,
  };
}

export function streamOrdersReport(
  database: Database,
  filters: OrdersReportFilters,
  format: ReportFormat,
  writable: Writable,
  csv?: CsvOptions,
): Promise<StreamResult> {
  return streamSource(ordersSource(database, filters), format, writable, csv);
}
