import type { TransactionSql } from 'postgres';
import { latestPayoutEvents } from '../ledger/payouts.js';
import { sepaKey } from '../ledger/sepa-key.js';
import { DEFAULT_PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS, type ProviderEnvironment } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { lockKey } from '../jobs/lock-keys.js';
import { transactionLock } from '../jobs/session-lock.js';
import type { PayoutReportFile, PayoutReportRow } from '../payout-reports/read.js';
import { transaction } from '../db/transaction.js';
import { errorCode, SQLSTATE } from '../db/errors.js';
import { cancelOnAbort } from '../db/cancel-on-abort.js';

export interface PayoutReportImportResult {
  file: string | null;
  format: 'csv' | 'xlsx';
  sha256: string;
  reportId: number;
  /** the same bytes had been imported before: nothing was written */
  alreadyImported: boolean;
  /** rows in the file */
  rows: number;
  /** rows stored now; the others were already held for their payout (another file about it) */
  rowsNew: number;
  /** the payouts (uuid) the file's rows were tied to */
  payouts: string[];
}

/** The file is not stored, and the message says why: no payout, or more than one, fits it. */
export class PayoutReportRefusedError extends Error {
  override readonly name = 'PayoutReportRefusedError';
}

/**
 * The import's statement ran or waited past PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS and the server
 * cancelled it: the transaction was rolled back, nothing of the file is stored. Not the file's
 * fault (a lock held on a table the import writes, a ledger too busy): the same file may be
 * imported later. `cause` is the database's error.
 */
export class PayoutReportImportTimeoutError extends Error {
  override readonly name = 'PayoutReportImportTimeoutError';
  constructor(readonly timeoutSeconds: number, cause: unknown) {
    super(`the import did not finish: a statement of it ran or waited longer than PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS (${timeoutSeconds} s), a lock held on a table it writes or a ledger too busy; stopped, nothing of the file was stored`, { cause });
  }
}

/**
 * The import was stopped by its caller's signal (the daemon stopping): its statement was cancelled
 * and the transaction rolled back, nothing of the file is stored; the same file may be imported
 * later. `cause` is the database's error, or the signal's reason.
 */
export class PayoutReportImportStoppedError extends Error {
  override readonly name = 'PayoutReportImportStoppedError';
  constructor(cause: unknown) {
    super('the import was stopped (the daemon is stopping); nothing of the file was stored', { cause });
  }
}

/**
 * Stores one parsed payout report (read.ts) in one transaction, whole or not at all.
 *
 * Each row is tied to a payout: by its Payout Reference (a payout's sepa_instruction_id, compared
 * case-insensitively, or its payout_uuid) when the file has one; the rows without one, taken
 * together, by the one payout whose latest event lists exactly the file's invoice rows' Doc Nos and
 * whose amount_cents is the sum of the rows' Transfer Amounts (among completed payouts first, then
 * cancelled ones). A reference that names no payout or several, or rows that fit no payout or
 * several, refuse the file, naming the reference or the candidate payouts. So does a document
 * (doc type and doc no) twice for one payout in the file: it could not be stored twice, and
 * dropping one would lose it; and rows of one payout in two currencies (refuseMixedCurrencies).
 *
 * Idempotent: a file with the same sha256 is a no-op; rows whose (payout, doc type, doc no) a
 * previous file brought are not stored again. Imports of one environment take turns (a transaction
 * lock), so two importers racing on one file store it once.
 *
 * Bounded: a statement that runs or waits longer than `timeoutSeconds`
 * (PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS) stops the import with PayoutReportImportTimeoutError.
 *
 * Stoppable: when `signal` aborts (the inbox's, at shutdown) the running statement is cancelled
 * (db/cancel-on-abort.ts), the transaction rolls back and the import fails with
 * PayoutReportImportStoppedError, whatever it was waiting for: otherwise an import behind a lock
 * holds the daemon's stop until PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS (120 s by default), past
 * SHUTDOWN_TIMEOUT_MS (test/lifecycle/sigterm-receiver-stops-before-jobs.test.ts).
 */
export async function importPayoutReport(
  database: Database,
  environment: ProviderEnvironment,
  report: PayoutReportFile,
  options: { fileName?: string; timeoutSeconds?: number; signal?: AbortSignal } = {},
): Promise<PayoutReportImportResult> {
  const timeoutSeconds = options.timeoutSeconds ?? DEFAULT_PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS;
  const { signal } = options;
  const started = performance.now();
  try {
    return await importInTransaction(database, environment, report, options.fileName ?? null, timeoutSeconds * 1000, signal);
  } catch (error) {
    // The stop's cancel (57014), or the signal found aborted between statements: a refusal of the
    // file that came meanwhile still goes through as one.
    if (signal?.aborted && (errorCode(error) === SQLSTATE.QUERY_CANCELED || error === signal.reason)) throw new PayoutReportImportStoppedError(error);
    // A cancel that came when the import had run the whole time was statement_timeout's (another,
    // pg_cancel_backend by an operator, comes sooner and goes on as it is); the message text is
    // not compared, since lc_messages may translate it.
    if (errorCode(error) === SQLSTATE.QUERY_CANCELED && performance.now() - started >= timeoutSeconds * 1000) {
      throw new PayoutReportImportTimeoutError(timeoutSeconds, error);
    }
    throw error;
  }
}

async function importInTransaction(
  database: Database,
  environment: ProviderEnvironment,
  report: PayoutReportFile,
  file: string | null,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<PayoutReportImportResult> {
  const base = { file, format: report.format, sha256: report.sha256, rows: report.rows.length };
  if (report.rows.length === 0) throw new PayoutReportRefusedError('the file holds no rows');
  refuseDuplicates(report.rows);
  signal?.throwIfAborted();
  return transaction(database.sql, async (tx) => {
    const unwatch = signal ? await cancelOnAbort(database.sql, tx, signal) : undefined;
    try {
      return await importIn(tx, environment, report, base, timeoutMs);
    } finally {
      await unwatch?.();
    }
  });
}

async function importIn(
  tx: TransactionSql,
  environment: ProviderEnvironment,
  report: PayoutReportFile,
  base: Pick<PayoutReportImportResult, 'file' | 'format' | 'sha256' | 'rows'>,
  timeoutMs: number,
): Promise<PayoutReportImportResult> {
  // Every statement of the import, the wait for the environment's import lock first, is
  // cancelled by the server past the timeout: without it an import stuck behind a lock held on a
  // table it writes keeps its upload unanswered and its pool connection taken for as long as the
  // lock is held (test/http/payout-report-upload-timeout.test.ts). The server enforces it on the
  // statement itself, whatever the client's state; local to the transaction, it goes with it, so
  // the connection returns to the pool without it.
  await tx`select set_config('statement_timeout', ${String(timeoutMs)}, true)`;
  await transactionLock(tx, lockKey('payoutReportImport', environment));
  const [known] = await tx<{ id: number; payouts: string[] | null }[]>`
    select r.id, (select array_agg(distinct payout_uuid::text order by payout_uuid::text) from payout_report_rows w where w.report_id = r.id) as payouts
    from payout_reports r where r.environment = ${environment} and r.sha256 = ${report.sha256}`;
  if (known) return { ...base, reportId: Number(known.id), alreadyImported: true, rowsNew: 0, payouts: known.payouts ?? [] };

  await stage(tx, report.rows);
  await tie(tx, environment);
  await refuseDuplicatesByPayout(tx);
  await refuseMixedCurrencies(tx, environment);
  await refuseCorrections(tx, environment);
  const [stored] = await tx<{ id: number }[]>`
    insert into payout_reports (environment, sha256, file_name, format, row_count, imported_at)
    values (${environment}, ${report.sha256}, ${base.file}, ${report.format}, ${report.rows.length}, clock_timestamp())
    returning id`;
  const reportId = Number(stored!.id);
  const inserted = await tx`
    insert into payout_report_rows (environment, report_id, line, payout_uuid, order_no, doc_no, doc_type, currency,
                                    transaction_amount_cents, discount_rate_micros, mdr_rate_micros, transaction_fee_cents,
                                    gross_purchase_price_cents, discount_cents, vat_on_discount_cents, transfer_amount_cents,
                                    total_deductions_cents)
    select ${environment}, ${reportId}, s.line, t.payout_uuid, s.order_no, s.doc_no, s.doc_type, s.currency,
           s.transaction_amount_cents, s.discount_rate_micros, s.mdr_rate_micros, s.transaction_fee_cents,
           s.gross_purchase_price_cents, s.discount_cents, s.vat_on_discount_cents, s.transfer_amount_cents,
           s.total_deductions_cents
    from staged_payout_rows s
    join payout_report_tie t on t.payout_reference is not distinct from s.payout_reference
    order by s.line
    on conflict (environment, payout_uuid, doc_type, doc_no) do nothing`;
  const payouts = await tx<{ payout_uuid: string }[]>`select distinct payout_uuid::text from payout_report_tie order by 1`;
  return { ...base, reportId, alreadyImported: false, rowsNew: inserted.count, payouts: payouts.map((p) => p.payout_uuid) };
}

/** A document twice for one payout reference in one file: refused, naming both lines. */
function refuseDuplicates(rows: readonly PayoutReportRow[]): void {
  const seen = new Map<string, number>();
  for (const r of rows) {
    const key = `${r.payoutReference?.toUpperCase() ?? ''}\n${r.docType}\n${r.docNo}`;
    const first = seen.get(key);
    if (first !== undefined) throw new PayoutReportRefusedError(`lines ${first} and ${r.line} both settle ${r.docType.replace('_', ' ')} ${r.docNo}${r.payoutReference ? ` for payout ${r.payoutReference}` : ''}`);
    seen.set(key, r.line);
  }
}

/**
 * A document twice for one payout once its references are tied: two references may name one
 * payout (its SEPA reference and its uuid), and the second row would be dropped by the insert's
 * conflict. Refused, naming both lines.
 */
async function refuseDuplicatesByPayout(tx: TransactionSql): Promise<void> {
  const [twice] = await tx<{ first: number; second: number; doc_type: string; doc_no: string; payout_uuid: string }[]>`
    select min(s.line) as first, max(s.line) as second, s.doc_type::text as doc_type, s.doc_no, t.payout_uuid::text as payout_uuid
    from staged_payout_rows s
    join payout_report_tie t on t.payout_reference is not distinct from s.payout_reference
    group by t.payout_uuid, s.doc_type, s.doc_no
    having count(*) > 1
    order by min(s.line)
    limit 1`;
  if (twice) {
    throw new PayoutReportRefusedError(`lines ${twice.first} and ${twice.second} both settle ${twice.doc_type.replace('_', ' ')} ${twice.doc_no} for payout ${twice.payout_uuid}`);
  }
}

/**
 * Rows of one payout in two currencies: refused, naming the payout, the currencies and a line of
 * each. A payout is paid in one currency ("Amounts are in the payout's currency (EUR or GBP)":
 * provider-merchant-docs.md), so such a file is not that payout's report, and stored its rows'
 * Transfer Amounts were added across currencies (EUR 100.00 + GBP 100.00 "matched" a payout of
 * 200.00). Rows of unstated currency fit any; the payout's rows a previous file stored count too.
 */
async function refuseMixedCurrencies(tx: TransactionSql, environment: ProviderEnvironment): Promise<void> {
  const [mixed] = await tx<{ payout_uuid: string; seen: string }[]>`
    with currencies as (
      select t.payout_uuid, upper(s.currency) as currency, 'line ' || min(s.line) as seen
      from staged_payout_rows s
      join payout_report_tie t on t.payout_reference is not distinct from s.payout_reference
      where s.currency is not null
      group by t.payout_uuid, upper(s.currency)
      union all
      select w.payout_uuid, upper(w.currency), 'a report imported before'
      from payout_report_rows w
      where w.environment = ${environment} and w.currency is not null
        and w.payout_uuid in (select payout_uuid from payout_report_tie)
      group by w.payout_uuid, upper(w.currency)
    )
    select payout_uuid::text, string_agg(currency || ' (' || seen || ')', ', ' order by currency, seen) as seen
    from currencies
    group by payout_uuid
    having count(distinct currency) > 1
    order by payout_uuid
    limit 1`;
  if (mixed) {
    throw new PayoutReportRefusedError(`rows of payout ${mixed.payout_uuid} name more than one currency: ${mixed.seen}; a payout is paid in one currency`);
  }
}

/**
 * A row for a document a previous file brought for the same payout, with other figures: refused,
 * naming the line, the document, the file stored before and each figure that differs. Such a file
 * is a corrected report, and the insert would keep the stored row and drop the new figures without
 * a word (its result "rows new 0"); which report is right is for a person to settle with the
 * provider. A row with the same figures is the same row and is not stored again.
 */
async function refuseCorrections(tx: TransactionSql, environment: ProviderEnvironment): Promise<void> {
  const [differing] = await tx<{ line: number; doc: string; payout_uuid: string; stored_in: string; figures: string }[]>`
    select s.line, replace(s.doc_type::text, '_', ' ') || ' ' || s.doc_no as doc, t.payout_uuid::text,
           coalesce(r.file_name, 'report ' || r.id) || ' (imported ' || to_char(r.imported_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI') || ' UTC)' as stored_in,
           f.figures
    from staged_payout_rows s
    join payout_report_tie t on t.payout_reference is not distinct from s.payout_reference
    join payout_report_rows w
      on w.environment = ${environment} and w.payout_uuid = t.payout_uuid and w.doc_type = s.doc_type and w.doc_no = s.doc_no
    join payout_reports r on r.id = w.report_id
    cross join lateral (
      select string_agg(format('%s %s against %s', v.label, coalesce(v.here, 'none'), coalesce(v.there, 'none')), ', ' order by v.n) as figures
      from (values
        (1, 'Order No', s.order_no, w.order_no),
        (2, 'Currency', upper(s.currency), upper(w.currency)),
        (3, 'Transaction Amount', (s.transaction_amount_cents / 100.0)::numeric(20,2)::text, (w.transaction_amount_cents / 100.0)::numeric(20,2)::text),
        (4, 'Discount %', trim_scale(s.discount_rate_micros / 10000.0)::text, trim_scale(w.discount_rate_micros / 10000.0)::text),
        (5, 'MDR %', trim_scale(s.mdr_rate_micros / 10000.0)::text, trim_scale(w.mdr_rate_micros / 10000.0)::text),
        (6, 'Transaction Fee', (s.transaction_fee_cents / 100.0)::numeric(20,2)::text, (w.transaction_fee_cents / 100.0)::numeric(20,2)::text),
        (7, 'Gross Purchase Price', (s.gross_purchase_price_cents / 100.0)::numeric(20,2)::text, (w.gross_purchase_price_cents / 100.0)::numeric(20,2)::text),
        (8, 'Discount', (s.discount_cents / 100.0)::numeric(20,2)::text, (w.discount_cents / 100.0)::numeric(20,2)::text),
        (9, 'VAT on Discount', (s.vat_on_discount_cents / 100.0)::numeric(20,2)::text, (w.vat_on_discount_cents / 100.0)::numeric(20,2)::text),
        (10, 'Transfer Amount', (s.transfer_amount_cents / 100.0)::numeric(20,2)::text, (w.transfer_amount_cents / 100.0)::numeric(20,2)::text),
        (11, 'Total Deductions', (s.total_deductions_cents / 100.0)::numeric(20,2)::text, (w.total_deductions_cents / 100.0)::numeric(20,2)::text)
      ) as v(n, label, here, there)
      where v.here is distinct from v.there
    ) f
    where f.figures is not null
    order by s.line
    limit 1`;
  if (differing) {
    throw new PayoutReportRefusedError(
      `line ${differing.line}: ${differing.doc} of payout ${differing.payout_uuid} was stored from ${differing.stored_in} with other figures ` +
        `(this file's against the stored: ${differing.figures}); a corrected report is not stored over the one before: settle with the provider which is right`,
    );
  }
}

/** The file's rows in a temporary table, in one statement (arrays unnested side by side). */
async function stage(tx: TransactionSql, rows: readonly PayoutReportRow[]): Promise<void> {
  await tx`
    create temporary table staged_payout_rows (
      line integer not null, payout_reference text, order_no text, doc_no text not null, doc_type payout_doc_type not null,
      currency text, transaction_amount_cents bigint not null, discount_rate_micros integer, mdr_rate_micros integer,
      transaction_fee_cents bigint not null, gross_purchase_price_cents bigint not null, discount_cents bigint not null,
      vat_on_discount_cents bigint not null, transfer_amount_cents bigint not null, total_deductions_cents bigint not null
    ) on commit drop`;
  const col = <T>(f: (r: PayoutReportRow) => T) => rows.map(f);
  const big = (f: (r: PayoutReportRow) => bigint) => rows.map((r) => f(r).toString());
  await tx`
    insert into staged_payout_rows (line, payout_reference, order_no, doc_no, doc_type, currency, transaction_amount_cents,
                                    discount_rate_micros, mdr_rate_micros, transaction_fee_cents, gross_purchase_price_cents,
                                    discount_cents, vat_on_discount_cents, transfer_amount_cents, total_deductions_cents)
    select * from unnest(
      ${col((r) => r.line)}::integer[], ${col((r) => r.payoutReference?.trim() || null)}::text[], ${col((r) => r.orderNo)}::text[],
      ${col((r) => r.docNo.trim())}::text[], ${col((r) => r.docType)}::payout_doc_type[], ${col((r) => r.currency)}::text[],
      ${big((r) => r.transactionAmountCents)}::bigint[], ${col((r) => r.discountRateMicros)}::integer[],
      ${col((r) => r.mdrRateMicros)}::integer[], ${big((r) => r.transactionFeeCents)}::bigint[],
      ${big((r) => r.grossPurchasePriceCents)}::bigint[], ${big((r) => r.discountCents)}::bigint[],
      ${big((r) => r.vatOnDiscountCents)}::bigint[], ${big((r) => r.transferAmountCents)}::bigint[],
      ${big((r) => r.totalDeductionsCents)}::bigint[])`;
}

/**
 * payout_report_tie: each payout reference of the file (null for the rows without one) with the
 * one payout it names, or a PayoutReportRefusedError naming what did not fit.
 */
async function tie(tx: TransactionSql, environment: ProviderEnvironment): Promise<void> {
  await tx`create temporary table payout_report_tie (payout_reference text, payout_uuid uuid not null) on commit drop`;
  const byReference = await tx<{ ref: string; payouts: string[] }[]>`
    select s.ref, coalesce(array_agg(distinct p.payout_uuid::text order by p.payout_uuid::text) filter (where p.payout_uuid is not null), '{}') as payouts
    from (select distinct payout_reference as ref from staged_payout_rows where payout_reference is not null) s
    left join payout_events p
      on p.environment = ${environment}
     and (${sepaKey(tx, tx`p.sepa_instruction_id`)} = upper(s.ref) or p.payout_uuid::text = lower(s.ref))
    group by s.ref
    order by s.ref`;
  for (const r of byReference) {
    if (r.payouts.length === 0) throw new PayoutReportRefusedError(`payout reference ${r.ref} names no payout in the ledger`);
    if (r.payouts.length > 1) throw new PayoutReportRefusedError(`payout reference ${r.ref} names several payouts: ${r.payouts.join(', ')}`);
    await tx`insert into payout_report_tie (payout_reference, payout_uuid) values (${r.ref}, ${r.payouts[0]!}::uuid)`;
  }
  const [unreferenced] = await tx<{ n: number; docs: string[]; total: string }[]>`
    select count(*)::int as n,
           coalesce(array_agg(distinct doc_no order by doc_no) filter (where doc_type = 'invoice'), '{}') as docs,
           coalesce(sum(transfer_amount_cents), 0)::text as total
    from staged_payout_rows where payout_reference is null`;
  if (!unreferenced || unreferenced.n === 0) return;
  // The rows' sum compared as numeric: each Transfer Amount fits a bigint (rows.ts MAX_CENTS), their
  // sum need not, and cast to bigint it failed the import with "out of range for type bigint" (the
  // upload answered 500) where no payout can fit such a file: it is refused below as fitting none.
  const candidates = await tx<{ payout_uuid: string; sepa: string | null; status: string; exact: boolean }[]>`
    with latest as (
      select l.*, array(select distinct trim(x) from unnest(l.external_reference_ids) x where trim(x) <> '' order by 1) as listed
      from (${latestPayoutEvents(tx, environment)}) l
    )
    select payout_uuid::text, sepa_reference as sepa, status,
           listed = ${unreferenced.docs}::text[] and amount_cents::numeric = ${unreferenced.total}::numeric as exact
    from latest
    where listed && ${unreferenced.docs}::text[]
    order by payout_uuid`;
  const exact = candidates.filter((c) => c.exact);
  const pick = exact.filter((c) => c.status === 'complete').length > 0 ? exact.filter((c) => c.status === 'complete') : exact;
  const name = (c: (typeof candidates)[number]) => `${c.payout_uuid} (${c.sepa ?? 'no SEPA reference'}, ${c.status})`;
  if (pick.length === 1) {
    await tx`insert into payout_report_tie (payout_reference, payout_uuid) values (null, ${pick[0]!.payout_uuid}::uuid)`;
    return;
  }
  const what = `${unreferenced.n} row(s) without a payout reference (invoices ${unreferenced.docs.join(', ') || 'none'}, transfer ${unreferenced.total} cents)`;
  if (pick.length > 1) throw new PayoutReportRefusedError(`${what} fit several payouts: ${pick.map(name).join('; ')}`);
  throw new PayoutReportRefusedError(
    `${what} fit no payout exactly; payouts listing some of those invoices: ${candidates.length > 0 ? candidates.map(name).join('; ') : 'none'}`,
  );
}
