import path from 'node:path';
import { excerpt, StatementFormatError, type StatementLine } from './types.js';

/**
 * A line over the ceiling is a misread or a corrupt file (9.2e16 EUR was accepted once), not a
 * booking: the whole file is refused, naming it and the line. `section`: the statement's place in
 * the file, from 0.
 */
export function refuseImplausible(fileName: string, section: number, lines: readonly StatementLine[], max: bigint): void {
  const over = lines.find((l) => l.amountCents > max);
  if (!over) return;
  const where = over.where ?? `statement ${section + 1} entry ${over.entryIndex + 1}`;
  throw new StatementFormatError(
    `${path.basename(fileName)}: ${where}: amount of ${over.amountCents} cents (${excerpt(over.currency)}) is over STATEMENT_MAX_AMOUNT_CENTS (${max})`,
  );
}
