import path from 'node:path';
import { excerpt, quoted, StatementFormatError, type StatementLine, type StatementSection } from './types.js';

/**
 * A line over the ceiling is a misread or a corrupt file (9.2e16 EUR was accepted once), not a
 * booking: the whole file is refused, naming it and the line. `section`: the statement's place in
 * the file, from 0.
 */
function refuseImplausible(fileName: string, section: number, lines: readonly StatementLine[], max: bigint): void {
  const over = lines.find((l) => l.amountCents > max);
  if (!over) return;
  const where = over.where ?? `statement ${section + 1} entry ${over.entryIndex + 1}`;
  throw new StatementFormatError(
    `${path.basename(fileName)}: ${where}: amount of ${over.amountCents} cents (${excerpt(over.currency)}) is over STATEMENT_MAX_AMOUNT_CENTS (${max})`,
  );
}

/**
 * The longest account or SEPA reference a statement may name. The ledger indexes both (an IBAN is
 * at most 34 characters, an MT940 :25: account 35, a SEPA reference 35); a value past a btree
 * entry's 2,704 bytes failed the import with Postgres's "index row size exceeds", naming neither
 * the file nor the field.
 */
const MAX_INDEXED_CHARS = 200;

/** Refuses a statement whose account or a line's account or SEPA reference is longer than the ledger keeps. */
function refuseUnstorable(fileName: string, section: number, statement: Pick<StatementSection, 'accountIban'>, lines: readonly StatementLine[]): void {
  const refuse = (where: string, field: string, value: string) => {
    throw new StatementFormatError(
      `${path.basename(fileName)}: ${where}: ${field} ${quoted(value)} is longer than the ${MAX_INDEXED_CHARS} characters a statement's ${field} may have`,
    );
  };
  if ((statement.accountIban?.length ?? 0) > MAX_INDEXED_CHARS) refuse(`statement ${section + 1}`, 'account', statement.accountIban!);
  for (const line of lines) {
    const where = line.where ?? `statement ${section + 1} entry ${line.entryIndex + 1}`;
    if ((line.accountIban?.length ?? 0) > MAX_INDEXED_CHARS) refuse(where, 'account', line.accountIban!);
    if ((line.sepaReference?.length ?? 0) > MAX_INDEXED_CHARS) refuse(where, 'SEPA reference', line.sepaReference!);
  }
}

/** Every limit of a statement's lines: the amount ceiling (when set) and the lengths the ledger keeps. */
export function refuseOutsideLimits(
  fileName: string,
  section: number,
  statement: Pick<StatementSection, 'accountIban'>,
  lines: readonly StatementLine[],
  maxAmountCents: bigint | undefined,
): void {
  if (maxAmountCents !== undefined) refuseImplausible(fileName, section, lines, maxAmountCents);
  refuseUnstorable(fileName, section, statement, lines);
}
