import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { setImmediate as turn } from 'node:timers/promises';
import path from 'node:path';
import type { TransactionSql } from 'postgres';
import type { ProviderEnvironment } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { summarize } from './collect.js';
import { encodingOf, streamDecoder, utf8Validator } from './decode.js';
import { ReadThread, type ThreadRead } from './read-thread-client.js';
import { createTextFeed } from './text-feed.js';
import { NotARegularFileError, openFileToImport } from './inbox-file.js';
import { HEAD_CHARS, statementReader } from './detect.js';
import { KEY_FORMAT, wholeDays } from './line-key.js';
import { storeStatement, type CopyPace, type SectionCounts } from './overlap.js';
import { createStaging, stagePart, type Staging } from './staging.js';
import { freshRows, linesNow, type BuiltStatement } from './staged-rows.js';
import { StorePipeline, type StatementPart, type YieldTo } from './store-pipeline.js';
import type { CsvOptions } from './csv.js';
import { lockKey } from '../jobs/lock-keys.js';
import { transactionLock, tryTransactionLock } from '../jobs/session-lock.js';
import { recordFinding } from '../reconcile/recorded.js';
import {
  StatementFormatError,
  type BalanceCheck,
  type ParsedStatement,
  type StatementFormat,
  type StatementLine,
  type StatementReader,
  type StatementSection,
  type Totals,
} from './types.js';
import { addTotal } from './totals.js';
import { refuseOutsideLimits } from './line-limits.js';
import { transaction } from '../db/transaction.js';

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
  /** lines whose bookings no earlier statement had brought (overlap.ts): stored */
  linesNew: number;
  /** lines this statement (the same identity, or the same file) had already brought */
  linesKnown: number;
  /** lines whose bookings an overlapping statement had already brought: linked to its stored lines */
  linesOverlap: number;
  /** the import process's peak resident memory, when it ran in one (isolated-import.ts) */
  peakRssMb?: number;
  /** statements whose balances could not be checked (one missing; a CSV has none); null for a file imported before this was recorded */
  balancesUnchecked: number | null;
  /** statements stored although their balances disagree (acceptUnbalanced); null likewise */
  statementsUnbalanced: number | null;
  /** the statement_unbalanced findings this import opened, one per such statement (none for a file imported before) */
  unbalancedFindings: number[];
  /**
   * What the file's lines book, per currency (in its order of first appearance): credits and debits
   * in cents, as decimal text (it crosses the child's IPC channel and goes out as JSON). Null for a
   * file imported before: nothing was read into the ledger then, and its totals are not kept.
   */
  totals: { currency: string; creditCents: string; debitCents: string }[] | null;
}

export interface ImportOptions {
  /** called as lines are staged: lines read so far */
  onProgress?: (linesRead: number) => void;
  /** STATEMENT_MAX_FILE_BYTES: a larger file is refused before it is parsed */
  maxFileBytes?: number;
  /** STATEMENT_MAX_AMOUNT_CENTS: a line over it is refused, naming the file and the line */
  maxAmountCents?: bigint;
  /** the user's CSV profiles and the accounts' currencies (csv.ts) */
  csv?: CsvOptions;
  /**
   * `--accept-unbalanced`, STATEMENT_ACCEPT_UNBALANCED: a statement whose balances disagree with
   * its bookings is stored, with a statement_unbalanced finding naming the difference, instead of
   * refusing the file.
   */
  acceptUnbalanced?: boolean;
  /** The daemon's receiver, when the import runs beside it (the inbox): statements are stored at a pace its commits tolerate (store-pipeline.ts). */
  yieldTo?: YieldTo;
  /** An MT940 of at least this many bytes is read in a thread of its own (read-thread.ts); default READ_THREAD_FROM_BYTES. */
  readThreadFromBytes?: number;
  /** the reader thread's heap limit (STATEMENT_IMPORT_MAX_MEMORY_MB, as its process's); absent: V8's default for a thread */
  readThreadMaxMemoryMb?: number;
  /** told when the import starts waiting for the environment's import lock, and when it holds it (the inbox's time limit does not count the wait) */
  lockWait?: (state: LockWaitState) => void;
}

export type LockWaitState = 'waiting' | 'held';

/** 4 MiB: about 25,000 MT940 entries, parsed in about 200 ms; the thread starts in tens. */
export const READ_THREAD_FROM_BYTES = 4 << 20;

/** The import limits the settings give. */
export function importLimits(config: { STATEMENT_MAX_FILE_BYTES: number; STATEMENT_MAX_AMOUNT_CENTS: number }): Pick<ImportOptions, 'maxFileBytes' | 'maxAmountCents'> {
  return { maxFileBytes: config.STATEMENT_MAX_FILE_BYTES, maxAmountCents: BigInt(config.STATEMENT_MAX_AMOUNT_CENTS) };
}

/** A result's note on balances for its result line: '' when every statement balanced. */
export function balancesNote(r: Pick<ImportResult, 'balancesUnchecked' | 'statementsUnbalanced' | 'unbalancedFindings'>): string {
  const parts: string[] = [];
  if (r.balancesUnchecked) parts.push(`balances not checked ${r.balancesUnchecked}`);
  if (r.statementsUnbalanced) parts.push(`unbalanced, stored with findings ${r.unbalancedFindings.join(', ') || '?'}: ${r.statementsUnbalanced}`);
  return parts.map((p) => `, ${p}`).join('');
}

/** The result line `statement import` prints for a file, and the operator API's upload answers with. */
export function describeStatementImport(file: string, r: ImportResult): string {
  return `${file}: format ${r.format}, statements ${r.statements ?? '?'}, lines read ${r.linesRead}, lines new ${r.linesNew}, ` +
    `already known ${r.linesKnown}, known from overlapping statements ${r.linesOverlap}${balancesNote(r)}${r.alreadyImported ? ' (file already imported)' : ''}`;
}

/** The file's bytes differed between the two reads (still being written): nothing was imported; try again later. */
export class FileChangedError extends Error {
  override readonly name = 'FileChangedError';
}

/** A file's bytes, from the start, each time it is called. */
export type ChunkSource = () => AsyncIterable<Uint8Array>;

const READ_CHUNK = 1 << 20;

/**
 * Imports one statement file in one transaction. The file is read twice as a stream, never held
 * whole: once for its hash (a file imported before is a no-op) and encoding (decode.ts), once
 * through its format's reader, which hands over each statement as it ends. Each statement is then
 * staged, matched against the stored bookings by the overlap rule (overlap.ts: its position, the
 * bank's reference, the day) and stored: its new lines, every entry linked to the stored entry that
 * holds it, its period. Before the next, its stored lines must add up, per currency and direction,
 * to its booked entries: a statement that lost or merged a booking on the way in is refused with
 * the difference, and nothing of the file is written; so is a file that cannot be read or whose
 * balances do not add up (StatementFormatError). Imports of one environment take turns (a
 * transaction lock): two importers racing on one file both finish and the database keeps one copy.
 * Memory is bounded by the file's largest statement.
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
  // The file's first bytes, enough for HEAD_CHARS characters in any encoding we read, however
  // small the source's chunks (a pipe's, a file still being written): the encoding (BOM, XML
  // declaration) and the format are decided from them.
  const headChunks: Uint8Array[] = [];
  let headBytes = 0;
  let bytes = 0;
  for await (const chunk of source()) {
    bytes += chunk.length;
    if (options.maxFileBytes !== undefined && bytes > options.maxFileBytes) {
      throw new StatementFormatError(`${path.basename(fileName)}: larger than STATEMENT_MAX_FILE_BYTES (${options.maxFileBytes} bytes); split the statement or raise the setting`);
    }
    hash.update(chunk);
    validator.write(chunk);
    if (headBytes < HEAD_BYTES) {
      headChunks.push(chunk);
      headBytes += chunk.length;
    }
  }
  const head = headChunks.length === 1 ? headChunks[0]! : Buffer.concat(headChunks);
  const sha256 = hash.digest('hex');
  const encoding = encodingOf(head, validator.valid());
  // A file in no format we read is refused before the database is asked (an outage then does not keep it in the inbox).
  const readerOptions = { acceptUnbalanced: options.acceptUnbalanced === true, csv: options.csv };
  const headDecoder = streamDecoder(encoding);
  const whole = bytes <= head.length;
  const headText = headDecoder.write(head) + (whole ? headDecoder.end() : '');
  const { format } = statementReader(headText.slice(0, HEAD_CHARS), () => undefined, { ...readerOptions, whole });
  // A large MT940 is read in a thread of its own (read-thread.ts): its reader costs less per line
  // than storing it, and on the main thread it held up each of Postgres's answers until a slice's
  // parse ended (1,000,000 entries: 17.5-18.0 s, against 21.4-22.1 s for the commit before in runs
  // within the hour before; bench/README.md, statements). A CAMT.053's reader costs more per line
  // than its store: on a thread of its own it stays the slower side and the hand-over adds to it
  // (25.6-28.2 s in five runs against 24.7-25.6 s in four), so it, a CSV (whose profiles are
  // options a thread would need copied) and small files stay here.
  const threaded = format === 'mt940' && bytes >= (options.readThreadFromBytes ?? READ_THREAD_FROM_BYTES);
  return importSections(database, environment, sha256, fileName, format, options, async (stage, statementId) => {
    const again = createHash('sha256');
    const changed = () => new FileChangedError(`${fileName} changed while it was read`);
    if (threaded) {
      const thread = new ReadThread({
        encoding, readerOptions: { acceptUnbalanced: readerOptions.acceptUnbalanced }, sliceChars: SLICE_CHARS, environment, statementId,
        fileName, ...(options.maxAmountCents !== undefined ? { maxAmountCents: options.maxAmountCents } : {}),
      }, options.readThreadMaxMemoryMb);
      // The parts before a refusal are staged first, as the main thread's reader would have: a
      // statement before it that cannot be stored is the failure reported (store-pipeline.ts).
      const stageAll = async (read: ThreadRead) => {
        for (const p of read.parts) await stage(p.section, p.lines, p.more, p.built);
        if (read.error) throw read.error;
      };
      try {
        // The thread reads the next chunk while the statements of the one before are staged.
        let reply: Promise<ThreadRead> | null = null;
        for await (const chunk of source()) {
          again.update(chunk);
          const read: ThreadRead = reply ? await reply : { parts: [] };
          // A refusal ends the reading: its parts before it are staged, then it is thrown.
          if (read.error) await stageAll(read);
          reply = thread.read(chunk);
          // Awaited below; until then a failure is held, not unhandled.
          reply.catch(() => undefined);
          await stageAll(read);
        }
        if (again.digest('hex') !== sha256) throw changed();
        if (reply) await stageAll(await reply);
        await stageAll(await thread.read(null));
      } finally {
        await thread.close();
      }
      return;
    }
    const decoder = streamDecoder(encoding);
    const pending: [StatementSection, StatementLine[], boolean][] = [];
    const drain = async () => {
      for (let next = pending.shift(); next; next = pending.shift()) await stage(...next);
    };
    const feed = createTextFeed((section, lines, more) => pending.push([section, lines, more ?? false]), readerOptions, SLICE_CHARS, async () => {
      await drain();
      await turn();
    });
    for await (const chunk of source()) {
      again.update(chunk);
      await feed.write(decoder.write(chunk), false);
      await drain();
    }
    if (again.digest('hex') !== sha256) throw changed();
    await feed.write(decoder.end(), true);
    await drain();
  });
}

// The reader's text is parsed a slice at a time, with a turn of the event loop after each, so
// Postgres's answers are read, and the next statement's queries sent (store-pipeline.ts), within a
// slice's parse instead of a chunk's: 1 MiB of a CAMT.053 is about 150 ms of JavaScript, and the
// connection waited that long for each of them.
const SLICE_CHARS = 64 * 1024;

/** HEAD_CHARS characters of UTF-8 take at most four bytes each. */
const HEAD_BYTES = HEAD_CHARS * 4;

/** importStatementSource over bytes in memory. */
export function importStatement(database: Database, environment: ProviderEnvironment, bytes: Buffer, fileName: string, options: ImportOptions = {}): Promise<ImportResult> {
  return importStatementSource(database, environment, () => chunksOf(bytes), fileName, options);
}

/**
 * A file read in 1 MiB chunks. With `noFollow` (the inbox, whose files anyone with write access to
 * the inbox places) a symlink is refused instead of read, so a link cannot make the import read a
 * file outside the inbox, and neither can a pipe or device swapped in after the scan listed the
 * name (opened non-blocking, refused unless it is a regular file).
 */
export const fileSource =
  (file: string, options: { noFollow?: boolean } = {}): ChunkSource =>
  () =>
    options.noFollow ? readRegularFile(file) : createReadStream(file, { highWaterMark: READ_CHUNK });

async function* readRegularFile(file: string): AsyncGenerator<Uint8Array> {
  let opened;
  try {
    opened = await openFileToImport(file, true);
  } catch (error) {
    if (error instanceof NotARegularFileError) throw new StatementFormatError(error.message);
    throw error;
  }
  try {
    yield* opened.handle.createReadStream({ highWaterMark: READ_CHUNK, autoClose: false });
  } finally {
    await opened.handle.close();
  }
}

/** importStatementSource over a file. */
export function importStatementFile(database: Database, environment: ProviderEnvironment, file: string, options: ImportOptions = {}): Promise<ImportResult> {
  return importStatementSource(database, environment, fileSource(file), file, options);
}

async function* chunksOf(bytes: Buffer): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += READ_CHUNK) yield bytes.subarray(i, i + READ_CHUNK);
}

/** The import of an already parsed file (for tests that hand-make what a parser produced). */
export function importParsed(database: Database, environment: ProviderEnvironment, parsed: ParsedStatement, sha256: string, fileName: string): Promise<ImportResult> {
  return importSections(database, environment, sha256, fileName, parsed.format, {}, async (stage) => {
    for (const [i, section] of parsed.sections.entries()) await stage(section, parsed.lines.filter((l) => l.section === i));
  });
}

/** A statement's lines, or a part of them with `more` set (types.ts SectionSink). */
type Stage = (section: StatementSection, lines: StatementLine[], more?: boolean, built?: BuiltStatement) => Promise<void>;


async function importSections(
  database: Database,
  environment: ProviderEnvironment,
  sha256: string,
  fileName: string,
  format: StatementFormat,
  options: ImportOptions,
  read: (stage: Stage, statementId: number) => Promise<void>,
): Promise<ImportResult> {
  return transaction(database.sql, async (tx) => {
    // One import per environment at a time: the overlap rule (overlap.ts) must see what the other committed.
    // A wait is told (isolated-import.ts does not count it against the time limit) only when
    // another import holds the lock: an uncontended lock is part of the import's own time.
    const key = lockKey('statementImport', environment);
    if (!(await tryTransactionLock(tx, key))) {
      options.lockWait?.('waiting');
      await transactionLock(tx, key);
      options.lockWait?.('held');
    }
    const base = { file: fileName, sha256 };
    const before = await alreadyImported(tx, environment, sha256);
    if (before) return { ...base, ...before };
    const staging = await createStaging(tx);
    const [inserted] = await tx<{ id: string }[]>`
      insert into bank_statements (environment, file_sha256, file_name, format, line_count, key_format)
      values (${environment}, ${sha256}, ${path.basename(fileName)}, ${format}, 0, ${KEY_FORMAT})
      returning id`;
    const statementId = Number(inserted!.id);
    const sections: StatementSection[] = [];
    const counts = { new: 0, known: 0, overlap: 0 };
    let linesRead = 0;
    let linesStaged = 0;
    let balancesUnchecked = 0;
    const unbalancedFindings: number[] = [];
    const totals: Totals = new Map();
    const pipeline = new StorePipeline<Stored>(
      (part, pace) => {
        if (part.more) return Promise.all(stagePart(tx, staging, part.section, wholeDays(part.section), linesNow(part.lines), part.firstN)).then(() => null);
        return storeSection(tx, staging, environment, statementId, fileName, part, pace);
      },
      (stored) => {
        // A CSV carries no balances (section.balances absent): counted as not checked, like a statement missing one.
        const balances = stored.section.balances;
        if (!balances || balances.state === 'unchecked') balancesUnchecked += 1;
        if (stored.unbalancedFinding !== null) unbalancedFindings.push(stored.unbalancedFinding);
        sections.push(stored.section);
        counts.new += stored.counts.new;
        counts.known += stored.counts.known;
        counts.overlap += stored.counts.overlap;
        linesRead += stored.lines;
        options.onProgress?.(linesRead);
      },
      MAX_PENDING_LINES,
      options.yieldTo,
    );
    // The lines of the statement being read so far (a statement handed over in parts), for its refusal's place.
    let statementsHandedOver = 0;
    // A statement handed over in parts is staged part by part (staging.ts stagePart); one handed over whole, as rows built now.
    let inParts = false;
    try {
      await read(async (section, lines, more, built) => {
        const whole = !more && !inParts;
        inParts = more === true;
        const index = statementsHandedOver;
        if (!more) statementsHandedOver += 1;
        if (built && !whole) throw new Error(`statement ${index + 1}: rows built for a part of a statement`);
        if (built) {
          // Its reader checked its amounts (read-thread.ts) and counted its totals.
          linesStaged += built.count;
          for (const [currency, t] of built.totals) {
            addTotal(totals, currency, 'credit', t.credit);
            addTotal(totals, currency, 'debit', t.debit);
          }
          await pipeline.add(section, built.lines, false, () => built.fresh, built.count);
        } else {
          refuseOutsideLimits(fileName, index, section, lines, options.maxAmountCents);
          linesStaged += lines.length;
          for (const l of lines) addTotal(totals, l.currency, l.direction, l.amountCents);
          await pipeline.add(section, lines, more === true, whole ? () => freshRows(section, lines, environment, statementId) : undefined);
        }
        if (more) options.onProgress?.(linesStaged);
      }, statementId);
      await pipeline.drain();
    } catch (error) {
      throw await pipeline.settle(error);
    }
    const file = summarize(format, sections, []);
    await tx`
      update bank_statements
      set account_iban = ${file.accountIban}, period_from = ${file.periodFrom}::timestamptz, period_to = ${file.periodTo}::timestamptz,
          line_count = ${linesRead}, statement_count = ${sections.length},
          lines_new = ${counts.new}, lines_known = ${counts.known}, lines_overlap = ${counts.overlap},
          balances_unchecked = ${balancesUnchecked}, statements_unbalanced = ${unbalancedFindings.length},
          unbalanced_finding_ids = ${unbalancedFindings}::bigint[],
          -- when the file's lines were all written, not when its transaction began: an import may take
          -- longer than the margin a reconcile pass allows for commits after its start (invoice-scope.ts)
          imported_at = clock_timestamp()
      where id = ${statementId}`;
    return {
      ...base, format, statementId, alreadyImported: false, statements: sections.length, linesRead, linesNew: counts.new, linesKnown: counts.known,
      linesOverlap: counts.overlap, balancesUnchecked, statementsUnbalanced: unbalancedFindings.length, unbalancedFindings,
      totals: [...totals].map(([currency, t]) => ({ currency, creditCents: t.credit.toString(), debitCents: t.debit.toString() })),
    };
  });
}

/** One statement as stored: its counts, and the statement_unbalanced finding opened for it. */
interface Stored {
  section: StatementSection;
  lines: number;
  counts: SectionCounts;
  unbalancedFinding: number | null;
}

// Lines read ahead of the ones stored: two statements of the bench's 4,000 lines and the next
// being parsed, so the reader never waits for Postgres while one statement is being stored.
const MAX_PENDING_LINES = 10_000;

async function storeSection(
  tx: TransactionSql,
  staging: Staging,
  environment: ProviderEnvironment,
  statementId: number,
  fileName: string,
  part: StatementPart,
  pace: CopyPace | undefined,
): Promise<Stored> {
  const { section, index } = part;
  // Only an import told to accept it gets an unbalanced statement here (the readers refuse otherwise): stored, with its finding.
  const balances = section.balances;
  const counts = await storeStatement(tx, staging, environment, statementId, index, section, part.lines, part.firstN, part.fresh, pace);
  // After the statement is stored: nothing may use the connection while its rows are copied (overlap.ts).
  const finding = balances?.state === 'unbalanced' ? await recordUnbalanced(tx, environment, statementId, index, fileName, section, balances) : null;
  return { section, lines: counts.new + counts.known + counts.overlap, counts, unbalancedFinding: finding };
}

async function alreadyImported(tx: TransactionSql, environment: ProviderEnvironment, sha256: string) {
  const [row] = await tx<
    {
      id: string; format: StatementFormat; line_count: number; statement_count: number | null; balances_unchecked: number | null;
      statements_unbalanced: number | null; unbalanced_finding_ids: string[] | null;
    }[]
  >`
    select id, format, line_count, statement_count, balances_unchecked, statements_unbalanced, unbalanced_finding_ids::text[]
    from bank_statements where environment = ${environment} and file_sha256 = ${sha256}`;
  if (!row) return null;
  // The findings its first import opened or reused, so the result line names them again; a file
  // imported before migration 0026 recorded none, and its own findings name it as their entity.
  const findings = row.unbalanced_finding_ids
    ? row.unbalanced_finding_ids.map((id) => ({ id }))
    : row.statements_unbalanced
      ? await tx<{ id: string }[]>`
          select id::text from discrepancies
          where environment = ${environment} and kind = 'statement_unbalanced' and entity_type = 'statement' and entity_id = ${row.id}
          order by subject::int, id`
      : [];
  return {
    format: row.format, statementId: Number(row.id), alreadyImported: true, statements: row.statement_count, linesRead: row.line_count,
    linesNew: 0, linesKnown: row.line_count, linesOverlap: 0, balancesUnchecked: row.balances_unchecked, statementsUnbalanced: row.statements_unbalanced,
    unbalancedFindings: findings.map((f) => Number(f.id)), totals: null,
  };
}

/**
 * statement_unbalanced: a statement stored although opening balance + its bookings differ from its
 * closing balance (the user's `--accept-unbalanced`). Evidence: the balances and the booked totals
 * as the file states them, read at import (the difference is closing minus computed). Entity the
 * statement file (bank_statements.id), subject its position in the file (statement_periods
 * section_index); expected the closing balance, observed the computed one, in cents. Never
 * resolved by a pass: the file stays what it is; an accountant acknowledges it.
 *
 * The same statement sent again in other bytes (the bank's download again, a line break more) is
 * the same evidence: when a finding already names this statement (its identity and account) with
 * the same closing and computed balances, that finding stands for it, acknowledged or not, and no
 * second one opens.
 */
async function recordUnbalanced(
  tx: TransactionSql,
  environment: ProviderEnvironment,
  statementId: number,
  sectionIndex: number,
  fileName: string,
  section: StatementSection,
  b: Extract<BalanceCheck, { state: 'unbalanced' }>,
): Promise<number> {
  const computed = b.openingCents + b.creditCents - b.debitCents;
  const [known] = await tx<{ id: string }[]>`
    select id::text from discrepancies
    where environment = ${environment} and kind = 'statement_unbalanced' and evidence->>'statement' = ${section.identity}
      and evidence->>'account_iban' is not distinct from ${section.accountIban} and evidence->>'currency' = ${b.currency}
      and expected = ${b.closingCents.toString()} and observed = ${computed.toString()}
    order by id limit 1`;
  if (known) return Number(known.id);
  return recordFinding(
    tx,
    {
      environment, kind: 'statement_unbalanced', entityType: 'statement', entityId: String(statementId), subject: String(sectionIndex),
      expected: b.closingCents.toString(), observed: computed.toString(),
      details: `${path.basename(fileName)}: ${b.message}; stored as told (--accept-unbalanced): a booking may be missing or invented`,
      evidence: {
        statement_id: statementId, section_index: sectionIndex, file_name: path.basename(fileName), statement: section.identity, account_iban: section.accountIban,
        currency: b.currency, opening_cents: b.openingCents.toString(), credit_cents: b.creditCents.toString(), debit_cents: b.debitCents.toString(),
        closing_cents: b.closingCents.toString(), difference_cents: b.differenceCents.toString(),
      },
    },
    'importer',
  );
}
