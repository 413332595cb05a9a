import type { IncomingMessage, ServerResponse } from 'node:http';
import { UsageError } from '../config/usage-error.js';
import type { Config } from '../config/schema.js';
import type { Database } from '../db/database.js';
import { parseDelimiter, type CsvOptions } from '../reports/format.js';
import { tokenMatcher, type TokenMatcher } from '../config/operator-tokens.js';
import type { SignInGuard } from './sign-in.js';
import { sendJson } from './server.js';

/**
 * How long an operator request may wait for the ledger before its answer begins; past it the answer
 * is 503, as for a ledger that refuses. A primary that stops answering without closing its
 * connections (host gone, network partition: no RST) fails no query, so without a deadline every
 * /api request hung with no answer at all (test/http/report-outage.test.ts). 15 s: the slowest
 * legitimate answer, an XLSX of 100,000 rows, is read and built in a few seconds, and a person or a
 * proxy in front (nginx waits 60 s) gets the 503 well before giving up on its own.
 */
export const LEDGER_DEADLINE_MS = 15_000;

/** Options of one guarded route. */
export interface GuardOptions {
  /** false: no ledger deadline (an upload, whose import has its own bounds). */
  deadline?: boolean;
  /**
   * How the handler reaches the ledger. 'read' (the default): through the Database it is given,
   * one transaction whose waits for a lock the server gives up just after the deadline
   * (ledger-read.ts), so a read answered 503 behind a lock does not keep its pool connection.
   * 'none': it does not, and no connection is taken for it. 'own': through its own transactions
   * (a write, an upload's import), on the pool it is given. A function chooses per request from
   * its parameters (a streamed report reads on the pool: operator-api.ts says why).
   */
  ledger?: LedgerUse | ((params: never) => LedgerUse);
}

export type LedgerUse = 'read' | 'none' | 'own';

/**
 * One guarded route. `parse` checks the request's parameters and gives what the handler needs of
 * them; it runs before the ledger is touched (no pool connection, no transaction), so a request
 * that can never succeed is answered 400 (403 for another environment) whatever the ledger's state,
 * not 503 "retry" while it is down, nor after waiting the deadline for it while it hangs
 * (test/http/bad-request-while-ledger-down.test.ts). It is synchronous: nothing it does can wait.
 */
export interface GuardedRoute<P> {
  parse(url: URL, req: IncomingMessage): P;
  handle: Guarded<P>;
}

/** Wraps a route: authorised, its parameters checked, refusals answered and logged, the ledger deadline applied. */
export type Guard = <P>(route: GuardedRoute<P>, options?: GuardOptions) => (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void>;

/**
 * A handler that runs only for an authorised operator, who is named, with its route's parameters as
 * `parse` gave them (it is not given the URL: a parameter checked here would be checked after the
 * ledger was reached). `ledger` is the Database it reads through (GuardOptions.ledger says which).
 */
export type Guarded<P> = (req: IncomingMessage, res: ServerResponse, params: P, who: Operator, ledger: Database) => Promise<void>;

/** The `parse` of a route that takes no parameters (`env` is checked by the guard for every route). */
export const noParameters = (): undefined => undefined;

export interface Operator {
  /** The token's name ('api' for the shared OPERATOR_TOKEN). */
  name: string;
  shared: boolean;
}

export function operatorMatcher(config: Config): TokenMatcher {
  return tokenMatcher(config.OPERATOR_TOKEN, config.OPERATOR_TOKENS);
}

/**
 * Bearer token (OPERATOR_TOKEN or one of OPERATOR_TOKENS). With none configured the operator
 * endpoints are refused outright (403): reports hold business data. Every refusal is counted and
 * logged (rate-limited), and an address that sent too many wrong tokens within a minute is refused
 * (429) until the first of them is a minute old (sign-in.ts). Answers the refusal itself and returns undefined, or returns
 * who is calling.
 */
export function authorise(req: IncomingMessage, res: ServerResponse, tokens: TokenMatcher, guard: SignInGuard): Operator | undefined {
  if (tokens.disabled) {
    sendJson(res, 403, { error: 'operator API disabled: set OPERATOR_TOKEN or OPERATOR_TOKENS' });
    return undefined;
  }
  const source = guard.sourceOf(req);
  const wait = guard.throttle.retryAfterSeconds(source);
  if (wait !== undefined) {
    guard.refused('throttled', source);
    res.setHeader('retry-after', String(wait));
    sendJson(res, 429, { error: `too many wrong tokens from this address: retry in ${wait} s` });
    return undefined;
  }
  const header = req.headers.authorization ?? '';
  const given = /^Bearer /i.test(header) ? header.slice(7).trim() : '';
  const who = given === '' ? undefined : tokens.identify(given);
  if (!who) {
    if (given === '') guard.refused('missing_token', source);
    else {
      guard.refused('wrong_token', source);
      guard.throttle.failed(source);
    }
    res.setHeader('www-authenticate', 'Bearer');
    sendJson(res, 401, { error: 'missing or wrong bearer token' });
    return undefined;
  }
  return who;
}

export const API_FORMATS = ['json', 'csv', 'xlsx'] as const;
export type ApiFormat = (typeof API_FORMATS)[number];
export const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** ?format= wins; else an Accept naming text/csv or the XLSX type; else JSON. */
export function negotiateFormat(url: URL, req: IncomingMessage): ApiFormat {
  const asked = url.searchParams.get('format');
  if (asked !== null) {
    if (!(API_FORMATS as readonly string[]).includes(asked)) throw new UsageError(`format must be json, csv or xlsx, not '${asked}'`);
    return asked as ApiFormat;
  }
  const accept = (req.headers.accept ?? '').toLowerCase();
  if (accept.includes('text/csv')) return 'csv';
  if (accept.includes(XLSX_TYPE)) return 'xlsx';
  return 'json';
}

export const booleanParam = (name: string, value: string | null): boolean => {
  if (value === null) return false;
  if (['1', 'true', 'yes', ''].includes(value)) return true;
  if (['0', 'false', 'no'].includes(value)) return false;
  throw new UsageError(`${name} must be true or false, not '${value}'`);
};

export function csvOptions(url: URL): CsvOptions {
  const raw = url.searchParams.get('delimiter') ?? undefined;
  const delimiter = parseDelimiter(raw);
  if (!delimiter) throw new UsageError(`delimiter must be ',', ';' or tab, not '${raw}'`);
  return { delimiter, bom: booleanParam('bom', url.searchParams.get('bom')) };
}

export const MAX_PAGE = 10_000;

/** ?limit=N&cursor=C: a page; neither: the whole report, streamed. */
export function pageOf(url: URL): { limit?: number; cursor?: string } {
  const limitText = url.searchParams.get('limit');
  const cursor = url.searchParams.get('cursor') ?? undefined;
  if (limitText === null) return cursor === undefined ? {} : { limit: 1000, cursor };
  const limit = Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw new UsageError(`limit must be an integer from 1 to ${MAX_PAGE}`);
  return cursor === undefined ? { limit } : { limit, cursor };
}

/**
 * One daemon answers for its own PROVIDER_ENV only: a sandbox daemon's token must not read or act
 * on production rows, even when both share one database. `env` may repeat it, nothing else.
 */
export function environmentOf(url: URL, config: Config): Config['PROVIDER_ENV'] {
  const env = url.searchParams.get('env');
  if (env !== null && env !== config.PROVIDER_ENV) {
    throw new ForbiddenEnvironment(`this daemon serves ${config.PROVIDER_ENV}; ask the ${env} daemon`);
  }
  return config.PROVIDER_ENV;
}

export class ForbiddenEnvironment extends Error {
  override readonly name = 'ForbiddenEnvironment';
}

/**
 * A request refused with a status of its own (413 a body over its limit, 404, 409, 415): thrown by
 * a handler so that the refusal is answered and logged as every other one is (answerBadRequest).
 * `unread`: the body was not read; the rest is dropped and the connection closed after the answer.
 */
export class RequestRefused extends Error {
  override readonly name = 'RequestRefused';
  constructor(readonly status: number, message: string, readonly unread = false) {
    super(message);
  }
}

/**
 * Turns validation errors into 400 / 403 answers (and RequestRefused into its own status), told to
 * `refused` for a log line; anything else goes on to the router's 500.
 */
export function answerBadRequest(res: ServerResponse, error: unknown, refused?: (status: number, message: string) => void): void {
  if (error instanceof UsageError) {
    // The report modules name their options as the CLI spells them (`--since must be ...`).
    const message = error.message.replace(/(^|\s)--(?=[a-z])/g, '$1');
    refused?.(400, message);
    return sendJson(res, 400, { error: message });
  }
  if (error instanceof ForbiddenEnvironment) {
    refused?.(403, error.message);
    return sendJson(res, 403, { error: error.message });
  }
  if (error instanceof RequestRefused) {
    refused?.(error.status, error.message);
    if (error.unread) res.req.resume();
    return sendJson(res, error.status, { error: error.message }, error.unread);
  }
  throw error;
}
