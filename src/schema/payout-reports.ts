import { bigint, bigserial, index, integer, pgEnum, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { providerEnvironment } from './common.js';

export const payoutReportFormat = pgEnum('payout_report_format', ['csv', 'xlsx']);
/** The documented kinds of row (provider-merchant-docs.md, "The payout report"). */
export const payoutDocType = pgEnum('payout_doc_type', ['invoice', 'credit_note', 'buyer_payment', 'dispute']);

/**
 * One row per imported payout report file (the provider portal's CSV or XLSX). The sha256 of the
 * file's bytes makes re-importing the same file a no-op; row_count is the rows the file held.
 */
export const payoutReports = pgTable(
  'payout_reports',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    environment: providerEnvironment('environment').notNull(),
    sha256: text('sha256').notNull(),
    fileName: text('file_name'),
    format: payoutReportFormat('format').notNull(),
    /** when the import stored the report (its transaction's lock taken), not when the transaction began */
    importedAt: timestamp('imported_at', { withTimezone: true, precision: 6 }).notNull().defaultNow(),
    rowCount: integer('row_count').notNull(),
  },
  (t) => [uniqueIndex('payout_reports_file_uq').on(t.environment, t.sha256)],
);

const cents = (name: string) => bigint(name, { mode: 'bigint' });

/**
 * One row per document a payout settled, as the report says, tied to the payout it belongs to
 * (src/payout-reports/import.ts: by the file's Payout Reference, else by the one payout whose
 * listed invoices and amount the file matches exactly). Amounts in integer cents with the reader's
 * signs (credit note, buyer payment and dispute rows reduce the payout: negative); rates in micros
 * of a percent point times 10,000 (2.9 % -> 29000), null when the file has no such column.
 * Unique per (payout, doc type, doc no): a second file about the same payout adds nothing.
 */
export const payoutReportRows = pgTable(
  'payout_report_rows',
  {
    environment: providerEnvironment('environment').notNull(),
    reportId: bigint('report_id', { mode: 'number' })
      .notNull()
      .references(() => payoutReports.id),
    /** 1-based line (CSV) or row (XLSX) in the report file */
    line: integer('line').notNull(),
    payoutUuid: uuid('payout_uuid').notNull(),
    orderNo: text('order_no'),
    docNo: text('doc_no').notNull(),
    docType: payoutDocType('doc_type').notNull(),
    currency: text('currency'),
    transactionAmountCents: cents('transaction_amount_cents').notNull(),
    discountRateMicros: integer('discount_rate_micros'),
    mdrRateMicros: integer('mdr_rate_micros'),
    transactionFeeCents: cents('transaction_fee_cents').notNull(),
    grossPurchasePriceCents: cents('gross_purchase_price_cents').notNull(),
    discountCents: cents('discount_cents').notNull(),
    vatOnDiscountCents: cents('vat_on_discount_cents').notNull(),
    transferAmountCents: cents('transfer_amount_cents').notNull(),
    totalDeductionsCents: cents('total_deductions_cents').notNull(),
  },
  (t) => [
    uniqueIndex('payout_report_rows_doc_uq').on(t.environment, t.payoutUuid, t.docType, t.docNo),
    // The invoice rules and the invoices report find an invoice's rows by its reference.
    index('payout_report_rows_doc_idx').on(t.environment, t.docNo),
    index('payout_report_rows_report_idx').on(t.reportId),
  ],
);
