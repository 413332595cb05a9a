import { formatCents } from '../money.js';
import { isoDate } from '../time.js';
import type { StatementInput } from './types.js';

export const CSV_COLUMNS = [
  'entry_reference',
  'booking_date',
  'value_date',
  'amount',
  'currency',
  'credit_debit',
  'counterparty_name',
  'counterparty_iban',
  'end_to_end_reference',
  'remittance_information',
  'account_iban',
] as const;

function field(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** One row per booked line: signed decimal amount (debits negative), RFC 4180 quoting, CRLF. */
export function statementCsv(s: StatementInput): string {
  const rows = s.lines.map((line) =>
    [
      line.id,
      isoDate(line.bookedAt),
      isoDate(line.bookedAt),
      formatCents(line.amountCents),
      s.currency,
      line.amountCents < 0n ? 'DBIT' : 'CRDT',
      line.counterpartyName,
      line.counterpartyIban,
      line.reference,
      line.remittance,
      s.accountIban,
    ]
      .map(field)
      .join(','),
  );
  return `${[CSV_COLUMNS.join(','), ...rows].join('\r\n')}\r\n`;
}
