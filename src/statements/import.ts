import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import type { TransactionSql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { summarize } from './collect.js';
import { encodingOf, streamDecoder, utf8Validator } from './decode.js';
import { HEAD_CHARS, statementReader } from './detect.js';
import { positionKey, sectionBookingKeys } from './line-key.js';
import { addTotal, totalsDifference } from './totals.js';
import {
  StatementFormatError,
  type ParsedStatement,
  type StatementFormat,
  type StatementLine,
  type StatementReader,
  type StatementSection,
  type Totals,
} from './types.js';

export interface ImportResult {
  file: string;
  format: StatementFormat;
  sha256: string;
  statementId: number;
  /** the file had been imported before (same bytes): nothing was written */
  alreadyImported: boolean;
  /** statements in the file (CAMT <Stmt>, MT940 messages); null for a file imported before this was recorded */
  statements: number | null;
  linesRead: number;
  /** lines no earlier statement had brought (line-key.ts) */
  linesNew: number;
}

export interface ImportOptions {
  /** called as lines are staged: lines read so far */
  onProgress?: (linesRead: number) => void;
  /** STATEMENT_MAX_FILE_BYTES: a larger file is refused before it is parsed */
  maxFileBytes?: number;
  /** STATEMENT_MAX_AMOUNT_CENTS: a line over it is refused, naming the file and the line */
  maxAmountCents?: bigint;
}

/** The import limits the settings give. */
export function importLimits(config: { STATEMENT_MAX_FILE_BYTES: number; STATEMENT_MAX_AMOUNT_CENTS: number }): Pick<ImportOptions, 'maxFileBytes' | 'maxAmountCents'> {
  return { maxFileBytes: config.STATEMENT_MAX_FILE_BYTES, maxAmountCents: BigInt(config.STATEMENT_MAX_AMOUNT_CENTS) };
}

/** The file's bytes differed between the two reads (still being written): nothing was imported; try again later. */
export class FileChangedError extends Error {
  override readonly name = 'FileChangedError';
}

/** A file's bytes, from the start, each time it is called. */
export type ChunkSource = () => AsyncIterable<Uint8Array>;

// Bounded statement size and parameter arrays for very long statements; one statement text serves every chunk.
const CHUNK = 5000;
const READ_CHUNK = 1 << 20;

/**
 * Imports one statement file in one transaction. The file is read twice as a stream, never held
 * whole: once for its hash (a file imported before is a no-op) and encoding (decode.ts), once
 * through its format's reader, which hands over each statement as it ends; its lines are staged
 * in a temporary table. Then the bank_statements row (unique per environment and content hash)
 * and the lines, ON CONFLICT DO NOTHING on both line identities (line-key.ts). Before committing,
 * every statement is checked against what is stored: each of its lines must be found (by its
 * position, else by its booking identity) with its own amount and direction, and the distinct
 * stored lines must add up, per currency and direction, to the statement's booked entries. A
 * statement that lost or merged a booking on the way in is refused with the difference, and
 * nothing of the file is written; so is a file that cannot be read or whose balances do not add
 * up (StatementFormatError). Two importers racing on one file both finish and the database keeps
 * one copy. Memory is bounded by the file's largest statement.
 */
export async function importStatementSource(
  database: Database,
  environment: ProviderEnvironment,
  source: ChunkSource,
  fileName: string,
  options: ImportOptions = {},
): Promise<ImportResult> {
  const hash = createHash('sha256');
  const validator = utf8Validator();
  let head: Uint8Array | null = null;
  let bytes = 0;
  for await (const chunk of source()) {
    bytes += chunk.length;
    if (options.maxFileBytes !== undefined && bytes > options.maxFileBytes) {
      throw new StatementFormatError(`${path.basename(fileName)}: larger than STATEMENT_MAX_FILE_BYTES (${options.maxFileBytes} bytes); split the statement or raise the setting`);
    }
    hash.update(chunk);
    validator.write(chunk);
    head ??= chunk;
  }
  const sha256 = hash.digest('hex');
  const encoding = encodingOf(head ?? new Uint8Array(0), validator.valid());
  // A file in no format we read is refused before the database is asked (an outage then does not keep it in the inbox).
  statementReader(streamDecoder(encoding).write(head ?? new Uint8Array(0)).slice(0, HEAD_CHARS), () => undefined);
  return importSections(database, environment, sha256, fileName, options, async (stage) => {
    const decoder = streamDecoder(encoding);
    const pending: [StatementSection, StatementLine[]][] = [];
    const sink = (section: StatementSection, lines: StatementLine[]) => pending.push([section, lines]);
    let reader: StatementReader | null = null;
    let start = '';
    const feed = async (text: string, last: boolean) => {
      if (!reader) {
        start += text;
        if (start.length < HEAD_CHARS && !last) return;
        reader = statementReader(start.slice(0, HEAD_CHARS), sink);
        text = start;
      }
      reader.write(text);
      if (last) reader.end();
      for (let next = pending.shift(); next; next = pending.shift()) await stage(...next);
    };
    const again = createHash('sha256');
    for await (const chunk of source()) {
      again.update(chunk);
      await feed(decoder.write(chunk), false);
    }
    if (again.digest('hex') !== sha256) throw new FileChangedError(`${fileName} changed while it was read`);
    await feed(decoder.end(), true);
    return reader!.format;
  });
}

/** importStatementSource over bytes in memory. */
export function importStatement(database: Database, environment: ProviderEnvironment, bytes: Buffer, fileName: string, options: ImportOptions = {}): Promise<ImportResult> {
  return importStatementSource(database, environment, () => chunksOf(bytes), fileName, options);
}

/** A file read in 1 MiB chunks. */
export const fileSource =
  (file: string): ChunkSource =>
  () =>
    createReadStream(file, { highWaterMark: READ_CHUNK });

/** importStatementSource over a file. */
export function importStatementFile(database: Database, environment: ProviderEnvironment, file: string, options: ImportOptions = {}): Promise<ImportResult> {
  return importStatementSource(database, environment, fileSource(file), file, options);
}

async function* chunksOf(bytes: Buffer): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += READ_CHUNK) yield bytes.subarray(i, i + READ_CHUNK);
}

/** The import of an already parsed file (for tests that hand-make what a parser produced). */
export function importParsed(database: Database, environment: ProviderEnvironment, parsed: ParsedStatement, sha256: string, fileName: string): Promise<ImportResult> {
  return importSections(database, environment, sha256, fileName, {}, async (stage) => {
    for (const [i, section] of parsed.sections.entries()) await stage(section, parsed.lines.filter((l) => l.section === i));
    return parsed.format;
  });
}

type Stage = (section: StatementSection, lines: StatementLine[]) => Promise<void>;

/**
 * A line over the ceiling is a misread or a corrupt file (9.2e16 EUR was accepted once), not a
 * booking: the whole file is refused, naming it and the line.
 */
function refuseImplausible(fileName: string, section: number, lines: readonly StatementLine[], max: bigint): void {
  const over = lines.find((l) => l.amountCents > max);
  if (!over) return;
  const where = over.where ?? `statement ${section + 1} entry ${over.entryIndex + 1}`;
  throw new StatementFormatError(
    `${path.basename(fileName)}: ${where}: amount of ${over.amountCents} cents (${over.currency}) is over STATEMENT_MAX_AMOUNT_CENTS (${max})`,
  );
}

async function importSections(
  database: Database,
  environment: ProviderEnvironment,
  sha256: string,
  fileName: string,
  options: ImportOptions,
  read: (stage: Stage) => Promise<StatementFormat>,
): Promise<ImportResult> {
  return database.sql.begin(async (tx) => {
    const base = { file: fileName, sha256 };
    const before = await alreadyImported(tx, environment, sha256);
    if (before) return { ...base, ...before };
    await tx`
      create temporary table import_lines (
        n integer not null, section integer not null, position_key text not null, line_key text not null,
        entry_index integer not null, tx_index integer not null, account_iban text, booking_date date not null,
        value_date date, amount_cents bigint not null, currency text not null, direction statement_direction not null,
        counterparty_iban text, counterparty_name text, end_to_end_id text, bank_reference text, remittance text,
        sepa_reference text
      ) on commit drop`;
    const sections: StatementSection[] = [];
    let linesRead = 0;
    const format = await read(async (section, lines) => {
      if (options.maxAmountCents !== undefined) refuseImplausible(fileName, sections.length, lines, options.maxAmountCents);
      sections.push(section);
      const bookings = sectionBookingKeys(section, lines);
      const positions = lines.map((l) => positionKey(section, l));
      for (let i = 0; i < lines.length; i += CHUNK) {
        await stage(tx, lines.slice(i, i + CHUNK), positions.slice(i, i + CHUNK), bookings.slice(i, i + CHUNK), linesRead + i);
      }
      linesRead += lines.length;
      options.onProgress?.(linesRead);
    });
    const file = summarize(format, sections, []);
    const [inserted] = await tx<{ id: string }[]>`
      insert into bank_statements (environment, file_sha256, file_name, format, account_iban, period_from, period_to, line_count, statement_count)
      values (${environment}, ${sha256}, ${path.basename(fileName)}, ${format}, ${file.accountIban},
              ${file.periodFrom}::timestamptz, ${file.periodTo}::timestamptz, ${linesRead}, ${sections.length})
      on conflict (environment, file_sha256) do nothing
      returning id`;
    // Another importer committed the same file meanwhile.
    if (!inserted) return { ...base, ...(await alreadyImported(tx, environment, sha256))! };
    const statementId = Number(inserted.id);
    // Each statement's own period (not the file's span): payout_not_on_statement must not take the
    // days between two statements of one file as covered. A statement without both ends claims none.
    const periods = sections.flatMap((section, index) => (section.periodFrom && section.periodTo ? [{ index, from: section.periodFrom, to: section.periodTo }] : []));
    if (periods.length > 0) {
      await tx`
        insert into statement_periods (statement_id, section_index, environment, period_from, period_to)
        select ${statementId}::bigint, p.index::int, ${environment}::provider_environment, p.f::timestamptz, p.t::timestamptz
        from unnest(${periods.map((p) => String(p.index))}::text[], ${periods.map((p) => p.from)}::text[], ${periods.map((p) => p.to)}::text[]) as p(index, f, t)`;
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
    await verifyStored(tx, environment, sections);
    return { ...base, format, statementId, alreadyImported: false, statements: sections.length, linesRead, linesNew: written.count };
  });
}

async function alreadyImported(tx: TransactionSql, environment: ProviderEnvironment, sha256: string) {
  const [row] = await tx<{ id: string; format: StatementFormat; line_count: number; statement_count: number | null }[]>`
    select id, format, line_count, statement_count from bank_statements where environment = ${environment} and file_sha256 = ${sha256}`;
  if (!row) return null;
  return { format: row.format, statementId: Number(row.id), alreadyImported: true, statements: row.statement_count, linesRead: row.line_count, linesNew: 0 };
}

async function stage(tx: TransactionSql, lines: StatementLine[], positions: string[], bookings: string[], from: number): Promise<void> {
  const col = <T>(f: (l: StatementLine, i: number) => T) => lines.map((l, i) => f(l, i));
  await tx`
    insert into import_lines (n, section, position_key, line_key, entry_index, tx_index, account_iban, booking_date, value_date,
                              amount_cents, currency, direction, counterparty_iban, counterparty_name, end_to_end_id,
                              bank_reference, remittance, sepa_reference)
    select u.n::integer, u.section::integer, u.position_key, u.line_key, u.entry_index::integer, u.tx_index::integer,
           u.account_iban, u.booking_date::date, u.value_date::date, u.amount_cents::bigint, u.currency,
           u.direction::statement_direction, u.counterparty_iban, u.counterparty_name, u.end_to_end_id, u.bank_reference,
           u.remittance, u.sepa_reference
    from unnest(${col((_, i) => String(from + i))}::text[], ${col((l) => String(l.section))}::text[], ${positions}::text[],
                ${bookings}::text[], ${col((l) => String(l.entryIndex))}::text[], ${col((l) => String(l.txIndex))}::text[],
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

async function verifyStored(tx: TransactionSql, environment: ProviderEnvironment, sections: StatementSection[]): Promise<void> {
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
  sections.forEach((section, i) => {
    const difference = totalsDifference(section.booked, stored.get(i) ?? new Map());
    if (difference.length > 0) throw new StatementFormatError(`${name(i)}: the stored lines do not add up to the booked entries: ${difference.join('; ')}`);
  });
}
