import type { BankLine } from '../model.js';

export interface StatementInput {
  /** statement id, unique per file */
  id: string;
  accountIban: string;
  accountOwner: string;
  currency: string;
  openingBalanceCents: bigint;
  /** booked lines in booking order */
  lines: readonly BankLine[];
  /** simulated ms */
  from: number;
  to: number;
  createdAt: number;
}

export function closingBalance(s: StatementInput): bigint {
  return s.lines.reduce((sum, line) => sum + line.amountCents, s.openingBalanceCents);
}
