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

type ColumnType = 'uuid' | 'text' | 'int4' | 'int8' | 'jsonb' | 'text_list';

/**
 * Columns of the typed event tables (besides environment, event_key, topic, received_at) with the
 * Postgres type each is read as from the batch's JSON (ledger-write.ts json_to_recordset), so the
 * statement text is the same for every batch size and is prepared once.
 */
export const TYPED_COLUMNS = {
  order_events: { order_uuid: 'uuid', order_state: 'text', external_reference_id: 'text', event_time: 'text', event_time_sortable: 'text', buyer_uuid: 'uuid', buyer_name: 'text', buyer_legal_form: 'text', pending_reason_description: 'text', net_term_days: 'int4', bank_account: 'jsonb', confirmation_link: 'text' },
  invoice_events: { invoice_uuid: 'uuid', order_uuid: 'uuid', external_reference_id: 'text', event_time: 'text', event_time_sortable: 'text', gross_amount_cents: 'int8', amount_cents: 'int8' },
  payout_events: { payout_uuid: 'uuid', status: 'text', sepa_instruction_id: 'text', amount_cents: 'int8', external_reference_ids: 'text_list', event_time: 'text', event_time_sortable: 'text' },
  buyer_events: { buyer_uuid: 'uuid', state: 'text', external_reference_id: 'text', company_name: 'text', first_name: 'text', last_name: 'text', purchasing_limit_cents: 'int8', balance_cents: 'int8', max_collections_state: 'text', max_purchase_value_cents: 'int8' },
  kyc_events: { buyer_uuid: 'uuid', kyc_state: 'text', external_reference_id: 'text' },
  applicant_events: { applicant_uuid: 'uuid', state: 'text', external_reference_id: 'text', first_name: 'text', last_name: 'text', email: 'text', phone: 'text', reason: 'text', buyer_uuid: 'uuid', buyer: 'jsonb' },
  factoring_events: { factoring_uuid: 'uuid', invoice_external_reference_id: 'text', invoice_uuid: 'uuid', factoring_state: 'text', invoice_amount_cents: 'int8', payment_method: 'text', payment_terms_days: 'int4', bank_account: 'jsonb' },
  billing_configuration_events: { billing_configuration_uuid: 'uuid', buyer_uuid: 'uuid', schedule: 'text', due_in_days: 'int4', generation_delay_days: 'int4', payment_method_statement: 'text', event_time: 'text', event_time_sortable: 'text' },
} as const satisfies Record<string, Record<string, ColumnType>>;

export type TypedTable = keyof typeof TYPED_COLUMNS;
export type TypedRow = { table: TypedTable; values: Record<string, unknown> };

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

const columnsOfType = (types: readonly ColumnType[]) =>
  Object.fromEntries(
    Object.entries(TYPED_COLUMNS).map(([table, spec]) => [table, Object.entries(spec as Record<string, ColumnType>).filter(([, type]) => types.includes(type)).map(([column]) => column)]),
  ) as Record<TypedTable, string[]>;
const JSONB_COLUMNS = columnsOfType(['jsonb']);
const TEXT_COLUMNS = columnsOfType(['text', 'text_list']);

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
  return {
    table: 'order_events',
    values: {
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
    },
  };
}

export function invoiceRow(p: InvoicePayload, t: EventTime): TypedRow {
  return {
    table: 'invoice_events',
    values: {
      invoice_uuid: p.invoice_uuid,
      order_uuid: n(p.order_uuid),
      external_reference_id: p.external_reference_id,
      event_time: t.raw,
      event_time_sortable: t.sortable,
      gross_amount_cents: n(p.gross_amount_cents),
      amount_cents: n(p.amount_cents),
    },
  };
}

export function payoutRow(p: PayoutPayload, t: EventTime): TypedRow {
  return {
    table: 'payout_events',
    values: {
      payout_uuid: p.payout_uuid,
      status: p.topic.slice('payout/'.length),
      sepa_instruction_id: p.sepa_instruction_id,
      amount_cents: p.amount_cents,
      external_reference_ids: p.external_reference_ids,
      event_time: t.raw,
      event_time_sortable: t.sortable,
    },
  };
}

export function buyerRow(p: BuyerPayload): TypedRow {
  const b = p.buyer;
  return {
    table: 'buyer_events',
    values: {
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
    },
  };
}

export function kycRow(p: KycPayload): TypedRow {
  return {
    table: 'kyc_events',
    values: { buyer_uuid: p.buyer.uuid, kyc_state: n(p.buyer.kyc_state), external_reference_id: n(p.buyer.external_reference_id) },
  };
}

export function applicantRow(p: ApplicantPayload): TypedRow {
  const a = p.applicant;
  return {
    table: 'applicant_events',
    values: {
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
    },
  };
}

export function factoringRow(p: FactoringPayload): TypedRow {
  return {
    table: 'factoring_events',
    values: {
      factoring_uuid: p.factoring_uuid,
      invoice_external_reference_id: n(p.invoice_external_reference_id),
      invoice_uuid: n(p.invoice_uuid),
      factoring_state: n(p.factoring_state),
      invoice_amount_cents: n(p.invoice_amount_cents),
      payment_method: n(p.payment_method),
      payment_terms_days: n(p.payment_terms),
      bank_account: json(p.bank_account),
    },
  };
}

export function billingConfigurationRow(p: BillingConfigurationPayload, t: EventTime): TypedRow {
  return {
    table: 'billing_configuration_events',
    values: {
      billing_configuration_uuid: p.billing_configuration_uuid,
      buyer_uuid: n(p.buyer_uuid),
      schedule: n(p.schedule),
      due_in_days: n(p.due_in_days),
      generation_delay_days: n(p.generation_delay_days),
      payment_method_statement: n(p.payment_method_statement),
      event_time: t.raw,
      event_time_sortable: t.sortable,
    },
  };
}
