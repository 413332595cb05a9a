import type { Writable } from 'node:stream';
import { UsageError } from '../app/errors.js';
import { environmentSchema, type ProviderEnvironment } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { DISCREPANCY_KINDS, type DiscrepancyKind } from '../ledger/schema/index.js';
import { ISO_FORMAT } from '../reconcile/found.js';
import { REPORT_FORMATS, type Cell, type ReportFormat } from './format.js';
import { streamReport, type StreamResult } from './writer.js';

/** CONTRACT.md, "Discrepancy report": these fields, in this order. */
export const DISCREPANCY_COLUMNS = [
  'id', 'kind', 'status', 'environment', 'entity_type', 'entity_id', 'external_reference_id', 'sepa_reference',
  'expected', 'observed', 'details', 'first_detected_at', 'last_checked_at', 'resolved_at',
] as const;

export const STATUS_FILTERS = ['open', 'resolved', 'acknowledged', 'all'] as const;
export type StatusFilter = (typeof STATUS_FILTERS)[number];

export interface DiscrepancyFilters {
  /** Unset: every environment (the report carries an environment column). */
  environment?: ProviderEnvironment;
  status: StatusFilter;
  /** Unset or empty: every kind. */
  kinds?: DiscrepancyKind[];
  /** Only discrepancies first detected at or after this instant. */
  since?: Date;
}

export interface DiscrepancyQueryInput {
  format?: string | undefined;
  status?: string | undefined;
  kind?: string | readonly string[] | undefined;
  since?: string | undefined;
  env?: string | undefined;
}

/**
 * Validates the filters of `report discrepancies` and of GET /api/discrepancies alike; throws a
 * UsageError naming the bad value (exit 2 on the command line, 400 over HTTP).
 */
export function parseDiscrepancyQuery(input: DiscrepancyQueryInput): { filters: DiscrepancyFilters; format: ReportFormat } {
  const format = input.format ?? 'csv';
  if (!(REPORT_FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format must be csv or json, not '${format}'`);
  const status = input.status ?? 'open';
  if (!(STATUS_FILTERS as readonly string[]).includes(status)) {
    throw new UsageError(`--status must be one of ${STATUS_FILTERS.join(', ')}, not '${status}'`);
  }
  const kinds = input.kind === undefined ? [] : typeof input.kind === 'string' ? [input.kind] : [...input.kind];
  for (const kind of kinds) {
    if (!(DISCREPANCY_KINDS as readonly string[]).includes(kind)) {
      throw new UsageError(`unknown --kind '${kind}' (one of ${DISCREPANCY_KINDS.join(', ')})`);
    }
  }
  const filters: DiscrepancyFilters = { status: status as StatusFilter, kinds: kinds as DiscrepancyKind[] };
  if (input.since !== undefined) {
    const since = new Date(input.since);
    if (!/^\d{4}-\d{2}-\d{2}/.test(input.since) || Number.isNaN(since.getTime())) {
      throw new UsageError(`--since must be an ISO 8601 date or timestamp, not '${input.since}'`);
    }
    filters.since = since;
  }
  if (input.env !== undefined) {
    const env = environmentSchema.safeParse(input.env);
    if (!env.success) throw new UsageError(`--env must be sandbox or production, not '${input.env}'`);
    filters.environment = env.data;
  }
  return { filters, format: format as ReportFormat };
}

/**
 * Streams the discrepancy report with a postgres.js cursor (1,000 rows a batch) in id order. The
 * database formats the timestamps (ISO 8601 UTC with microseconds), so rows are never turned into
 * Date objects on the way. The writable is not ended (see streamReport).
 */
export async function streamDiscrepancies(
  database: Database,
  filters: DiscrepancyFilters,
  format: ReportFormat,
  writable: Writable,
): Promise<StreamResult> {
  const { sql } = database;
  const conditions = [
    filters.environment ? sql`environment = ${filters.environment}` : sql`true`,
    filters.status === 'all' ? sql`true` : sql`status = ${filters.status}`,
    filters.kinds && filters.kinds.length > 0 ? sql`kind::text in ${sql(filters.kinds)}` : sql`true`,
    filters.since ? sql`first_detected_at >= ${filters.since.toISOString()}::timestamptz` : sql`true`,
  ];
  const cursor = sql<Record<string, Cell>[]>`
    select id::text as id, kind::text as kind, status::text as status, environment::text as environment,
           entity_type::text as entity_type, entity_id, external_reference_id, sepa_reference, expected, observed, details,
           to_char(first_detected_at at time zone 'UTC', ${ISO_FORMAT}) as first_detected_at,
           to_char(last_checked_at at time zone 'UTC', ${ISO_FORMAT}) as last_checked_at,
           to_char(resolved_at at time zone 'UTC', ${ISO_FORMAT}) as resolved_at
    from discrepancies
    where ${conditions[0]!} and ${conditions[1]!} and ${conditions[2]!} and ${conditions[3]!}
    order by id`.cursor(1000);
  return streamReport(numericIds(cursor), DISCREPANCY_COLUMNS, format, writable);
}

/** ids leave Postgres as text (int8); below 2^53 they are exact JSON numbers. */
async function* numericIds(batches: AsyncIterable<Record<string, Cell>[]>): AsyncGenerator<Record<string, Cell>[]> {
  for await (const batch of batches) {
    for (const row of batch) row.id = Number(row.id);
    yield batch;
  }
}
