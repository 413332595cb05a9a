export const STATEMENT_FORMATS = ['camt053', 'mt940', 'csv'] as const;
export type StatementFormat = (typeof STATEMENT_FORMATS)[number];
export type Direction = 'credit' | 'debit';

/** One booked line as every format is reduced to it. Amounts are positive bigint cents; the sign is `direction`. */
export interface StatementLine {
  accountIban: string | null;
  /** YYYY-MM-DD, the bank's local date */
  bookingDate: string;
  /** YYYY-MM-DD as the bank wrote it: may be an impossible date such as 2026-02-30 (German banks' interest value dates) */
  valueDate: string | null;
  amountCents: bigint;
  currency: string;
  direction: Direction;
  counterpartyIban: string | null;
  counterpartyName: string | null;
  endToEndId: string | null;
  instructionId: string | null;
  /** the bank's own reference of this line (a split batch's transaction: its own, or '<entry reference>/<n>') */
  bankReference: string | null;
  /** the booked entry's reference, when the line is one transaction of a split batch; else bankReference is it */
  entryReference?: string | null;
  remittance: string | null;
  /** the instruction id payouts are matched on (reference.ts) */
  sepaReference: string | null;
  /** index into ParsedStatement.sections */
  section: number;
  /** the booked entry's position in its statement (0-based: CAMT Ntry, MT940 :61:, CSV row) */
  entryIndex: number;
  /** the transaction's position in its entry when a batch is split, else 0 */
  txIndex: number;
  /** where the line is in its file, for messages (CSV row, CAMT statement and entry) */
  where?: string;
}

/** Signed amounts per currency, in cents: credits positive. */
export type Totals = Map<string, { credit: bigint; debit: bigint }>;

/**
 * One statement inside a file (a CAMT <Stmt>, an MT940 message or a chain of :60M:/:62M: pages,
 * a whole CSV). Its identity says which statement of the bank it is, independent of the bytes.
 */
export interface StatementSection {
  /** the bank's identity of the statement: format, account, statement id/number and period */
  identity: string;
  accountIban: string | null;
  /** ISO 8601 UTC instants (bank-local wall clock, see camt053.ts) bounding the bookings this statement covers */
  periodFrom: string | null;
  periodTo: string | null;
  /**
   * The bank-local days this statement covers wholly, when its period has times of day (a CAMT
   * FrDtTm/ToDtTm inside a day); null at either end: the days of its period, which are whole
   * (MT940, CSV, CAMT with dates); see line-key.ts wholeDays.
   */
  firstWholeDay: string | null;
  lastWholeDay: string | null;
  /**
   * The identity the statement had before its present form, when that changed: rule 1 of overlap.ts
   * finds the entries stored under it too, as the same statement's, where their lines' texts are the
   * file's (a CSV naming no account, whose counterparties and remittances joined its identity; csv.ts).
   */
  formerIdentity?: string;
  /** the booked entries as the file states them, before any split into transactions */
  booked: Totals;
  /**
   * What its balances say (totals.ts balanceCheck); absent for a format that carries none (CSV):
   * then, as for 'unchecked', nothing proves that the lines are the whole statement.
   */
  balances?: BalanceCheck;
  /**
   * The balances that open and close the statement as its file states them (a statement of MT940
   * pages: its first page's opening, its last page's closing), each null where missing; absent for
   * a reader that keeps none (CSV, and a CAMT.053 of several currencies, which states a pair per
   * currency). overlap.ts tells a statement that continues another by them (consecutive.ts).
   */
  ends?: { opening: StatedBalance | null; closing: StatedBalance | null };
}

/** A balance as a statement states it. */
export interface StatedBalance {
  /** signed cents, a credit balance positive */
  cents: bigint;
  currency: string;
  /** YYYY-MM-DD, the bank's date of the balance */
  date: string;
  /** the field that states it: MT940 '60F', '60M' (opening), '62F', '62M' (closing); CAMT.053 'OPBD', 'PRCD' (opening), 'CLBD' (closing) */
  kind: string;
}

/**
 * A statement's balance check: opening balance + bookings = closing balance held ('balanced'); a
 * balance was missing, so it could not be checked ('unchecked', saying which); or it did not hold
 * and the import was told to store the statement anyway ('unbalanced': closing minus computed).
 */
export type BalanceCheck =
  | { state: 'balanced' }
  | { state: 'unchecked'; reason: string }
  | { state: 'unbalanced'; currency: string; openingCents: bigint; creditCents: bigint; debitCents: bigint; closingCents: bigint; differenceCents: bigint; message: string };

/** How a reader treats what it can read but should not import as it is. */
export interface ReaderOptions {
  /**
   * Read a statement whose balances are present and disagree with its bookings, recording the
   * difference (BalanceCheck 'unbalanced'), instead of refusing it: `statement import
   * --accept-unbalanced`, STATEMENT_ACCEPT_UNBALANCED.
   */
  acceptUnbalanced?: boolean;
}

export interface ParsedStatement {
  format: StatementFormat;
  accountIban: string | null;
  /** ISO 8601 UTC instants bounding the bookings the file claims to cover, when it says */
  periodFrom: string | null;
  periodTo: string | null;
  sections: StatementSection[];
  lines: StatementLine[];
}

/**
 * Receives each statement of a file as soon as it is complete, with its lines. A reader whose
 * statement is too long to hold (a CSV export of any length) hands its lines over in parts: each
 * part but the last with `more` set and a provisional section, the last with the statement as it
 * ended (its identity, period and totals known only then).
 */
export type SectionSink = (section: StatementSection, lines: StatementLine[], more?: boolean) => void;

/**
 * A format's reader: text goes in as it is read, finished statements come out through the sink, so
 * a file is never held whole (memory is bounded by its largest statement, or by a part of it). Throws
 * StatementFormatError from write() or end() on what it cannot read.
 */
export interface StatementReader {
  readonly format: StatementFormat;
  write(text: string): void;
  end(): void;
}

/** A file that is not a statement we can read, or one that contradicts itself: exit 1 for the command, inbox/failed for the inbox. */
export class StatementFormatError extends Error {
  override readonly name = 'StatementFormatError';
}

// Enough of a value to recognise it: a refusal quoting a hostile field whole would put megabytes
// into the inbox's .error file and into every log line about it.
const QUOTE_CHARS = 60;

/** A value from the file for a message, cut to `max` characters. */
export function excerpt(value: string, max = QUOTE_CHARS): string {
  return value.length > max ? `${value.slice(0, max)}…` : value;
}

/** A value from the file for a message: in quotes, cut to QUOTE_CHARS characters. */
export function quoted(value: string): string {
  return value.length > QUOTE_CHARS ? `'${excerpt(value)}' (${value.length} characters)` : `'${value}'`;
}
