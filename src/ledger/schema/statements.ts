import { bigint, bigserial, date, index, integer, pgEnum, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { providerEnvironment } from './common.js';

export const statementFormat = pgEnum('statement_format', ['camt053', 'mt940', 'csv']);
export const statementDirection = pgEnum('statement_direction', ['credit', 'debit']);

/**
 * One row per imported statement file. The sha256 of the file's bytes makes re-importing the same
 * file a no-op. period_from/period_to is the span of bookings the bank says the file covers
 * (CAMT.053 FrToDt, else its first to last booking day; MT940 opening to closing balance date,
 * whole days; CSV the first to last booking day; the union over the statements a file holds): payout_not_on_statement only claims a credit is missing for a span some imported
 * statement covers (src/reconcile/rules/payout-not-on-statement.ts).
 */
export const bankStatements = pgTable(
  'bank_statements',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    environment: providerEnvironment('environment').notNull(),
    fileSha256: text('file_sha256').notNull(),
    fileName: text('file_name'),
    format: statementFormat('format').notNull(),
    accountIban: text('account_iban'),
    periodFrom: timestamp('period_from', { withTimezone: true, precision: 6 }),
    periodTo: timestamp('period_to', { withTimezone: true, precision: 6 }),
    importedAt: timestamp('imported_at', { withTimezone: true, precision: 6 }).notNull().defaultNow(),
    lineCount: integer('line_count').notNull(),
    /** statements in the file (CAMT <Stmt>, MT940 messages); null for files imported before it was recorded */
    statementCount: integer('statement_count'),
  },
  (t) => [uniqueIndex('bank_statements_file_uq').on(t.environment, t.fileSha256)],
);

/**
 * One row per booked line, whichever statement brought it first. Two identities, each unique per
 * environment (src/statements/line-key.ts): position_key, where the line stands (statement
 * identity, entry index, transaction index), so re-importing a statement adds nothing and equal
 * bookings stay two; line_key, which booking it is across overlapping statements (the bank's own
 * reference where it identifies the line, else the n-th equal booking of a day the statement covers
 * wholly, else the position). entry_index/tx_index are the line's place in statement_id's file.
 */
export const statementLines = pgTable(
  'statement_lines',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    environment: providerEnvironment('environment').notNull(),
    statementId: bigint('statement_id', { mode: 'number' })
      .notNull()
      .references(() => bankStatements.id),
    lineKey: text('line_key').notNull(),
    positionKey: text('position_key').notNull(),
    entryIndex: integer('entry_index').notNull(),
    txIndex: integer('tx_index').notNull(),
    accountIban: text('account_iban'),
    bookingDate: date('booking_date', { mode: 'string' }).notNull(),
    valueDate: date('value_date', { mode: 'string' }),
    /** Always positive; the sign is in direction. */
    amountCents: bigint('amount_cents', { mode: 'bigint' }).notNull(),
    currency: text('currency').notNull(),
    direction: statementDirection('direction').notNull(),
    counterpartyIban: text('counterparty_iban'),
    counterpartyName: text('counterparty_name'),
    endToEndId: text('end_to_end_id'),
    /** The bank's own entry reference (CAMT AcctSvcrRef, MT940 after //, CSV entry_reference). */
    bankReference: text('bank_reference'),
    remittance: text('remittance'),
    /** The instruction id payouts are matched on (src/statements/reference.ts). */
    sepaReference: text('sepa_reference'),
    importedAt: timestamp('imported_at', { withTimezone: true, precision: 6 }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('statement_lines_key_uq').on(t.environment, t.lineKey),
    uniqueIndex('statement_lines_position_uq').on(t.environment, t.positionKey),
    index('statement_lines_sepa_idx').on(t.environment, t.sepaReference),
    index('statement_lines_counterparty_idx').on(t.environment, t.counterpartyIban),
    index('statement_lines_statement_idx').on(t.statementId),
  ],
);

/**
 * The period each statement of a file covers (a file may hold several, e.g. Monday's and
 * Wednesday's): payout_not_on_statement asks whether the statements cover a payout's settlement
 * window, and the union of a file's first and last day would claim the days between them too.
 */
export const statementPeriods = pgTable(
  'statement_periods',
  {
    statementId: bigint('statement_id', { mode: 'number' })
      .notNull()
      .references(() => bankStatements.id),
    /** the statement's position in its file, from 0 */
    sectionIndex: integer('section_index').notNull(),
    environment: providerEnvironment('environment').notNull(),
    periodFrom: timestamp('period_from', { withTimezone: true, precision: 6 }).notNull(),
    periodTo: timestamp('period_to', { withTimezone: true, precision: 6 }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.statementId, t.sectionIndex] }), index('statement_periods_env_idx').on(t.environment, t.periodFrom)],
);
