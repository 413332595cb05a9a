import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Business } from '../business.js';
import type { BankLine } from '../model.js';
import { Prng } from '../prng.js';
import { camt053 } from './camt053.js';
import { statementCsv } from './csv.js';
import { mt940 } from './mt940.js';
import type { StatementInput } from './types.js';

export { camt053, statementCsv, mt940 };
export type { StatementInput };

/**
 * The merchant's statement of everything the bank has booked or will book for what happened so
 * far: payout credits may be dated up to a day after the simulated clock (the bank books them
 * hours after the payout), so a payout without a credit here is one that never gets one.
 */
export function statementFor(business: Business, createdAt: number, remittanceReferences = 0): StatementInput {
  const lines = [...business.bankLines]
    .sort((a, b) => a.bookedAt - b.bookedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((line) => asBankWrote(line, business, remittanceReferences));
  const last = lines[lines.length - 1];
  return {
    id: `STMT-${business.env === 'sandbox' ? 'S' : 'P'}-${business.merchantIban.slice(-6)}-1`,
    accountIban: business.merchantIban,
    accountOwner: business.merchantName,
    currency: 'EUR',
    openingBalanceCents: 1_000_000_00n,
    lines,
    from: business.start,
    to: Math.max(createdAt, last?.bookedAt ?? business.start),
    createdAt,
  };
}

/**
 * Some banks pass a payout's SEPA reference only in the remittance text, after other id-like words
 * (an invoice number): the payout credit then has no end-to-end or instruction id. Chosen per line
 * by its own seeded draw, so the same line is written the same way in every file and format, and
 * the business and its ground truth do not change.
 */
function asBankWrote(line: BankLine, business: Business, rate: number): BankLine {
  if (rate <= 0 || line.amountCents <= 0n || line.counterpartyIban !== business.providerIban) return line;
  const draw = new Prng(`${line.id}/remittance-reference`);
  if (!draw.chance(rate)) return line;
  return { ...line, reference: '', remittance: `Rechnung RE${draw.digits(10)} Auszahlung ${line.reference}` };
}

export async function writeStatementFiles(dir: string, business: Business, createdAt: number, remittanceReferences = 0): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const statement = statementFor(business, createdAt, remittanceReferences);
  const base = path.join(dir, `${business.env}-statement`);
  const files: [string, string][] = [
    [`${base}.camt053.xml`, camt053(statement)],
    [`${base}.csv`, statementCsv(statement)],
    [`${base}.mt940`, mt940(statement)],
  ];
  for (const [file, text] of files) await writeFile(file, text, 'utf8');
  return files.map(([file]) => file);
}
