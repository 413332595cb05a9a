import { createHash } from 'node:crypto';
import type { TransactionSql } from 'postgres';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ProviderEnvironment } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { parseStatement } from './detect.js';
import { lineKey } from './line-key.js';
import type { ParsedStatement, StatementFormat } from './types.js';

export interface ImportResult {
  file: string;
  format: StatementFormat;
  sha256: string;
  statementId: number;
  /** the file had been imported before (same bytes): nothing was written */
  alreadyImported: boolean;
  linesRead: number;
  /** lines no earlier file had brought (line_key new to the environment) */
  linesNew: number;
}

// Bounded statement size and parameter arrays for very long statements; one statement text serves every chunk.
const CHUNK = 5000;

/**
 * Imports one statement file in one transaction: its bank_statements row (unique per environment
 * and content hash) and its lines (unique per environment and line_key), both ON CONFLICT DO
 * NOTHING. So the same file twice, the CSV of a period already imported as CAMT.053, or two
 * overlapping daily files add each booking once, and two importers racing on one file (two
 * replicas' inboxes) both finish without error while the database keeps one copy. A file that
 * cannot be parsed throws StatementFormatError before anything is written.
 */
export async function importStatement(
  database: Database,
  environment: ProviderEnvironment,
  bytes: Buffer,
  fileName: string,
): Promise<ImportResult> {
  const parsed = parseStatement(bytes);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  return database.sql.begin(async (tx) => {
    const [inserted] = await tx<{ id: string }[]>`
      insert into bank_statements (environment, file_sha256, file_name, format, account_iban, period_from, period_to, line_count)
      values (${environment}, ${sha256}, ${path.basename(fileName)}, ${parsed.format}, ${parsed.accountIban},
              ${parsed.periodFrom}::timestamptz, ${parsed.periodTo}::timestamptz, ${parsed.lines.length})
      on conflict (environment, file_sha256) do nothing
      returning id`;
    const base = { file: fileName, format: parsed.format, sha256, linesRead: parsed.lines.length };
    if (!inserted) {
      const [existing] = await tx<{ id: string }[]>`
        select id from bank_statements where environment = ${environment} and file_sha256 = ${sha256}`;
      return { ...base, statementId: Number(existing?.id), alreadyImported: true, linesNew: 0 };
    }
    const statementId = Number(inserted.id);
    let linesNew = 0;
    for (let i = 0; i < parsed.lines.length; i += CHUNK) linesNew += await insertLines(tx, environment, statementId, parsed, i);
    return { ...base, statementId, alreadyImported: false, linesNew };
  });
}

export async function importStatementFile(database: Database, environment: ProviderEnvironment, file: string): Promise<ImportResult> {
  return importStatement(database, environment, await readFile(file), file);
}

type Tx = TransactionSql;

async function insertLines(tx: Tx, environment: ProviderEnvironment, statementId: number, parsed: ParsedStatement, from: number): Promise<number> {
  const lines = parsed.lines.slice(from, from + CHUNK);
  const col = <T>(f: (l: (typeof lines)[number]) => T) => lines.map(f);
  const result = await tx`
    insert into statement_lines (environment, statement_id, line_key, account_iban, booking_date, value_date, amount_cents, currency,
                                 direction, counterparty_iban, counterparty_name, end_to_end_id, bank_reference, remittance, sepa_reference)
    select ${environment}::provider_environment, ${statementId}::bigint, u.line_key, u.account_iban, u.booking_date::date,
           u.value_date::date, u.amount_cents::bigint, u.currency, u.direction::statement_direction, u.counterparty_iban,
           u.counterparty_name, u.end_to_end_id, u.bank_reference, u.remittance, u.sepa_reference
    from unnest(${col(lineKey)}::text[], ${col((l) => l.accountIban)}::text[], ${col((l) => l.bookingDate)}::text[],
                ${col((l) => l.valueDate)}::text[], ${col((l) => l.amountCents.toString())}::text[], ${col((l) => l.currency)}::text[],
                ${col((l) => l.direction)}::text[], ${col((l) => l.counterpartyIban)}::text[], ${col((l) => l.counterpartyName)}::text[],
                ${col((l) => l.endToEndId)}::text[], ${col((l) => l.bankReference)}::text[], ${col((l) => l.remittance)}::text[],
                ${col((l) => l.sepaReference)}::text[])
      as u(line_key, account_iban, booking_date, value_date, amount_cents, currency, direction, counterparty_iban, counterparty_name,
           end_to_end_id, bank_reference, remittance, sepa_reference)
    on conflict (environment, line_key) do nothing`;
  return result.count;
}
