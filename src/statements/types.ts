export const STATEMENT_FORMATS = ['camt053', 'mt940', 'csv'] as const;
export type StatementFormat = (typeof STATEMENT_FORMATS)[number];
export type Direction = 'credit' | 'debit';

/** One booked line as every format is reduced to it. Amounts are positive bigint cents; the sign is `direction`. */
export interface StatementLine {
  accountIban: string | null;
  /** YYYY-MM-DD */
  bookingDate: string;
  valueDate: string | null;
  amountCents: bigint;
  currency: string;
  direction: Direction;
  counterpartyIban: string | null;
  counterpartyName: string | null;
  endToEndId: string | null;
  instructionId: string | null;
  /** the bank's own entry reference */
  bankReference: string | null;
  remittance: string | null;
  /** the instruction id payouts are matched on (reference.ts) */
  sepaReference: string | null;
}

export interface ParsedStatement {
  format: StatementFormat;
  accountIban: string | null;
  /** ISO 8601 UTC instants bounding the bookings the file claims to cover, when it says */
  periodFrom: string | null;
  periodTo: string | null;
  lines: StatementLine[];
}

/** A file that is not a statement we can read: exit 2 for the command, inbox/failed for the inbox. */
export class StatementFormatError extends Error {
  override readonly name = 'StatementFormatError';
}
