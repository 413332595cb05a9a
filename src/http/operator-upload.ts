import type { IncomingMessage, ServerResponse } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Config } from '../config/schema.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../log/logger.js';
import { describeImport, importPayoutReportFile, isRefusal } from '../payout-import/file.js';
import { PayoutReportImportStoppedError, PayoutReportImportTimeoutError, type PayoutReportImportResult } from '../payout-import/import.js';
import { csvSettings } from '../statements/csv-settings.js';
import { importStatementAsDaemon } from '../statements/daemon-import.js';
import { describeStatementImport, type ImportResult } from '../statements/import.js';
import { ImportCrashedError, ImportLedgerStalledError, ImportStoppedError } from '../statements/isolated-import.js';
import { StatementFormatError } from '../statements/types.js';
import { BodyNotSavedError, BodyTooLargeError, saveBody } from './read-body.js';
import type { Guard, Operator } from './operator-request.js';
import { sendJson, type Route } from './server.js';

/**
 * Uploads at once per daemon, receiving or importing: each statement import runs in a child
 * process with a heap of up to STATEMENT_IMPORT_MAX_MEMORY_MB (1 GB by default), so a few people
 * uploading together are served and a script posting in a loop cannot fork without bound. Imports
 * of one environment take turns in the database anyway (a transaction lock).
 */
export const MAX_UPLOADS_AT_ONCE = 4;

/** What an upload is answered: a status and JSON body (`unread`: the rest of the body was not read), or nothing when the client left. */
type Answer = { status: number; body: Record<string, unknown>; unread?: boolean } | 'gone';

/** What an import made of a file: its status and JSON body, or a refusal's message. */
type Outcome = { status: 200 | 201; body: Record<string, unknown>; summary: Record<string, unknown> } | { status: 422 | 503; error: string };

/**
 * The file name an upload is recorded and quoted under (`?name=`, the name on the person's disk):
 * its last path segment, letters, digits and `._-()+, ` kept and anything else `_`, no leading dot,
 * at most 200 bytes of UTF-8 (file systems hold 255); `upload` when nothing is left. It also names
 * the temporary file the import reads, in a folder of its own, so it must be a plain file name.
 */
export function uploadName(raw: string | null): string {
  const last = (raw ?? '').split(/[/\\]/).pop() ?? '';
  const cleaned = last.normalize('NFC').replace(/[^\p{L}\p{N}._\-()+, ]/gu, '_').replace(/^[.\s]+/, '').trim();
  let name = '';
  let bytes = 0;
  for (const ch of cleaned) {
    bytes += Buffer.byteLength(ch);
    if (bytes > 200) break;
    name += ch;
  }
  return name.trim() === '' ? 'upload' : name.trim();
}

/** The answer to a statement upload: what `statement import` prints, and its figures. */
export function statementAnswer(name: string, r: ImportResult): Record<string, unknown> {
  const known = r.statements !== null && r.balancesUnchecked !== null && r.statementsUnbalanced !== null;
  return {
    kind: 'statement',
    file: name,
    result: describeStatementImport(name, r),
    statement_id: r.statementId,
    format: r.format,
    already_imported: r.alreadyImported,
    statements: r.statements,
    lines_read: r.linesRead,
    lines_new: r.linesNew,
    lines_known: r.linesKnown,
    lines_overlap: r.linesOverlap,
    balances_checked: known ? r.statements! - r.balancesUnchecked! - r.statementsUnbalanced! : null,
    balances_unchecked: r.balancesUnchecked,
    statements_unbalanced: r.statementsUnbalanced,
    unbalanced_findings: r.unbalancedFindings,
    totals: r.totals?.map((t) => ({ currency: t.currency, credit_cents: t.creditCents, debit_cents: t.debitCents })) ?? null,
  };
}

/** The answer to a payout report upload: what `payout-report import` prints, and its figures. */
export function payoutReportAnswer(name: string, r: PayoutReportImportResult): Record<string, unknown> {
  return {
    kind: 'payout_report',
    file: name,
    result: describeImport(name, r),
    report_id: r.reportId,
    format: r.format,
    already_imported: r.alreadyImported,
    rows: r.rows,
    rows_new: r.rowsNew,
    payouts: r.payouts,
  };
}

interface UploadKind {
  /** for messages and the log */
  what: 'statement' | 'payout report';
  maxBytes: number;
  /** the setting that bounds it, named in the 413 */
  limitSetting: string;
  importFile(file: string, name: string): Promise<Outcome>;
}

/**
 * POST /api/statements and POST /api/payout-reports: the file's own bytes as the body, `?name=` its
 * file name. Each goes through exactly what the inboxes do with a file (statements/daemon-import.ts,
 * payout-import/file.ts), from a temporary file removed afterwards: 201 imported, 200 imported
 * before (nothing written), 422 refused with the import's own reason (nothing stored), 413 too
 * large, 415 a form instead of a file. The acknowledgement's protections hold: a bearer token in
 * the Authorization header, which a browser never sends on its own (no cookie, so no cross-site
 * request forgery) and which a page on another origin cannot add without a CORS preflight that
 * this server answers with no CORS headers.
 */
export function uploadRoutes(deps: {
  config: Config;
  database: Database;
  log: Logger;
  guarded: Guard;
  signal?: AbortSignal | undefined;
}): Route[] {
  const { config, database, guarded } = deps;
  const log = deps.log.child({ component: 'operator-upload' });
  let inFlight = 0;

  const statement: UploadKind = {
    what: 'statement',
    maxBytes: Math.min(config.OPERATOR_UPLOAD_MAX_BYTES, config.STATEMENT_MAX_FILE_BYTES),
    limitSetting: config.OPERATOR_UPLOAD_MAX_BYTES <= config.STATEMENT_MAX_FILE_BYTES ? 'OPERATOR_UPLOAD_MAX_BYTES' : 'STATEMENT_MAX_FILE_BYTES',
    async importFile(file, name) {
      // Read at each upload, as the inbox reads it at each scan: a corrected profile file is taken without a restart.
      let csv;
      try {
        csv = await csvSettings(config);
      } catch (error) {
        log.error({ err: error }, 'STATEMENT_CSV_PROFILE cannot be used: statement uploads are refused until it is corrected');
        return { status: 503, error: `STATEMENT_CSV_PROFILE cannot be used (${(error as Error).message}): statements cannot be imported until it is corrected` };
      }
      try {
        const r = await importStatementAsDaemon({ config, database, signal: deps.signal }, file, name, csv);
        return {
          status: r.alreadyImported ? 200 : 201,
          body: statementAnswer(name, r),
          summary: { statementId: r.statementId, format: r.format, linesRead: r.linesRead, linesNew: r.linesNew, balancesUnchecked: r.balancesUnchecked, statementsUnbalanced: r.statementsUnbalanced, alreadyImported: r.alreadyImported },
        };
      } catch (error) {
        // The inbox's refusals: the file's own fault, or a file that killed or outran its import process.
        if (error instanceof StatementFormatError || error instanceof ImportCrashedError) return { status: 422, error: error.message };
        if (error instanceof ImportStoppedError) return { status: 503, error: 'the daemon is stopping: nothing was stored; upload the file again once it is back' };
        // Not the file's fault: the ledger held the import past its time (ledgerHeldImport).
        if (error instanceof ImportLedgerStalledError) {
          const stored = error.mayBeStored ? 'it may have been stored; upload it again later: if it was, the answer is 200' : 'nothing was stored; upload it again later';
          return { status: 503, error: `${name}: ${error.message}; ${stored}` };
        }
        throw error;
      }
    },
  };

  const payoutReport: UploadKind = {
    what: 'payout report',
    maxBytes: Math.min(config.OPERATOR_UPLOAD_MAX_BYTES, config.PAYOUT_REPORT_MAX_FILE_BYTES),
    limitSetting: config.OPERATOR_UPLOAD_MAX_BYTES <= config.PAYOUT_REPORT_MAX_FILE_BYTES ? 'OPERATOR_UPLOAD_MAX_BYTES' : 'PAYOUT_REPORT_MAX_FILE_BYTES',
    async importFile(file, name) {
      try {
        // The file is `name` in a folder of its own: the import records path.basename(file), the name.
        const r = await importPayoutReportFile(database, config.PROVIDER_ENV, file, {
          columns: config.PAYOUT_REPORT_COLUMNS, maxFileBytes: config.PAYOUT_REPORT_MAX_FILE_BYTES, timeoutSeconds: config.PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS,
          // The daemon's stop cancels it, as it does the statement upload and the payout inbox: an
          // import waiting behind a lock would otherwise hold the stop up to its own timeout.
          ...(deps.signal ? { signal: deps.signal } : {}),
        });
        return {
          status: r.alreadyImported ? 200 : 201,
          body: payoutReportAnswer(name, r),
          summary: { reportId: r.reportId, format: r.format, rows: r.rows, rowsNew: r.rowsNew, payouts: r.payouts, alreadyImported: r.alreadyImported },
        };
      } catch (error) {
        if (isRefusal(error)) return { status: 422, error: (error as Error).message };
        if (error instanceof PayoutReportImportStoppedError) return { status: 503, error: 'the daemon is stopping: nothing was stored; upload the file again once it is back' };
        if (error instanceof PayoutReportImportTimeoutError) {
          // Not the file's fault: the ledger's (a lock held on a table the import writes), so 503, as for a ledger that refuses.
          log.error({ file: name, timeoutSeconds: error.timeoutSeconds, err: (error.cause as Error).message }, `payout report upload not imported: ${error.message}`);
          return { status: 503, error: `${name}: ${error.message}; upload it again later` };
        }
        throw error;
      }
    },
  };

  // No ledger deadline (guarded's): receiving the file takes up to SERVER_REQUEST_TIMEOUT_MS and
  // its import up to STATEMENT_IMPORT_TIMEOUT_SECONDS (a statement), or a statement of it up to
  // PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS (a payout report).
  // The name is checked (made safe, never refused) before anything reaches the ledger; the body's
  // type and size are checked before the import does.
  const handle = (kind: UploadKind) => guarded({ parse: (url) => uploadName(url.searchParams.get('name')), handle: async (req, res, name, who) => {
    const type = String(req.headers['content-type'] ?? '').toLowerCase();
    if (/^\s*(multipart\/form-data|application\/x-www-form-urlencoded)/.test(type)) {
      const reason = `send the ${kind.what} file's own bytes as the body, not a form`;
      refused(who, kind, name, reason);
      return refuseUnread(req, res, 415, reason);
    }
    if (inFlight >= MAX_UPLOADS_AT_ONCE) {
      const reason = `${MAX_UPLOADS_AT_ONCE} uploads are in progress: retry in a few seconds`;
      refused(who, kind, name, reason);
      res.setHeader('retry-after', '5');
      return refuseUnread(req, res, 503, reason);
    }
    inFlight += 1;
    let dir: string | undefined;
    let answer: Answer;
    try {
      try {
        dir = await mkdtemp(path.join(tmpdir(), 'bnpl-recon-upload-'));
      } catch (error) {
        throw new BodyNotSavedError(path.join(tmpdir(), 'bnpl-recon-upload-*'), error as Error);
      }
      answer = await receiveAndImport(req, kind, path.join(dir, name), name, who);
    } catch (error) {
      if (!(error instanceof BodyNotSavedError)) throw error;
      answer = diskFailure(who, kind, name, error);
    } finally {
      inFlight -= 1;
      // Before the answer: an upload answered has left nothing behind.
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    }
    if (answer === 'gone') return void res.destroy();
    if (answer.unread) return refuseUnread(req, res, answer.status, String(answer.body.error));
    sendJson(res, answer.status, answer.body);
  } }, { deadline: false, ledger: 'own' });

  /** The body into `file`, then its import: the answer, or 'gone' when the client left mid-body. */
  async function receiveAndImport(req: IncomingMessage, kind: UploadKind, file: string, name: string, who: Operator): Promise<Answer> {
    try {
      await saveBody(req, kind.maxBytes, file);
    } catch (error) {
      if (error instanceof BodyNotSavedError) return diskFailure(who, kind, name, error);
      if (!(error instanceof BodyTooLargeError)) {
        // saveBody's only other failure: the request itself (the client left mid-body).
        log.info({ operator: who.name, file: name, err: (error as Error).message }, `${kind.what} upload not received whole: nothing imported`);
        return 'gone';
      }
      refused(who, kind, name, `larger than ${kind.limitSetting} (${kind.maxBytes} bytes)`);
      const error413 = `${name}: larger than ${kind.limitSetting} (${kind.maxBytes} bytes): nothing was imported; drop the file in the inbox instead, or raise the setting`;
      return { status: 413, body: { error: error413 }, unread: true };
    }
    const outcome = await kind.importFile(file, name);
    if ('error' in outcome) {
      refused(who, kind, name, outcome.error);
      return { status: outcome.status, body: { error: outcome.error } };
    }
    log.info({ operator: who.name, file: name, ...outcome.summary }, `${kind.what} uploaded`);
    return { status: outcome.status, body: outcome.body };
  }

  /** The temporary file could not be written (a full or failing disk): the daemon's fault, 503. */
  function diskFailure(who: Operator, kind: UploadKind, name: string, error: BodyNotSavedError): Answer {
    const code = error.code ?? 'unknown error';
    log.error({ operator: who.name, file: name, code, path: error.file, err: (error.cause as Error).message },
      `${kind.what} upload not imported: its temporary file cannot be written (${code}) in ${tmpdir()}`);
    const message = `${name}: the daemon cannot write the upload to its temporary folder (${code}${code === 'ENOSPC' ? ': no space left on device' : ''}): nothing was imported; retry later, or drop the file in the inbox`;
    return { status: 503, body: { error: message }, unread: true };
  }

  const refused = (who: Operator, kind: UploadKind, name: string, reason: string) =>
    log.warn({ operator: who.name, file: name, reason }, `${kind.what} upload refused: ${reason}`);

  return [
    { method: 'POST', path: '/api/statements', handler: handle(statement) },
    { method: 'POST', path: '/api/payout-reports', handler: handle(payoutReport) },
  ];
}

/**
 * A refusal before (or instead of) reading the body: the rest of it is read and dropped while the
 * answer goes out, and the connection closed after it, so the client reads the status instead of
 * a reset while it is still sending.
 */
function refuseUnread(req: IncomingMessage, res: ServerResponse, status: number, error: string): void {
  req.resume();
  sendJson(res, status, { error }, true);
}
