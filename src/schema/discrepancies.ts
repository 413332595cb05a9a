import { bigint, bigserial, index, jsonb, pgEnum, pgTable, primaryKey, text, timestamp, uniqueIndex, integer, uuid } from 'drizzle-orm/pg-core';
import { providerEnvironment } from './common.js';

export const DISCREPANCY_KINDS = [
  'missed_webhook',
  'state_mismatch',
  'orphan_webhook',
  'duplicate_event',
  'duplicate_delivery',
  'payout_not_on_statement',
  'statement_credit_without_payout',
  'payout_amount_mismatch',
  'payout_cancelled_but_credited',
  'payout_unknown_invoice',
  'statement_unbalanced',
  'invoice_not_paid_out',
  'invoice_paid_out_twice',
  'payout_pays_canceled_invoice',
  'buyer_paid_merchant_directly',
  'payout_deduction_mismatch',
  'payout_report_mismatch',
] as const;
export type DiscrepancyKind = (typeof DISCREPANCY_KINDS)[number];

export const DISCREPANCY_STATUSES = ['open', 'resolved', 'acknowledged'] as const;
export type DiscrepancyStatus = (typeof DISCREPANCY_STATUSES)[number];

export const ENTITY_TYPES = ['order', 'invoice', 'payout', 'statement_line', 'webhook_delivery', 'statement'] as const;

export const discrepancyKind = pgEnum('discrepancy_kind', DISCREPANCY_KINDS);
export const discrepancyStatus = pgEnum('discrepancy_status', DISCREPANCY_STATUSES);
export const discrepancyEntityType = pgEnum('discrepancy_entity_type', ENTITY_TYPES);

/**
 * A problem found by the reconciliation, created once per (environment, kind, entity, subject) and
 * then moved through its lifecycle. `subject` tells apart two findings of one kind on one entity
 * (the state of a duplicate_event, the delivery of a duplicate_delivery); it is '' when there is one.
 */
export const discrepancies = pgTable(
  'discrepancies',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    environment: providerEnvironment('environment').notNull(),
    kind: discrepancyKind('kind').notNull(),
    status: discrepancyStatus('status').notNull().default('open'),
    entityType: discrepancyEntityType('entity_type').notNull(),
    entityId: text('entity_id').notNull(),
    subject: text('subject').notNull().default(''),
    externalReferenceId: text('external_reference_id'),
    sepaReference: text('sepa_reference'),
    expected: text('expected'),
    observed: text('observed'),
    details: text('details').notNull(),
    evidence: jsonb('evidence').$type<Record<string, unknown>>(),
    /** Hash of the evidence when a person acknowledged it: changed evidence reopens it. */
    acknowledgedEvidenceHash: text('acknowledged_evidence_hash'),
    evidenceHash: text('evidence_hash'),
    firstDetectedAt: timestamp('first_detected_at', { withTimezone: true, precision: 6 }).notNull().defaultNow(),
    lastCheckedAt: timestamp('last_checked_at', { withTimezone: true, precision: 6 }).notNull().defaultNow(),
    resolvedAt: timestamp('resolved_at', { withTimezone: true, precision: 6 }),
    acknowledgedAt: timestamp('acknowledged_at', { withTimezone: true, precision: 6 }),
    acknowledgedBy: text('acknowledged_by'),
    ackNote: text('ack_note'),
  },
  (t) => [
    uniqueIndex('discrepancies_identity_uq').on(t.environment, t.kind, t.entityType, t.entityId, t.subject),
    index('discrepancies_status_idx').on(t.environment, t.status, t.kind),
    index('discrepancies_detected_idx').on(t.firstDetectedAt),
  ],
);

/** Every status change: who or what made it, when and why. */
export const discrepancyHistory = pgTable(
  'discrepancy_history',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    discrepancyId: bigint('discrepancy_id', { mode: 'number' })
      .notNull()
      .references(() => discrepancies.id, { onDelete: 'cascade' }),
    at: timestamp('at', { withTimezone: true, precision: 6 }).notNull().defaultNow(),
    fromStatus: discrepancyStatus('from_status'),
    toStatus: discrepancyStatus('to_status').notNull(),
    actor: text('actor').notNull(),
    reason: text('reason').notNull(),
    evidence: jsonb('evidence').$type<Record<string, unknown>>(),
  },
  (t) => [index('discrepancy_history_discrepancy_idx').on(t.discrepancyId, t.at)],
);

/** One row per reconciliation pass. */
export const reconcileRuns = pgTable('reconcile_runs', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  environment: providerEnvironment('environment').notNull(),
  startedAt: timestamp('started_at', { withTimezone: true, precision: 6 }).notNull().defaultNow(),
  finishedAt: timestamp('finished_at', { withTimezone: true, precision: 6 }),
  status: text('status').notNull().default('running'),
  opened: integer('opened').notNull().default(0),
  resolved: integer('resolved').notNull().default(0),
  reopened: integer('reopened').notNull().default(0),
  error: text('error'),
  /** 'full' (every order) or 'incremental' (orders whose evidence may have changed since the last pass). */
  mode: text('mode').notNull().default('full'),
  /**
   * The settings the pass judged with (grace period, payout settings; reconcile/settings.ts), so a
   * one-off pass can judge as the daemon does. Null on passes of releases before it was recorded.
   */
  settings: jsonb('settings'),
  /** 'daemon' (the scheduler of `start`) or 'command' (a one-off `reconcile`); null before it was recorded. */
  origin: text('origin'),
  /**
   * Money in transit and what the payout reports kept back, as the pass saw the ledger
   * (reconcile/invoice-totals.ts); the metrics read the latest (payout-import/metrics.ts). Null on
   * passes of releases before it was recorded.
   */
  invoiceTotals: jsonb('invoice_totals'),
}, (t) => [
  // The latest runs of an environment: the pass's scope (reconcile/scope.ts) and the invoice
  // metrics read them on every pass and scrape, of a table that grows by a row per pass.
  index('reconcile_runs_started_idx').on(t.environment, t.startedAt),
]);

/**
 * Sets the invoice rules read, derived from the invoice and factoring events and kept between
 * reconcile passes, so that a pass with new events recomputes only what they touch
 * (reconcile/kept-set.ts, reconcile/rules/invoice-common.ts say how and why that is enough).
 * Derived: only the pass writes and reads them, and a full pass recomputes them.
 *
 * Each invoice as its invoice events say (ledger/invoices.ts invoiceFacts).
 */
export const reconcileInvoiceFacts = pgTable('reconcile_invoice_facts', {
  environment: providerEnvironment('environment').notNull(),
  invoiceUuid: uuid('invoice_uuid').notNull(),
  ref: text('ref').notNull(),
  orderUuid: uuid('order_uuid'),
  createdAt: timestamp('created_at', { withTimezone: true, precision: 6 }).notNull(),
  canceledAt: timestamp('canceled_at', { withTimezone: true, precision: 6 }),
  grossAmountCents: bigint('gross_amount_cents', { mode: 'bigint' }),
}, (t) => [primaryKey({ columns: [t.environment, t.invoiceUuid] })]);

/** Each invoice reference's latest factoring event by arrival: its topic, arrival and factored amount. */
export const reconcileFactoringLatest = pgTable('reconcile_factoring_latest', {
  environment: providerEnvironment('environment').notNull(),
  ref: text('ref').notNull(),
  topic: text('topic').notNull(),
  receivedAt: timestamp('received_at', { withTimezone: true, precision: 6 }).notNull(),
  invoiceAmountCents: bigint('invoice_amount_cents', { mode: 'bigint' }),
}, (t) => [primaryKey({ columns: [t.environment, t.ref] })]);

/** Every reference an invoice event carries. */
export const reconcileInvoiceRefs = pgTable('reconcile_invoice_refs', {
  environment: providerEnvironment('environment').notNull(),
  ref: text('ref').notNull(),
}, (t) => [primaryKey({ columns: [t.environment, t.ref] })]);
