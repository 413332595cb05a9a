import type { Writable } from 'node:stream';
import type { PendingQuery, Row, Sql } from 'postgres';
import { UsageError } from '../config/usage-error.js';
import { environmentSchema, type ProviderEnvironment } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { RULE_KINDS } from '../reconcile/rules/registry.js';
import { DISCREPANCY_KINDS, type DiscrepancyKind } from '../schema/tables.js';
import { REPORT_FORMATS, type CsvOptions, type ReportFormat, type ReportShape } from './format.js';
import { decimalAmount, REPORT_TIME_FORMAT, streamSource, type ReportSource } from './source.js';
import type { StreamResult } from './writer.js';

/**
 * CONTRACT.md, "Discrepancy report": these fields, in this order, then the money at stake (cents,
 * decimal amount, currency) and the acknowledgement (who, when, note).
 */
export const DISCREPANCY_COLUMNS = [
  'id', 'kind', 'status', 'environment', 'entity_type', 'entity_id', 'external_reference_id', 'sepa_reference',
  'expected', 'observed', 'details', 'first_detected_at', 'last_checked_at', 'resolved_at',
  'amount_cents', 'amount', 'currency', 'acknowledged_by', 'acknowledged_at', 'ack_note',
] as const;

/**
 * Which of expected and observed hold a number (cents, a count, a delivery id) for each kind, as
 * its rule writes them (reconcile/rules/*.ts, statements/import.ts; docs/how-it-decides.md). The
 * others hold words (`cancelled`, `not paid out`), order states, `fee=30` lists, or what the
 * provider sent: payout_unknown_invoice's observed is the invoice reference the payout listed,
 * which may be all digits (`000123`) and must stay text. Every kind is listed, so a new one has to
 * say.
 */
const NUMBER_VALUED: Readonly<Record<DiscrepancyKind, readonly ('expected' | 'observed')[]>> = {
  missed_webhook: [],
  state_mismatch: [],
  orphan_webhook: [],
  duplicate_event: ['expected', 'observed'],
  duplicate_delivery: ['expected', 'observed'],
  payout_not_on_statement: ['expected'],
  statement_credit_without_payout: ['observed'],
  payout_amount_mismatch: ['expected', 'observed'],
  payout_cancelled_but_credited: ['observed'],
  payout_unknown_invoice: [],
  statement_unbalanced: ['expected', 'observed'],
  invoice_not_paid_out: ['expected'],
  invoice_paid_out_twice: ['expected', 'observed'],
  payout_pays_canceled_invoice: [],
  buyer_paid_merchant_directly: ['observed'],
  payout_deduction_mismatch: [],
  payout_report_mismatch: ['expected', 'observed'],
};

const numberValued = (column: 'expected' | 'observed') => (row: Readonly<Record<string, unknown>>): boolean =>
  NUMBER_VALUED[row.kind as DiscrepancyKind]?.includes(column) ?? false;

export const DISCREPANCY_SHAPE: ReportShape = {
  columns: DISCREPANCY_COLUMNS,
  numeric: new Set(['id', 'amount_cents', 'amount']),
  // A number passes as one; anything else is neutralised as text (format.ts spreadsheetText), and
  // XLSX writes it as a text cell.
  numericWhere: { expected: numberValued('expected'), observed: numberValued('observed') },
  timestamps: new Set(['first_detected_at', 'last_checked_at', 'resolved_at', 'acknowledged_at']),
};

export const STATUS_FILTERS = ['open', 'resolved', 'acknowledged', 'all'] as const;
export type StatusFilter = (typeof STATUS_FILTERS)[number];

export interface DiscrepancyFilters {
  /** Unset: every environment (the report carries an environment column). */
  environment?: ProviderEnvironment;
  status: StatusFilter;
  /** Unset or empty: every kind. */
  kinds?: DiscrepancyKind[];
  /** Only discrepancies first detected at or after this instant (ISO text to the microsecond: sinceMicros). */
  since?: string;
  /** Only those whose entity id, external reference or SEPA reference contains this (any case). */
  search?: string;
  /** The currency of an amount nothing names one for (findingCurrency): the contract's; unset, EUR. */
  currency?: string;
}

export interface DiscrepancyQueryInput {
  format?: string | undefined;
  status?: string | undefined;
  kind?: string | readonly string[] | undefined;
  since?: string | undefined;
  env?: string | undefined;
  search?: string | undefined;
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
    const since = sinceMicros(input.since);
    if (since === undefined) throw new UsageError(`--since must be an ISO 8601 date or timestamp (years 0001-9999), not '${input.since}'`);
    filters.since = since;
  }
  if (input.env !== undefined) {
    const env = environmentSchema.safeParse(input.env);
    if (!env.success) throw new UsageError(`--env must be sandbox or production, not '${input.env}'`);
    filters.environment = env.data;
  }
  if (input.search !== undefined && input.search.trim() !== '') {
    if (input.search.length > 200) throw new UsageError('--search must be at most 200 characters');
    filters.search = input.search.trim();
  }
  return { filters, format: format as ReportFormat };
}

/**
 * `YYYY-MM-DD`, or that with a time (`THH:MM[:SS[.fff]]`) and an optional zone (`Z`, `+02:00`):
 * UTC unless a zone is given. A day the month does not have (2026-02-30) is refused, not rolled
 * over as Date would, and so is year 0, which Postgres does not store. So is an instant that its
 * zone moves out of years 0001-9999 (0001-01-01T00:00+01:00 is year 0 in UTC, 9999-12-31T23:00-02:00
 * year 10000): toISOString writes those as `0000-…` and `+010000-…`, which Postgres refuses, and the
 * query failed (HTTP 500) instead of the filter (400).
 */
export function parseSince(text: string): Date | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.exec(text);
  if (!match) return undefined;
  const [, year, month, day, zone] = match;
  const calendar = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  calendar.setUTCFullYear(Number(year));
  if (Number(year) < 1 || calendar.getUTCMonth() !== Number(month) - 1 || calendar.getUTCDate() !== Number(day)) return undefined;
  const hasTime = text.length > 10;
  const at = new Date(hasTime ? (zone === undefined ? `${text}Z` : text) : `${text}T00:00:00Z`);
  return Number.isNaN(at.getTime()) || at.getUTCFullYear() < 1 || at.getUTCFullYear() > 9999 ? undefined : at;
}

/**
 * parseSince's instant as ISO text to the microsecond, the precision first_detected_at is stored
 * in: a Date keeps milliseconds, so `--since …10:00:00.123456Z` as a Date let in a finding of
 * 10:00:00.1232. Digits past the sixth round up, so "at or after" never takes in an earlier
 * microsecond.
 */
export function sinceMicros(text: string): string | undefined {
  const at = parseSince(text);
  if (at === undefined) return undefined;
  const nanosPastMs = Number((/T[^.]*\.\d{3}(\d{1,6})/.exec(text)?.[1] ?? '').padEnd(6, '0') || '0');
  const micros = Math.ceil(nanosPastMs / 1000);
  const rounded = new Date(at.getTime() + (micros === 1000 ? 1 : 0));
  // Rounded up past 9999-12-31T23:59:59.999999: past the years parseSince accepts (and past what the
  // ISO text Postgres reads can say), refused as it would be.
  if (rounded.getUTCFullYear() > 9999) return undefined;
  const whole = rounded.toISOString();
  return `${whole.slice(0, -1)}${String(micros % 1000).padStart(3, '0')}Z`;
}

/** A LIKE pattern that matches `text` literally anywhere. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * A finding's money at stake in cents, over discrepancies' kind, expected and observed (see
 * discrepancySource): the report's amount_cents and the overview's sums (http/operator-overview.ts)
 * read it from here. Numeric: expected and observed are bigint cents written as text, up to 19
 * digits, and the difference of two of them can pass the bigint range.
 */
export function stakeCents(sql: Sql): PendingQuery<Row[]> {
  const cents = (column: 'expected' | 'observed') => sql`case when ${sql(column)} ~ '^-?[0-9]{1,19}$' then ${sql(column)}::numeric end`;
  return sql`case kind
      when 'payout_amount_mismatch' then abs(${cents('expected')} - ${cents('observed')})
      when 'payout_not_on_statement' then ${cents('expected')}
      when 'payout_cancelled_but_credited' then ${cents('observed')}
      when 'statement_credit_without_payout' then ${cents('observed')}
    end`;
}

/**
 * The discrepancy report in id order (numeric: ids are bigints, so 2 comes before 10). Timestamps
 * are formatted by the database, so rows never become Date objects on the way.
 *
 * Money at stake (amount_cents) comes from the payout kinds' own expected/observed cents:
 * the difference for payout_amount_mismatch, the payout for payout_not_on_statement, the credit for
 * payout_cancelled_but_credited and statement_credit_without_payout; the order kinds carry no
 * amount (the provider's order webhooks and API list none). Its currency: findingCurrency. Amounts
 * assume two minor digits.
 */
/**
 * The kinds whose expected, observed or details are money (cents), with or without an amount at
 * stake: their rows name the currency, so the page and a spreadsheet show the figures in it (a GBP
 * merchant's invoice_not_paid_out was shown in EUR). The order and delivery kinds name none.
 */
const MONEY_KINDS: readonly DiscrepancyKind[] = [
  'payout_not_on_statement', 'statement_credit_without_payout', 'payout_amount_mismatch', 'payout_cancelled_but_credited',
  'invoice_not_paid_out', 'buyer_paid_merchant_directly', 'payout_report_mismatch', 'payout_deduction_mismatch', 'statement_unbalanced',
];

/**
 * The currency of a finding's money, over a row `d` of discrepancies: what its evidence names (the
 * report and deduction rules record it), else its bank line's, else the payout's report rows' (a
 * payout_not_on_statement has no bank line, and the provider's payout events name no currency:
 * provider-api.md), else `unstated`, the contract's currency (unstatedCurrency), else EUR. The one
 * rule of the report, the page's finding and its overview's money at stake.
 */
export function findingCurrency(sql: Sql, unstated = 'EUR'): PendingQuery<Row[]> {
  return sql`coalesce(
    d.evidence->>'currency',
    (select upper(l.currency) from statement_lines l
     where d.evidence->>'statement_line_id' ~ '^[0-9]{1,18}$' and l.id = (d.evidence->>'statement_line_id')::bigint),
    (select min(upper(w.currency)) from payout_report_rows w
     where w.environment = d.environment
       and w.payout_uuid = case when d.entity_type = 'payout' and d.entity_id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then d.entity_id::uuid end),
    ${unstated}::text)`;
}

export function discrepancySource(database: Database, filters: DiscrepancyFilters): ReportSource {
  const { sql } = database;
  const conditions = [
    filters.environment ? sql`environment = ${filters.environment}` : sql`true`,
    filters.status === 'all' ? sql`true` : sql`status = ${filters.status}`,
    filters.kinds && filters.kinds.length > 0 ? sql`kind::text in ${sql(filters.kinds)}` : sql`true`,
    filters.since ? sql`first_detected_at >= ${filters.since}::timestamptz` : sql`true`,
    filters.search
      ? sql`(entity_id ilike ${containsPattern(filters.search)} or external_reference_id ilike ${containsPattern(filters.search)}
             or sepa_reference ilike ${containsPattern(filters.search)})`
      : sql`true`,
  ];
  return {
    sql,
    shape: DISCREPANCY_SHAPE,
    key: 'id',
    map: (row) => {
      row.id = Number(row.id);
    },
    query: (after, limit) => sql`
      with d as (
        select *, ${stakeCents(sql)} as stake
        from discrepancies
        where ${conditions[0]!} and ${conditions[1]!} and ${conditions[2]!} and ${conditions[3]!} and ${conditions[4]!}
          and id > ${after === undefined ? 0 : Number(after)}
        order by id
        ${limit === undefined ? sql`` : sql`limit ${limit}`}
      ),
      -- Every complete pass decides every open and acknowledged finding of the kinds its rules
      -- decide (judged again, or known unchanged: reconcile/scope.ts) and writes only those whose
      -- evidence changed (reconcile/lifecycle.ts): theirs were last checked when the latest complete
      -- pass began.
      latest_pass as (
        select e.env,
               (select max(r.started_at) from reconcile_runs r where r.environment = e.env and r.status = 'complete') as started_at
        from unnest(enum_range(null::provider_environment)) as e(env)
      )
      select d.id::text as id, kind::text as kind, d.status::text as status, d.environment::text as environment,
             entity_type::text as entity_type, entity_id, external_reference_id, sepa_reference, expected, observed, details,
             to_char(first_detected_at at time zone 'UTC', ${REPORT_TIME_FORMAT}) as first_detected_at,
             to_char(case when d.status in ('open', 'acknowledged') and d.kind::text in ${sql(RULE_KINDS)}
                          then greatest(d.last_checked_at, p.started_at) else d.last_checked_at end at time zone 'UTC',
                     ${REPORT_TIME_FORMAT}) as last_checked_at,
             to_char(resolved_at at time zone 'UTC', ${REPORT_TIME_FORMAT}) as resolved_at,
             stake::text as amount_cents, ${decimalAmount(sql, sql`stake`)} as amount,
             case when stake is not null or d.kind::text in ${sql(MONEY_KINDS)} then ${findingCurrency(sql, filters.currency)} end as currency,
             case when a.stands then acknowledged_by end as acknowledged_by,
             case when a.stands then to_char(acknowledged_at at time zone 'UTC', ${REPORT_TIME_FORMAT}) end as acknowledged_at,
             case when a.stands then ack_note end as ack_note
      from d join latest_pass p on p.env = d.environment
      -- The acknowledgement is shown only while it stands. New evidence reopens an acknowledged
      -- finding and keeps its acknowledged_* columns (lifecycle.ts: the same evidence coming back
      -- after a resolve restores it): an open finding's acknowledgement was voided, and so was a
      -- resolved one's unless the finding was acknowledged when it was resolved (its last change
      -- into resolved came from acknowledged). The history keeps a voided one.
      cross join lateral (
        select d.status = 'acknowledged'
               or (d.status = 'resolved' and d.acknowledged_at is not null
                   and (select h.from_status from discrepancy_history h
                        where h.discrepancy_id = d.id and h.to_status = 'resolved'
                        order by h.at desc, h.id desc limit 1) = 'acknowledged') as stands
      ) a
      order by d.id`,
  };
}

/** The whole report to a writable (the command line, or an HTTP response without paging). */
export function streamDiscrepancies(
  database: Database,
  filters: DiscrepancyFilters,
  format: ReportFormat,
  writable: Writable,
  csv?: CsvOptions,
): Promise<StreamResult> {
  return streamSource(discrepancySource(database, filters), format, writable, csv);
}
