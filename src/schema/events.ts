import { bigint, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { providerEnvironment } from './common.js';

/**
 * Typed records of what each applied event says, one table per topic family. A row exists only for
 * the delivery applied for its event (webhook_deliveries.applied); extra payload fields stay in the raw body.
 * Every table is keyed by (environment, event_key) so re-applying is a no-op.
 */
const eventColumns = {
  environment: providerEnvironment('environment').notNull(),
  eventKey: text('event_key').notNull(),
  topic: text('topic').notNull(),
  receivedAt: timestamp('received_at', { withTimezone: true, precision: 6 }).notNull(),
};
const cents = (name: string) => bigint(name, { mode: 'bigint' });

export const orderEvents = pgTable(
  'order_events',
  {
    ...eventColumns,
    orderUuid: uuid('order_uuid').notNull(),
    orderState: text('order_state').notNull(),
    externalReferenceId: text('external_reference_id'),
    eventTime: text('event_time').notNull(),
    eventTimeSortable: text('event_time_sortable').notNull(),
    buyerUuid: uuid('buyer_uuid'),
    buyerName: text('buyer_name'),
    buyerLegalForm: text('buyer_legal_form'),
    pendingReasonDescription: text('pending_reason_description'),
    netTermDays: integer('net_term_days'),
    bankAccount: jsonb('bank_account'),
    confirmationLink: text('confirmation_link'),
  },
  (t) => [
    primaryKey({ columns: [t.environment, t.eventKey] }),
    // An order's events, newest first (event_key breaks ties of event_time_sortable), carrying the
    // state and arrival the reconciler needs: state_mismatch reads each order's latest event as the
    // first of its entries in a forward index-only scan, with neither a sort nor the heap. Forward,
    // because the kernel reads ahead of a forward scan only: at 10,000,000 orders on a cold cache
    // the index's 408,371 pages took 50 s of reads scanned backward in time order, 8.5 s forward
    // (bench/README.md, "state_mismatch at 10,000,000 orders"). drizzle has no INCLUDE, so state and
    // arrival are trailing key columns; NULLS FIRST is what ORDER BY ... DESC means (with drizzle's
    // NULLS LAST the planner sorts). Migration 0022 also tells the planner how many orders there are.
    index('order_events_order_idx').on(t.environment, t.orderUuid, t.eventTimeSortable.desc().nullsFirst(), t.eventKey.desc().nullsFirst(), t.orderState, t.receivedAt),
    index('order_events_state_idx').on(t.environment, t.orderUuid, t.orderState),
    // Reconciliation: the orders whose webhooks arrived since the last pass (src/reconcile/scope.ts).
    index('order_events_received_idx').on(t.environment, t.receivedAt),
  ],
);

export const invoiceEvents = pgTable(
  'invoice_events',
  {
    ...eventColumns,
    invoiceUuid: uuid('invoice_uuid').notNull(),
    orderUuid: uuid('order_uuid'),
    externalReferenceId: text('external_reference_id'),
    eventTime: text('event_time'),
    eventTimeSortable: text('event_time_sortable'),
    grossAmountCents: cents('gross_amount_cents'),
    amountCents: cents('amount_cents'),
  },
  (t) => [
    primaryKey({ columns: [t.environment, t.eventKey] }),
    index('invoice_events_invoice_idx').on(t.environment, t.invoiceUuid),
    index('invoice_events_reference_idx').on(t.environment, t.externalReferenceId),
    // The pass's test whether any invoice evidence is new, or reached a deadline (reconcile/invoice-scope.ts).
    index('invoice_events_received_idx').on(t.environment, t.receivedAt),
  ],
);

export const payoutEvents = pgTable(
  'payout_events',
  {
    ...eventColumns,
    payoutUuid: uuid('payout_uuid').notNull(),
    status: text('status').notNull(),
    sepaInstructionId: text('sepa_instruction_id'),
    amountCents: cents('amount_cents'),
    externalReferenceIds: text('external_reference_ids').array().notNull(),
    eventTime: text('event_time'),
    eventTimeSortable: text('event_time_sortable'),
  },
  (t) => [
    primaryKey({ columns: [t.environment, t.eventKey] }),
    index('payout_events_payout_idx').on(t.environment, t.payoutUuid),
    index('payout_events_sepa_idx').on(t.environment, t.sepaInstructionId),
    // The pass's test whether any invoice evidence is new, or reached a deadline (reconcile/invoice-scope.ts).
    index('payout_events_received_idx').on(t.environment, t.receivedAt),
  ],
);

export const buyerEvents = pgTable(
  'buyer_events',
  {
    ...eventColumns,
    buyerUuid: uuid('buyer_uuid').notNull(),
    state: text('state'),
    externalReferenceId: text('external_reference_id'),
    companyName: text('company_name'),
    firstName: text('first_name'),
    lastName: text('last_name'),
    purchasingLimitCents: cents('purchasing_limit_cents'),
    balanceCents: cents('balance_cents'),
    maxCollectionsState: text('max_collections_state'),
    maxPurchaseValueCents: cents('max_purchase_value_cents'),
  },
  (t) => [primaryKey({ columns: [t.environment, t.eventKey] }), index('buyer_events_buyer_idx').on(t.environment, t.buyerUuid)],
);

export const kycEvents = pgTable(
  'kyc_events',
  {
    ...eventColumns,
    buyerUuid: uuid('buyer_uuid').notNull(),
    kycState: text('kyc_state'),
    externalReferenceId: text('external_reference_id'),
  },
  (t) => [primaryKey({ columns: [t.environment, t.eventKey] }), index('kyc_events_buyer_idx').on(t.environment, t.buyerUuid)],
);

export const applicantEvents = pgTable(
  'applicant_events',
  {
    ...eventColumns,
    applicantUuid: uuid('applicant_uuid').notNull(),
    state: text('state'),
    externalReferenceId: text('external_reference_id'),
    firstName: text('first_name'),
    lastName: text('last_name'),
    email: text('email'),
    phone: text('phone'),
    reason: text('reason'),
    buyerUuid: uuid('buyer_uuid'),
    buyer: jsonb('buyer'),
  },
  (t) => [primaryKey({ columns: [t.environment, t.eventKey] }), index('applicant_events_applicant_idx').on(t.environment, t.applicantUuid)],
);

export const factoringEvents = pgTable(
  'factoring_events',
  {
    ...eventColumns,
    factoringUuid: uuid('factoring_uuid').notNull(),
    invoiceExternalReferenceId: text('invoice_external_reference_id'),
    invoiceUuid: uuid('invoice_uuid'),
    factoringState: text('factoring_state'),
    invoiceAmountCents: cents('invoice_amount_cents'),
    paymentMethod: text('payment_method'),
    paymentTermsDays: integer('payment_terms_days'),
    bankAccount: jsonb('bank_account'),
  },
  (t) => [
    primaryKey({ columns: [t.environment, t.eventKey] }),
    index('factoring_events_factoring_idx').on(t.environment, t.factoringUuid),
    // An invoice's factoring events, latest first: payout_pays_canceled_invoice and
    // payout_deduction_mismatch look up each listed invoice's factoring before its payout, which
    // without it scanned all of factoring_events per invoice (10,000 orders: 21.6 s for
    // 10,000 lookups of 2.1 ms each, quadratic in invoices; bench/README.md, reconcile).
    index('factoring_events_reference_idx').on(t.environment, t.invoiceExternalReferenceId, t.receivedAt, t.eventKey),
    // The pass's test whether any invoice evidence is new, or reached a deadline (reconcile/invoice-scope.ts).
    index('factoring_events_received_idx').on(t.environment, t.receivedAt),
  ],
);

export const billingConfigurationEvents = pgTable(
  'billing_configuration_events',
  {
    ...eventColumns,
    billingConfigurationUuid: uuid('billing_configuration_uuid').notNull(),
    buyerUuid: uuid('buyer_uuid'),
    schedule: text('schedule'),
    dueInDays: integer('due_in_days'),
    generationDelayDays: integer('generation_delay_days'),
    paymentMethodStatement: text('payment_method_statement'),
    eventTime: text('event_time'),
    eventTimeSortable: text('event_time_sortable'),
  },
  (t) => [primaryKey({ columns: [t.environment, t.eventKey] })],
);
