import { getTableConfig } from 'drizzle-orm/pg-core';
import * as events from '../schema/events.js';
import type {
  ApplicantPayload,
  BillingConfigurationPayload,
  BuyerPayload,
  FactoringPayload,
  InvoicePayload,
  KycPayload,
  OrderPayload,
  PayoutPayload,
} from './payloads.js';
import type { EventTime } from './event-time.js';
import { isStorableText, jsonbProblem, UNSTORABLE_TEXT } from './storable.js';

/** The typed event tables, one per topic family: every table of the drizzle schema's events.ts. */
type Table = (typeof events)[keyof typeof events];
const TABLES = Object.values(events) as Table[];
export type TypedTable = Table['_']['name'];

/** The columns every typed table shares, filled from the delivery rather than from the payload. */
export const EVENT_COLUMNS = ['environment', 'event_key', 'topic', 'received_at'] as const;
type EventColumn = (typeof EVENT_COLUMNS)[number];

/** A table's SQL column names (drizzle keys its columns by their TypeScript names). */
type ColumnName<T extends Table> = { [K in keyof T['_']['columns']]: T['_']['columns'][K] extends { _: { name: infer S extends string } } ? S : never }[keyof T['_']['columns']];
type TableNamed<N extends TypedTable> = Extract<Table, { _: { name: N } }>;
/** A typed row's values: every column of its table but the shared ones, by SQL name, and nothing else. */
type TypedValues<N extends TypedTable> = Record<Exclude<ColumnName<TableNamed<N>>, EventColumn>, unknown>;
export type TypedRow = { table: TypedTable; values: Record<string, unknown> };

/**
 * Every row builder below goes through here: a column added to or renamed in the schema fails the
 * build until its builder writes it, and a value for a column the table lacks fails it too.
 */
function typedRow<N extends TypedTable>(table: N, values: TypedValues<N>): TypedRow {
  return { table, values };
}

export interface TypedColumn {
  name: string;
  /** The column's SQL type, as json_to_recordset reads it from the batch's JSON (ledger-write.ts). */
  sqlType: string;
}

/**
 * Columns of the typed event tables besides EVENT_COLUMNS, read from the drizzle schema, in
 * schema order: the writer's insert names them and json_to_recordset types them, so the statement
 * text is the same for every batch size (prepared once) and cannot drift from the schema.
 */
export const TYPED_COLUMNS = Object.fromEntries(
  TABLES.map((table) => {
    const config = getTableConfig(table);
    const shared: readonly string[] = EVENT_COLUMNS;
    const columns = config.columns.filter((c) => !shared.includes(c.name)).map((c) => ({ name: c.name, sqlType: c.getSQLType() }));
    return [config.name, columns];
  }),
) as unknown as Record<TypedTable, readonly TypedColumn[]>;

export const TYPED_TABLES = Object.keys(TYPED_COLUMNS) as TypedTable[];

/** The payload member a text or jsonb column is read from, where the names differ (for messages). */
const SOURCE_FIELD: Partial<Record<TypedTable, Record<string, string>>> = {
  order_events: { buyer_name: 'buyer.name', buyer_legal_form: 'buyer.legal_form' },
  payout_events: { status: 'topic' },
  buyer_events: Object.fromEntries(['state', 'external_reference_id', 'company_name', 'first_name', 'last_name', 'max_collections_state'].map((c) => [c, `buyer.${c}`])),
  kyc_events: { kyc_state: 'buyer.kyc_state', external_reference_id: 'buyer.external_reference_id' },
  applicant_events: {
    ...Object.fromEntries(['state', 'external_reference_id', 'first_name', 'last_name', 'email', 'phone'].map((c) => [c, `applicant.${c}`])),
    buyer: 'applicant.buyer',
  },
};

const columnsOfType = (types: readonly string[]) =>
  Object.fromEntries(TYPED_TABLES.map((table) => [table, TYPED_COLUMNS[table].filter((c) => types.includes(c.sqlType)).map((c) => c.name)])) as Record<
    TypedTable,
    string[]
  >;
const JSONB_COLUMNS = columnsOfType(['jsonb']);
const TEXT_COLUMNS = columnsOfType(['text', 'text[]']);

/**
 * Why a typed row's values cannot be stored as they are, naming the payload member, or undefined.
 * The schemas (payloads.ts) bound numbers and lengths; this checks what Postgres text and jsonb
 * refuse, on exactly the values that would be written. `checkText` is false for a body without a
 * `\u` escape (storable.ts: its strings cannot hold what Postgres refuses), leaving only the
 * jsonb depth and number checks.
 */
export function typedRowProblem(row: TypedRow, checkText: boolean): string | undefined {
  for (const column of JSONB_COLUMNS[row.table]) {
    const value = row.values[column];
    if (value === null || typeof value !== 'object') continue;
    const problem = jsonbProblem(value, checkText);
    if (problem !== undefined) return `${sourceField(row.table, column)}: holds ${problem}`;
  }
  if (!checkText) return undefined;
  for (const column of TEXT_COLUMNS[row.table]) {
    const value = row.values[column];
    const texts = Array.isArray(value) ? (value as unknown[]) : [value];
    if (texts.some((t) => typeof t === 'string' && !isStorableText(t))) {
      return `${sourceField(row.table, column)}: ${Array.isArray(value) ? 'an element holds' : 'holds'} ${UNSTORABLE_TEXT}`;
    }
  }
  return undefined;
}

function sourceField(table: TypedTable, column: string): string {
  return SOURCE_FIELD[table]?.[column] ?? column;
}

const n = <T>(value: T | null | undefined): T | null => value ?? null;
const json = (value: unknown): unknown => (value === undefined ? null : value);

export function orderRow(p: OrderPayload, t: EventTime): TypedRow {
  return typedRow('order_events', {
    order_uuid: p.order_uuid,
    order_state: p.order_state,
    external_reference_id: p.external_reference_id,
    event_time: t.raw,
    event_time_sortable: t.sortable,
    buyer_uuid: n(p.buyer.uuid),
    buyer_name: n(p.buyer.name),
    buyer_legal_form: n(p.buyer.legal_form),
    pending_reason_description: n(p.pending_reason_description),
    net_term_days: n(p.net_term),
    bank_account: json(p.bank_account),
    confirmation_link: n(p.confirmation_link),
  });
}

export function invoiceRow(p: InvoicePayload, t: EventTime): TypedRow {
  return typedRow('invoice_events', {
    invoice_uuid: p.invoice_uuid,
    order_uuid: n(p.order_uuid),
    external_reference_id: n(p.external_reference_id),
    event_time: t.raw,
    event_time_sortable: t.sortable,
    gross_amount_cents: n(p.gross_amount_cents),
    amount_cents: n(p.amount_cents),
  });
}

export function payoutRow(p: PayoutPayload, t: EventTime): TypedRow {
  return typedRow('payout_events', {
    payout_uuid: p.payout_uuid,
    status: p.topic.slice('payout/'.length),
    // Blank or null (a payout cancelled before its transfer was instructed) is no reference.
    sepa_instruction_id: p.sepa_instruction_id == null || p.sepa_instruction_id.trim() === '' ? null : p.sepa_instruction_id,
    amount_cents: p.amount_cents,
    external_reference_ids: p.external_reference_ids,
    event_time: t.raw,
    event_time_sortable: t.sortable,
  });
}

export function buyerRow(p: BuyerPayload): TypedRow {
  const b = p.buyer;
  return typedRow('buyer_events', {
    buyer_uuid: b.uuid,
    state: n(b.state),
    external_reference_id: n(b.external_reference_id),
    company_name: n(b.company_name),
    first_name: n(b.first_name),
    last_name: n(b.last_name),
    purchasing_limit_cents: n(b.purchasing_limit_cents),
    balance_cents: n(b.balance_cents),
    max_collections_state: n(b.max_collections_state),
    max_purchase_value_cents: n(b.max_purchase_value_cents),
  });
}

export function kycRow(p: KycPayload): TypedRow {
  return typedRow('kyc_events', { buyer_uuid: p.buyer.uuid, kyc_state: n(p.buyer.kyc_state), external_reference_id: n(p.buyer.external_reference_id) });
}

export function applicantRow(p: ApplicantPayload): TypedRow {
  const a = p.applicant;
  return typedRow('applicant_events', {
    applicant_uuid: a.uuid,
    state: n(a.state),
    external_reference_id: n(a.external_reference_id),
    first_name: n(a.first_name),
    last_name: n(a.last_name),
    email: n(a.email),
    phone: n(a.phone),
    reason: n(p.reason),
    buyer_uuid: n(a.buyer?.uuid),
    buyer: json(a.buyer),
  });
}

export function factoringRow(p: FactoringPayload): TypedRow {
  return typedRow('factoring_events', {
    factoring_uuid: p.factoring_uuid,
    invoice_external_reference_id: n(p.invoice_external_reference_id),
    invoice_uuid: n(p.invoice_uuid),
    factoring_state: n(p.factoring_state),
    invoice_amount_cents: n(p.invoice_amount_cents),
    payment_method: n(p.payment_method),
    payment_terms_days: n(p.payment_terms),
    bank_account: json(p.bank_account),
  });
}

export function billingConfigurationRow(p: BillingConfigurationPayload, t: EventTime): TypedRow {
  return typedRow('billing_configuration_events', {
    billing_configuration_uuid: p.billing_configuration_uuid,
    buyer_uuid: n(p.buyer_uuid),
    schedule: n(p.schedule),
    due_in_days: n(p.due_in_days),
    generation_delay_days: n(p.generation_delay_days),
    payment_method_statement: n(p.payment_method_statement),
    event_time: t.raw,
    event_time_sortable: t.sortable,
  });
}
