import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { TransactionSql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { parseStatement } from './detect.js';
import { bookingKeys, positionKey } from './line-key.js';
import { addTotal, totalsDifference } from './totals.js';
import { StatementFormatError, type ParsedStatement, type StatementFormat, type Totals } from './types.js';

export interface ImportResult {
  file: string;
  format: StatementFormat;
  sha256: string;
  statementId: number;
  /** the file had been imported before (same bytes): nothing was written */
  alreadyImported: boolean;
  /** statements in the file (CAMT <Stmt>, MT940 messages) */
  statements: number;
  linesRead: number;
  /** lines no earlier statement had brought (line-key.ts) */
  linesNew: number;
}

export interface ImportOptions {
  /** called as lines are written: lines done so far and the file's total */
  onProgress?: (done: number, total: number) => void;
}

// Bounded statement size and parameter arrays for very long statements; one statement text serves every chunk.
const CHUNK = 5000;

/**
 * Imports one statement file in one transaction: its bank_statements row (unique per environment
 * and content hash) and its lines, ON CONFLICT DO NOTHING on both line identities (line-key.ts).
 * Then, before committing, every statement in the file is checked against what is stored: each of
 * its lines must be found (by its position, else by its booking identity) with its own amount and
 * direction, and the distinct stored lines must add up, per currency and direction, to the file's
 * booked entries. A statement that lost or merged a booking on the way in is refused with the
 * difference, and nothing of the file is written. Two importers racing on one file both finish
 * and the database keeps one copy. A file that cannot be parsed, or whose balances do not add up,
 * throws StatementFormatError before anything is written.
 */
export async function importStatement(
  database: Database,
  environment: ProviderEnvironment,
  bytes: Buffer,
  fileName: string,
  options: ImportOptions = {},
): Promise<ImportResult> {
  const parsed = parseStatement(bytes);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  return importParsed(database, environment, parsed, sha256, fileName, options);
}

/** importStatement after parsing: for a parsed statement whose file has the given hash. */
export async function importParsed(
  database: Database,
  environment: ProviderEnvironment,
  parsed: ParsedStatement,
  sha256: string,
  fileName: string,
  options: ImportOptions = {},
): Promise<ImportResult> {
  const bookings = bookingKeys(parsed);
  const positions = parsed.lines.map((l) => positionKey(parsed.sections[l.section]!, l));
  return database.sql.begin(async (tx) => {
    const [inserted] = await tx<{ id: string }[]>`
      insert into bank_statements (environment, file_sha256, file_name, format, account_iban, period_from, period_to, line_count)
      values (${environment}, ${sha256}, ${path.basename(fileName)}, ${parsed.format}, ${parsed.accountIban},
              ${parsed.periodFrom}::timestamptz, ${parsed.periodTo}::timestamptz, ${parsed.lines.length})
      on conflict (environment, file_sha256) do nothing
      returning id`;
    const base = { file: fileName, format: parsed.format, sha256, statements: parsed.sections.length, linesRead: parsed.lines.length };
    if (!inserted) {
      const [existing] = await tx<{ id: string }[]>`
        select id from bank_statements where environment = ${environment} and file_sha256 = ${sha256}`;
      return { ...base, statementId: Number(existing?.id), alreadyImported: true, linesNew: 0 };
    }
    const statementId = Number(inserted.id);
    await tx`
      create temporary table import_lines (
        n integer not null, section integer not null, position_key text not null, line_key text not null,
        entry_index integer not null, tx_index integer not null, account_iban text, booking_date date not null,
        value_date date, amount_cents bigint not null, currency text not null, direction statement_direction not null,
        counterparty_iban text, counterparty_name text, end_to_end_id text, bank_reference text, remittance text,
        sepa_reference text
      ) on commit drop`;
    for (let i = 0; i < parsed.lines.length; i += CHUNK) {
      await stage(tx, parsed, positions, bookings, i);
      options.onProgress?.(Math.min(i + CHUNK, parsed.lines.length), parsed.lines.length);
    }
    const written = await tx`
      insert into statement_lines (environment, statement_id, line_key, position_key, entry_index, tx_index, account_iban,
                                   booking_date, value_date, amount_cents, currency, direction, counterparty_iban,
                                   counterparty_name, end_to_end_id, bank_reference, remittance, sepa_reference)
      select ${environment}::provider_environment, ${statementId}::bigint, line_key, position_key, entry_index, tx_index,
             account_iban, booking_date, value_date, amount_cents, currency, direction, counterparty_iban, counterparty_name,
             end_to_end_id, bank_reference, remittance, sepa_reference
      from import_lines order by n
      on conflict do nothing`;
    await verifyStored(tx, environment, parsed);
    return { ...base, statementId, alreadyImported: false, linesNew: written.count };
  });
}

export async function importStatementFile(database: Database, environment: ProviderEnvironment, file: string, options: ImportOptions = {}): Promise<ImportResult> {
  return importStatement(database, environment, await readFile(file), file, options);
}

async function stage(tx: TransactionSql, parsed: ParsedStatement, positions: string[], bookings: string[], from: number): Promise<void> {
  const lines = parsed.lines.slice(from, from + CHUNK);
  const col = <T>(f: (l: (typeof lines)[number], i: number) => T) => lines.map((l, i) => f(l, i));
  await tx`
    insert into import_lines (n, section, position_key, line_key, entry_index, tx_index, account_iban, booking_date, value_date,
                              amount_cents, currency, direction, counterparty_iban, counterparty_name, end_to_end_id,
                              bank_reference, remittance, sepa_reference)
    select u.n::integer, u.section::integer, u.position_key, u.line_key, u.entry_index::integer, u.tx_index::integer,
           u.account_iban, u.booking_date::date, u.value_date::date, u.amount_cents::bigint, u.currency,
           u.direction::statement_direction, u.counterparty_iban, u.counterparty_name, u.end_to_end_id, u.bank_reference,
           u.remittance, u.sepa_reference
    from unnest(${col((_, i) => String(from + i))}::text[], ${col((l) => String(l.section))}::text[], ${col((_, i) => positions[from + i]!)}::text[],
                ${col((_, i) => bookings[from + i]!)}::text[], ${col((l) => String(l.entryIndex))}::text[], ${col((l) => String(l.txIndex))}::text[],
                ${col((l) => l.accountIban)}::text[], ${col((l) => l.bookingDate)}::text[], ${col((l) => l.valueDate)}::text[],
                ${col((l) => l.amountCents.toString())}::text[], ${col((l) => l.currency)}::text[], ${col((l) => l.direction)}::text[],
                ${col((l) => l.counterpartyIban)}::text[], ${col((l) => l.counterpartyName)}::text[], ${col((l) => l.endToEndId)}::text[],
                ${col((l) => l.bankReference)}::text[], ${col((l) => l.remittance)}::text[], ${col((l) => l.sepaReference)}::text[])
      as u(n, section, position_key, line_key, entry_index, tx_index, account_iban, booking_date, value_date, amount_cents,
           currency, direction, counterparty_iban, counterparty_name, end_to_end_id, bank_reference, remittance, sepa_reference)`;
}

/** Each staged line's stored row: the one at its position, else the one with its booking identity. */
const MATCHED = `
  select i.section, i.n, i.entry_index, i.amount_cents as want_cents, i.currency as want_currency, i.direction as want_direction,
         coalesce(p.id, k.id) as row_id, coalesce(p.amount_cents, k.amount_cents) as amount_cents,
         coalesce(p.currency, k.currency) as currency, coalesce(p.direction, k.direction) as direction,
         coalesce(ps.file_name, ks.file_name) as file_name
  from import_lines i
  left join statement_lines p on p.environment = $1 and p.position_key = i.position_key
  left join bank_statements ps on ps.id = p.statement_id
  left join statement_lines k on k.environment = $1 and k.line_key = i.line_key and p.id is null
  left join bank_statements ks on ks.id = k.statement_id`;

async function verifyStored(tx: TransactionSql, environment: ProviderEnvironment, parsed: ParsedStatement): Promise<void> {
  const wrong = await tx.unsafe<{ section: number; entry_index: number; row_id: string | null; file_name: string | null }[]>(
    `select section, entry_index, row_id, file_name from (${MATCHED}) m
     where row_id is null or (amount_cents, currency, direction) is distinct from (want_cents, want_currency, want_direction)
     order by n limit 5`,
    [environment],
  );
  const name = (section: number) => `statement ${section + 1} of the file`;
  if (wrong.length > 0) {
    const w = wrong[0]!;
    throw new StatementFormatError(
      w.row_id === null
        ? `${name(w.section)}: entry ${w.entry_index + 1} was not stored`
        : `${name(w.section)} was imported before (from ${w.file_name ?? 'another file'}) with a different booking at entry ${w.entry_index + 1}: a corrected statement under the same identity is refused`,
    );
  }
  const sums = await tx.unsafe<{ section: number; currency: string; direction: 'credit' | 'debit'; cents: string }[]>(
    `select section, currency, direction::text as direction, sum(amount_cents)::text as cents
     from (select distinct section, row_id, amount_cents, currency, direction from (${MATCHED}) m) d
     group by section, currency, direction`,
    [environment],
  );
  const stored = new Map<number, Totals>();
  for (const s of sums) {
    const totals = stored.get(s.section) ?? new Map();
    stored.set(s.section, totals);
    addTotal(totals, s.currency, s.direction, BigInt(s.cents));
  }
  parsed.sections.forEach((section, i) => {
    const difference = totalsDifference(section.booked, stored.get(i) ?? new Map());
    if (difference.length > 0) throw new StatementFormatError(`${name(i)}: the stored lines do not add up to the booked entries: ${difference.join('; ')}`);
  });
}
