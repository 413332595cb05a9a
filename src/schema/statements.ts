import { sql } from 'drizzle-orm';
import { bigint, bigserial, boolean, date, index, integer, pgEnum, pgTable, primaryKey, smallint, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
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
    /** when the import had written the file's lines (src/statements/import.ts), just before its commit */
    importedAt: timestamp('imported_at', { withTimezone: true, precision: 6 }).notNull().defaultNow(),
    lineCount: integer('line_count').notNull(),
    /** statements in the file (CAMT <Stmt>, MT940 messages); null for files imported before it was recorded */
    statementCount: integer('statement_count'),
    /**
     * The file's lines by what became of them (src/statements/overlap.ts): stored as new bookings,
     * already held by a statement of the same identity, already held by an overlapping statement.
     * They add up to line_count; null for files imported before they were recorded.
     */
    linesNew: integer('lines_new'),
    linesKnown: integer('lines_known'),
    linesOverlap: integer('lines_overlap'),
    /**
     * Statements of the file whose balances could not be checked (a balance missing, or a format
     * without balances: CSV), and those stored unbalanced by `--accept-unbalanced` (each with a
     * statement_unbalanced finding); null for files imported before they were recorded.
     */
    balancesUnchecked: integer('balances_unchecked'),
    statementsUnbalanced: integer('statements_unbalanced'),
    /**
     * The statement_unbalanced findings that stand for its unbalanced statements, in file order: its
     * own, or an earlier file's when it is the same statement sent again in other bytes
     * (src/statements/import.ts recordUnbalanced); null for files imported before migration 0026.
     */
    unbalancedFindingIds: bigint('unbalanced_finding_ids', { mode: 'number' }).array(),
    /**
     * The form of the keys its lines and entries were stored with (src/statements/line-key.ts
     * KEY_FORMAT); null: the older form, a sha256 of each key's parts (files imported before
     * migration 0021, or by a release before it during a rolling update).
     */
    keyFormat: smallint('key_format'),
  },
  (t) => [uniqueIndex('bank_statements_file_uq').on(t.environment, t.fileSha256)],
);

/**
 * One row per booked line, brought by the first statement that held its booking
 * (src/statements/overlap.ts). position_key is where the line stands (statement identity, entry
 * index, transaction index), unique per environment; line_key equals it (rows imported before
 * migration 0013 keep their earlier key there; it is the identity a finding's evidence hashes).
 * entry_key names the booked entry the line belongs to: the lines of a split batch share it, and
 * statement_entries links every statement's entries to it. entry_index/tx_index are the line's
 * place in statement_id's file.
 */
export const statementLines = pgTable(
  'statement_lines',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    environment: providerEnvironment('environment').notNull(),
    // No foreign key: the import writes a file's lines in the transaction that inserts its
    // bank_statements row, by that row's id, and statements are never deleted (migration 0024's
    // trigger refuses it). The key's check cost every stored line a lookup and a row lock of its
    // statement: 100,000 lines copied in 3.36-3.48 s with it, 2.30-2.56 s without (bench/README.md,
    // statements).
    statementId: bigint('statement_id', { mode: 'number' }).notNull(),
    lineKey: text('line_key').notNull(),
    positionKey: text('position_key').notNull(),
    entryKey: text('entry_key').notNull(),
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
    uniqueIndex('statement_lines_position_uq').on(t.environment, t.positionKey),
    // A line's entry is found by its position key: since key format 2 (src/statements/line-key.ts)
    // the entry key is the position key's first 41 characters, so statement_lines_position_uq's
    // range finds an entry's lines. Only lines stored with older keys (an entry key that does not
    // start their position key) are indexed by entry key. An index of every line's entry key cost
    // each stored line an insertion and 116 bytes (bench/README.md, statements).
    index('statement_lines_older_entry_idx')
      .on(t.environment, t.entryKey)
      .where(sql`${t.entryKey} <> left(${t.positionKey}, 41)`),
    index('statement_lines_sepa_idx').on(t.environment, t.sepaReference),
    // No index on counterparty_iban or statement_id: every rule reads the counterparty of credit
    // lines it has already found by scanning them (ledger/payout-credits.ts), and no statement's
    // lines are read, updated or deleted by its id. Each index cost every stored line an insertion
    // (migration 0021).
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
    /** the statement's account (src/statements/account.ts); null when it names none, and for files imported before migration 0013 */
    accountIban: text('account_iban'),
    /** the bank-local days the statement covers wholly (a CAMT period with times of day may cover its first or last day in part) */
    firstWholeDay: date('first_whole_day', { mode: 'string' }),
    lastWholeDay: date('last_whole_day', { mode: 'string' }),
  },
  (t) => [
    primaryKey({ columns: [t.statementId, t.sectionIndex] }),
    index('statement_periods_env_idx').on(t.environment, t.periodFrom),
    index('statement_periods_account_idx').on(t.environment, t.accountIban, t.firstWholeDay),
  ],
);

/**
 * The balances each statement of a file opens and closes with, as the file states them (MT940
 * :60F:/:60M: and :62F:/:62M:; a statement of pages: its first opening and last closing). A
 * statement that opens with a stored statement's closing balance, or closes with its opening one,
 * continues it, and the two hold no common booking (src/statements/consecutive.ts): two statements
 * a bank sends for one day both cover the day wholly, yet the second's bookings are not the first's.
 * statement_key is the prefix the statement's entry keys start with (src/statements/line-key.ts
 * statementKeyPrefix), by which a stored entry finds its statement's balances. Written by the
 * readers that keep balances (MT940, CAMT.053 of one currency); statements imported before
 * migration 0027 have no row.
 */
export const statementBalances = pgTable(
  'statement_balances',
  {
    statementId: bigint('statement_id', { mode: 'number' })
      .notNull()
      .references(() => bankStatements.id),
    /** the statement's position in its file, from 0 */
    sectionIndex: integer('section_index').notNull(),
    environment: providerEnvironment('environment').notNull(),
    statementKey: text('statement_key').notNull(),
    accountIban: text('account_iban'),
    /** the field that states it ('60F', '60M', 'OPBD', 'PRCD'); null, with the three after it, when the statement has no opening balance */
    openingKind: text('opening_kind'),
    openingDate: date('opening_date', { mode: 'string' }),
    openingCurrency: text('opening_currency'),
    /** signed minor units, a credit balance positive */
    openingCents: bigint('opening_cents', { mode: 'bigint' }),
    /** the field that states it ('62F', '62M', 'CLBD'); null, with the three after it, when the statement has no closing balance */
    closingKind: text('closing_kind'),
    closingDate: date('closing_date', { mode: 'string' }),
    closingCurrency: text('closing_currency'),
    closingCents: bigint('closing_cents', { mode: 'bigint' }),
    /** both balances present and the opening balance plus the bookings gave the closing one */
    balanced: boolean('balanced').notNull(),
  },
  (t) => [primaryKey({ columns: [t.statementId, t.sectionIndex] }), index('statement_balances_key_idx').on(t.environment, t.statementKey)],
);

/**
 * One row per booked entry of every imported statement (a CAMT Ntry, an MT940 :61:, a CSV row),
 * whether it brought its lines or found its booking already stored (src/statements/overlap.ts).
 * lines_entry_key names the statement_lines.entry_key that holds the booking: the entry's own
 * entry_key when it brought it (match 'new'), another statement's when it was already there
 * ('reference': the bank's entry reference; 'day': the same booking of a day a statement covers
 * wholly). So each statement keeps every one of its bookings, linked to the stored lines, and its
 * stored lines still add up to its booked entries.
 */
export const statementEntries = pgTable(
  'statement_entries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    environment: providerEnvironment('environment').notNull(),
    entryKey: text('entry_key').notNull(),
    // No foreign key, as statement_lines.statement_id.
    statementId: bigint('statement_id', { mode: 'number' }).notNull(),
    accountIban: text('account_iban'),
    bookingDate: date('booking_date', { mode: 'string' }).notNull(),
    currency: text('currency').notNull(),
    direction: statementDirection('direction').notNull(),
    /** the entry as booked: a split batch's total */
    amountCents: bigint('amount_cents', { mode: 'bigint' }).notNull(),
    /** the bank's entry reference (CAMT Ntry AcctSvcrRef, MT940 '//' reference, CSV entry_reference) */
    entryReference: text('entry_reference'),
    linesEntryKey: text('lines_entry_key').notNull(),
    match: text('match').notNull(),
  },
  (t) => [
    uniqueIndex('statement_entries_key_uq').on(t.environment, t.entryKey),
    index('statement_entries_booking_idx').on(t.environment, t.accountIban, t.bookingDate, t.amountCents),
  ],
);
