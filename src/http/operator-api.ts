import { unstatedCurrency } from '../payout-reports/contract-terms.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../config/schema.js';
import type { Database } from '../db/database.js';
import type { Logger } from '../log/logger.js';
import { XLSX_MAX_ROWS, renderXlsx } from '../reports/xlsx.js';
import { contentTypeFor, csvHeader, renderBatch } from '../reports/format.js';
import { decodeCursor, fetchAll, fetchPage, openBatches, type ReportSource } from '../reports/source.js';
import { deliveriesSource, parseDeliveryStatus } from '../reports/deliveries.js';
import { discrepancySource, parseDiscrepancyQuery } from '../reports/discrepancies.js';
import { ordersSource } from '../reports/orders.js';
import { payoutsSource } from '../reports/payouts.js';
import { streamReport } from '../reports/writer.js';
import { ageingSource, invoicesSource } from '../reports/invoices.js';
import { ackRoutes } from './operator-ack.js';
import { uploadRoutes } from './operator-upload.js';
import { detailRoutes } from './operator-detail.js';
import {
  LEDGER_DEADLINE_MS, XLSX_TYPE, answerBadRequest, authorise, booleanParam, csvOptions, environmentOf, negotiateFormat, operatorMatcher, pageOf, type ApiFormat, type Guard, type LedgerUse,
} from './operator-request.js';
import type { CsvOptions } from '../reports/format.js';
import { UsageError } from '../config/usage-error.js';
import { overviewRoutes } from './operator-overview.js';
import { sendJson, type Route } from './server.js';
import { privateOperatorMetrics, signInGuard, type OperatorMetrics } from './sign-in.js';
import { addressMatcher } from '../config/addresses.js';
import { boundedRead } from './ledger-read.js';

// What a cursor may decode to, per key column: a bigint id or a UUID.
const KEY_PATTERNS = {
  id: /^[0-9]{1,18}$/,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  first_delivery_id: /^[0-9]{1,18}$/,
  payout_uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  invoice_uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  bucket: /^(0-7|8-30|31-60|over 60)$/,
} satisfies Record<string, RegExp>;

type ReportKey = keyof typeof KEY_PATTERNS;

/**
 * One report request, checked before the ledger is touched (GuardedRoute.parse): the route's own
 * filters gave `source` and `name`; the format, CSV options, page and cursor are the same for every
 * report. `key` is the column the report's cursor names (the source's key, checked by answerReport).
 */
interface ReportRequest {
  name: string;
  key: ReportKey;
  source: (ledger: Database) => ReportSource;
  format: ApiFormat;
  csv: CsvOptions;
  limit: number | undefined;
  after: string | undefined;
  /** path and query, for the next page's Link */
  url: URL;
}

/** A report route's common parameters, after its own filters (`report`): a 400 for any that is bad. */
function reportRequest(req: IncomingMessage, url: URL, report: Pick<ReportRequest, 'name' | 'key' | 'source'>): ReportRequest {
  const format = negotiateFormat(url, req);
  const csv = csvOptions(url);
  const page = pageOf(url);
  const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor, KEY_PATTERNS[report.key]);
  return { ...report, format, csv, limit: page.limit, after, url };
}

/**
 * Whether the whole report is streamed through a cursor (CSV or JSON, no page asked for). Such a
 * read runs on the pool, not in ledger-read.ts's transaction: postgres.js 3.4.9 writes a cursor's
 * Close on a connection that closed under it (a backend terminated mid-stream) when the cursor ran
 * in a transaction, a TypeError thrown from a timer that ends the process (porsager/postgres#1208;
 * test/http/report-outage.test.ts, 3 runs of 18 under load; none of 15 on the pool). So a streamed
 * report waiting behind a lock is still answered 503 at the deadline but keeps its connection until
 * the lock goes (docs/http-api.md).
 */
function isStreamed(request: ReportRequest): boolean {
  return request.format !== 'xlsx' && request.limit === undefined;
}

/**
 * Answers one report request: JSON unless CSV or XLSX is asked for; the whole report streamed, or a
 * page (?limit, ?cursor) whose next cursor is in the `Next-Cursor` and `Link` headers (the body stays
 * the report: a JSON array, or CSV with its header), so paging adds nothing a client must parse.
 */
async function answerReport(res: ServerResponse, request: ReportRequest, ledger: Database, stall: StallOptions): Promise<void> {
  const { format, csv, after, url, name } = request;
  const source = request.source(ledger);
  // A cursor checked against another column's pattern would let a bad one reach the query (a 500).
  if (source.key !== request.key) throw new Error(`report ${name}: its key is ${source.key}, its route checks cursors as ${request.key}`);
  const day = new Date().toISOString().slice(0, 10);
  const disposition = (ext: string) => ({ 'content-disposition': `attachment; filename="${name}-${day}.${ext}"` });
  if (format === 'xlsx') {
    const paged = request.limit === undefined ? undefined : await fetchPage(source, after, request.limit);
    const rows = paged ? paged.rows : await fetchAll(source, after, XLSX_MAX_ROWS);
    if (!rows) return sendJson(res, 413, { error: `more than ${XLSX_MAX_ROWS} rows: narrow the filter, page with limit, or ask for CSV` });
    const body = await renderXlsx(source.shape, rows, name);
    if (res.headersSent) return; // answered 503 past the ledger deadline (guarded)
    res.writeHead(200, { 'content-type': XLSX_TYPE, 'content-length': body.length, ...disposition('xlsx'), ...nextPageHeaders(url, paged?.next) });
    res.end(body);
    return;
  }
  const headers = { 'content-type': contentTypeFor(format), ...(format === 'csv' ? disposition('csv') : {}) };
  if (request.limit === undefined) {
    // A ledger that cannot be read fails here, before the 200 (the router answers 503); one that
    // fails later throws out of streamReport, and the router then cuts the connection without the
    // closing chunk (sendJson in server.ts), so no client takes the part it got for the report.
    const batches = await openBatches(source, after);
    if (res.headersSent) {
      // Answered 503 past the ledger deadline (guarded) while the first rows were on their way:
      // close the cursor, whose connection would otherwise stay taken.
      await batches.return?.();
      return;
    }
    res.writeHead(200, headers);
    await streamReport(batches, source.shape, format, res, csv, { stallMs: stall.ms, onStall: () => stall.onStall(res) });
    res.end();
    return;
  }
  const { rows, next } = await fetchPage(source, after, request.limit);
  if (res.headersSent) return; // answered 503 past the ledger deadline (guarded)
  res.writeHead(200, { ...headers, ...nextPageHeaders(url, next) });
  if (format === 'csv') res.end(csvHeader(source.shape, csv) + renderBatch('csv', source.shape, rows, true, csv));
  else res.end(rows.length === 0 ? '[]\n' : `[${renderBatch('json', source.shape, rows, true)}\n]\n`);
}

/**
 * A streamed report holds a pool connection (its cursor) until its last row is written, and the
 * pool is the one the webhook receiver commits through: a client that stops reading (a laptop put
 * to sleep, a script that never reads the body, a zero TCP window) must not hold it for ever, or
 * DB_POOL_MAX of them leave every /api request and every delivery waiting. A download whose socket
 * took no byte for this long is cut off (test/http/stalled-download.test.ts). 30 s: a client that is
 * reading, however slowly, takes some bytes every few seconds (the kernel's buffers are large);
 * one that took none for half a minute is not reading, and asks again when it wakes up.
 */
export const REPORT_STALL_MS = 30_000;

interface StallOptions {
  ms: number;
  onStall(res: ServerResponse): void;
}

/** The `Next-Cursor` and `Link` headers of a page that has a next one; none for the last page. */
function nextPageHeaders(url: URL, next: string | undefined): Record<string, string> {
  if (next === undefined) return {};
  const nextUrl = new URL(url.pathname + url.search, 'http://localhost');
  nextUrl.searchParams.set('cursor', next);
  return { 'next-cursor': next, link: `<${nextUrl.pathname}${nextUrl.search}>; rel="next"` };
}

/**
 * Settles true when `work` is done, false when `ms` passed first and the answer has not begun (past
 * that point the deadline no longer applies: a streamed report takes as long as it takes). A failure
 * of `work` before the deadline is thrown; after it, it is dropped, the request being answered.
 */
function beforeDeadline(work: Promise<void>, res: ServerResponse, ms: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      if (!res.headersSent) resolve(false);
    }, ms);
    work.then(
      () => (clearTimeout(timer), resolve(true)),
      (error: unknown) => (clearTimeout(timer), reject(error)),
    );
  });
}

/** The first query parameter holding a NUL (Postgres text cannot), for a 400 naming it instead of a 500. */
function nulParameter(url: URL): string | undefined {
  for (const [name, value] of url.searchParams) if (value.includes('\u0000') || name.includes('\u0000')) return name.replace(/\u0000/g, '\\0');
  return undefined;
}

export function operatorRoutes(deps: {
  config: Config;
  database: Database;
  log: Logger;
  metrics?: OperatorMetrics;
  /** aborted when the daemon stops: an upload's statement import is stopped then */
  signal?: AbortSignal;
  /** REPORT_STALL_MS unless set (tests) */
  reportStallMs?: number;
  /** LEDGER_DEADLINE_MS unless set (tests) */
  ledgerDeadlineMs?: number;
}): Route[] {
  const { config, database, log } = deps;
  const deadlineMs = deps.ledgerDeadlineMs ?? LEDGER_DEADLINE_MS;
  const tokens = operatorMatcher(config);
  const guard = signInGuard({ trustedProxies: addressMatcher(config.TRUSTED_PROXIES), log, metrics: deps.metrics ?? privateOperatorMetrics() });
  // Each refused request is logged: only a holder of a token gets this far, so no flood to limit.
  const refusedRequest = (fields: Record<string, unknown>) => log.warn(fields, 'operator request refused');
  /** Authorised, with 400/403 for bad filters, and 503 for a ledger that does not answer in time. */
  const guarded: Guard = (route, options = {}) => async (req, res, url) => {
    const who = authorise(req, res, tokens, guard);
    if (!who) return;
    const nul = nulParameter(url);
    try {
      if (nul !== undefined) throw new UsageError(`parameter ${nul} must not contain a NUL character`);
      // Every operator route serves this daemon's environment alone, whatever else it reads.
      environmentOf(url, config);
      // Before any ledger access: a bad parameter is 400 whatever the ledger's state (GuardedRoute).
      const params = route.parse(url, req);
      const deadlineAt = performance.now() + deadlineMs;
      const use = typeof options.ledger === 'function' ? (options.ledger as (p: typeof params) => LedgerUse)(params) : (options.ledger ?? 'read');
      const work = use === 'read' && options.deadline !== false
        ? boundedRead(database, deadlineAt, (ledger) => route.handle(req, res, params, who, ledger))
        : route.handle(req, res, params, who, database);
      if (options.deadline === false) return await work;
      if (!(await beforeDeadline(work, res, deadlineMs))) {
        log.error({ operator: who.name, method: req.method, path: url.pathname, deadlineMs },
          `operator request answered 503: the ledger did not answer within ${deadlineMs / 1000} s (a read waiting for a lock gives it up half a second later)`);
        // Closed after the answer: the handler still waits on the ledger, and must not answer on a
        // connection the client goes on using (answerReport checks headersSent before its own).
        sendJson(res, 503, { error: 'database unavailable; retry' }, true);
      }
    } catch (error) {
      answerBadRequest(res, error, (status, message) => refusedRequest({ operator: who.name, method: req.method, path: url.pathname, status, err: message }));
    }
  };
  const stall: StallOptions = {
    ms: deps.reportStallMs ?? REPORT_STALL_MS,
    onStall(res) {
      const req = res.req;
      log.warn({ method: req.method, path: req.url?.split('?')[0], stalledMs: this.ms },
        `report download cut off: the client took no byte for ${this.ms / 1000} s (its ledger connection is released)`);
    },
  };
  /** A report's route: its filters (`report`) and the common parameters checked before the ledger is read. */
  const reportRoute = (path: string, report: (url: URL) => Pick<ReportRequest, 'name' | 'key' | 'source'>): Route => ({
    method: 'GET',
    path,
    handler: guarded({
      parse: (url, req) => reportRequest(req, url, report(url)),
      handle: (_req, res, request, _who, ledger) => answerReport(res, request, ledger, stall),
    }, { ledger: (request: ReportRequest) => (isStreamed(request) ? 'own' : 'read') }),
  });
  const environment = config.PROVIDER_ENV;
  // Money that names no currency is in the contract's (payout-reports/contract-terms.ts).
  const currency = unstatedCurrency(config.CONTRACT_TERMS);
  return [
    reportRoute('/api/discrepancies', (url) => {
      const { filters } = parseDiscrepancyQuery({
        status: url.searchParams.get('status') ?? undefined,
        kind: url.searchParams.getAll('kind').flatMap((k) => k.split(',')).filter((k) => k !== ''),
        since: url.searchParams.get('since') ?? undefined,
        search: url.searchParams.get('q') ?? url.searchParams.get('search') ?? undefined,
      });
      return { name: `discrepancies-${environment}`, key: 'id', source: (ledger) => discrepancySource(ledger, { ...filters, environment, currency }) };
    }),
    reportRoute('/api/orders', () => ({ name: `orders-${environment}`, key: 'uuid', source: (ledger) => ordersSource(ledger, { environment }) })),
    reportRoute('/api/payouts', () => ({ name: `payouts-${environment}`, key: 'payout_uuid', source: (ledger) => payoutsSource(ledger, { environment, currency }) })),
    // Each invoice's way to cash (reports/invoices.ts); ?ageing=1 for the ageing of those not yet paid out.
    reportRoute('/api/invoices', (url) => booleanParam('ageing', url.searchParams.get('ageing'))
      ? { name: `invoice-ageing-${environment}`, key: 'bucket', source: (ledger) => ageingSource(ledger, { environment, currency }) }
      : { name: `invoices-${environment}`, key: 'invoice_uuid', source: (ledger) => invoicesSource(ledger, { environment, currency }) }),
    // What is still stored unparsed, grouped (reports/deliveries.ts); ?status=unknown_topic|invalid_shape|unparsed.
    reportRoute('/api/deliveries', (url) => {
      const status = parseDeliveryStatus(url.searchParams.get('status') ?? undefined);
      return { name: `deliveries-${environment}`, key: 'first_delivery_id', source: (ledger) => deliveriesSource(ledger, { environment, status }) };
    }),
    ...ackRoutes({ config, database, log, guarded }),
    ...uploadRoutes({ config, database, log, guarded, signal: deps.signal }),
    ...detailRoutes({ config, guarded }),
    ...overviewRoutes({ config, guarded }),
  ];
}

