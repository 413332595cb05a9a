import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { databaseUrlProblem } from '../db/database-url.js';
import { Cron, CronPattern } from 'croner';
import { contractTermsFromSetting } from '../payout-reports/contract-terms.js';
import { documentedColumn } from '../payout-reports/columns.js';
import { addressListError, splitList } from './addresses.js';
import { operatorTokensSchema } from './operator-tokens.js';
import { weakSecretReason } from './secret-strength.js';

/**
 * Every setting bnpl-recon reads, parsed once at boot. Units are in the names. The README's
 * settings table is the user-facing copy of this file: change both together.
 */

// The spec's whole retry window: 5 retries with exponential backoff. The provider does not publish
// the base delay; public receivers see roughly 1 min, 2, 4, 8, 16 min (~31 min in all), so the default
// grace is one hour: no missed-webhook alarm while the provider may still be retrying.
/** How long a completed payout may wait for its bank credit: a SEPA credit transfer arrives the next business day, and a weekend adds two. */
export const DEFAULT_PAYOUT_SETTLEMENT_DAYS = 3;

// INVOICE_PAYOUT_DAYS' default: the setting's comment below says why.
export const DEFAULT_INVOICE_PAYOUT_DAYS = 7;
/**
 * PAYOUT_REPORT_MAX_FILE_BYTES: a report is parsed whole in the importing process (the daemon's,
 * for the inbox and the upload), at about 17 times its size in heap (a 7.8 MB CSV of 100,000 rows
 * 140 MB, a 24 MB one 407 MB): 8 MiB stays well inside the daemon's 512 MB heap of the Kubernetes
 * manifest, and a report lists one payout's invoices at some hundred bytes a row.
 */
export const DEFAULT_PAYOUT_REPORT_MAX_FILE_BYTES = 8 * 1024 * 1024;

/**
 * PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS: how long one statement of a payout report's import may run
 * or wait (payout-import/import.ts). The slowest legitimate one, storing a report of
 * PAYOUT_REPORT_MAX_FILE_BYTES (100,000 rows), took 10.6-13.7 s for the whole import on a 2-core
 * machine busy with a test run: 120 s leaves room for a loaded database and still frees a lock
 * wait's connection and answers the upload within minutes.
 */
export const DEFAULT_PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS = 120;

export const DEFAULT_WEBHOOK_GRACE_SECONDS = 3600;

const booleanString = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

/**
 * How schedules are read (jobs/job.ts runs them so): in UTC, and a day of month with a day of week
 * both restricted means both, as node-cron read it ('0 6 1-7 * MON': the first Monday), where
 * croner's default runs on either (every day of 1-7 and every Monday).
 */
export const CRON_OPTIONS = { timezone: 'UTC', domAndDow: true } as const;

/** Five fields, or six with seconds first; read in UTC (jobs/job.ts); one that never fires is refused. */
const cronExpression = z.string().superRefine((v, ctx) => {
  const fields = v.trim().split(/\s+/).length;
  if (!v.trim().startsWith('@') && fields !== 5 && fields !== 6) {
    ctx.addIssue({ code: 'custom', message: `not a valid cron expression: ${fields} fields, where five (or six, seconds first) are needed` });
    return;
  }
  try {
    new CronPattern(v, 'UTC');
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: `not a valid cron expression: ${(error as Error).message.replace(/^CronPattern: /, '')}` });
    return;
  }
  // A day that does not exist ('0 0 30 2 *', the 31st of a 30-day month): the job would never run,
  // and nothing would say so. No callback, so nothing is scheduled.
  const probe = new Cron(v, CRON_OPTIONS);
  const next = probe.nextRun();
  probe.stop();
  if (next === null) ctx.addIssue({ code: 'custom', message: `'${v}' never fires (a date that does not exist, read in UTC)` });
});

/**
 * A number written as one: coercion alone reads a blank value (`PORT=" "`) as 0, a random port, and
 * `HTTP_MAX_RETRIES=" "` as no retries; a blank or non-numeric setting is refused instead.
 */
const numberSetting = <T extends z.ZodType<number>>(inner: T) =>
  z.preprocess((v) => (typeof v === 'string' && /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(v) ? Number(v) : v), inner);

const port = numberSetting(z.number().int().min(0).max(65535));

const csvList = z
  .string()
  .transform((v) => v.split(',').map((s) => s.trim()).filter((s) => s.length > 0));

const positiveNumber = z.number().int().positive();
const positiveInt = numberSetting(positiveNumber);

// Node's timers hold at most 2^31 - 1 ms (about 24.8 days): a longer delay fires after 1 ms (a
// TimeoutOverflowWarning), so a shutdown deadline passed at once and a key refresh ran every ms.
const MAX_TIMER_MS = 2_147_483_647;
const milliseconds = numberSetting(positiveNumber.max(MAX_TIMER_MS, { error: (issue) => `${String(issue.input)} ms is longer than a timer holds (${MAX_TIMER_MS} ms, about 24.8 days)` }));
const seconds = numberSetting(positiveNumber.max(Math.floor(MAX_TIMER_MS / 1000), { error: (issue) => `${String(issue.input)} s is longer than a timer holds (${Math.floor(MAX_TIMER_MS / 1000)} s, about 24.8 days)` }));
// A wait in days goes into the reconciliation's SQL as an integer interval: ten years is more than
// any payout cadence, and far inside what Postgres computes without 'out of range' failing every pass.
const days = numberSetting(positiveNumber.max(3650, { error: (issue) => `${String(issue.input)} days is more than ten years` }));

/** A shared secret: refused when a placeholder or guessable (secret-strength.ts); the message never quotes it. */
const strongSecret = z.string().superRefine((value, ctx) => {
  const weak = weakSecretReason(value);
  if (weak !== undefined) ctx.addIssue({ code: 'custom', message: weak });
});

/** Comma-separated secrets (rotation keeps the old one beside the new), each strong. */
const strongSecretList = csvList.superRefine((entries, ctx) => {
  for (const [i, entry] of entries.entries()) {
    const weak = weakSecretReason(entry);
    if (weak !== undefined) ctx.addIssue({ code: 'custom', message: entries.length > 1 ? `entry ${i + 1} ${weak}` : weak });
  }
});

/** Comma-separated IP addresses and CIDR ranges; anything else is refused, naming the entry. */
const addressList = csvList.superRefine((entries, ctx) => {
  const error = addressListError(entries);
  if (error) ctx.addIssue({ code: 'custom', message: error });
});

// One host or several (h1:5432,h2:5432), as libpq and postgres.js read it (db/database-url.ts).
const postgresUrl = z.string().superRefine((value, ctx) => {
  const problem = databaseUrlProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** CONTRACT_TERMS: inline JSON or a file's path, read and validated at start (docs/contract-terms.md). */
const contractTerms = z.string().transform((value, ctx) => {
  try {
    return contractTermsFromSetting(value, (file) => readFileSync(file, 'utf8'));
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
    return z.NEVER;
  }
});

/** PAYOUT_REPORT_COLUMNS: a JSON object from a file's own headers to the documented column names. */
const payoutReportColumns = z.string().transform((value, ctx) => {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'not a JSON object (expected {"Our header": "Doc No", ...})' });
    return z.NEVER;
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    ctx.addIssue({ code: 'custom', message: 'not a JSON object (expected {"Our header": "Doc No", ...})' });
    return z.NEVER;
  }
  for (const [ours, documented] of Object.entries(json)) {
    if (typeof documented !== 'string' || documentedColumn(documented) === undefined) {
      ctx.addIssue({ code: 'custom', message: `maps ${JSON.stringify(ours)} to ${JSON.stringify(documented)}, which is no documented payout report column` });
      return z.NEVER;
    }
  }
  return json as Record<string, string>;
});

/** An IANA time zone name (Region/City or UTC) that this Node's Intl knows, canonicalised. */
const ianaTimeZone = z
  .string()
  .regex(/^(?:UTC|[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+){1,2})$/i, { message: 'must be an IANA time zone name such as Europe/Berlin or UTC' })
  .transform((v, ctx) => {
    try {
      return new Intl.DateTimeFormat('en', { timeZone: v }).resolvedOptions().timeZone;
    } catch {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: `unknown time zone '${v}' (an IANA name such as Europe/Berlin or UTC)` });
      return z.NEVER;
    }
  });

export const environmentSchema = z.enum(['sandbox', 'production']);
export type ProviderEnvironment = z.infer<typeof environmentSchema>;

export const configShape = {
  DATABASE_URL: postgresUrl.optional(),
  RECON_DATA_DIR: z.string().min(1).default('./data'),
  PROVIDER_ENV: environmentSchema.default('sandbox'),
  // An http(s) address: 'localhost:8090' parses as a URL of scheme 'localhost:', and failed later as
  // "Invalid URL" (exit 1) instead of here naming the setting (exit 2).
  PROVIDER_BASE_URL: z.string().url().refine((value) => {
    const url = new URL(value);
    return /^https?:$/.test(url.protocol) && url.hostname !== '';
  }, {
    error: 'must be an http:// or https:// address with a host (e.g. https://api.provider.example)',
  }).optional(),
  PROVIDER_API_KEY: z.string().min(1).optional(),
  PROVIDER_WEBHOOK_PATH_PREFIX: z.string().default(''),
  WEBHOOK_SECRET: strongSecretList.optional(),
  WEBHOOK_SIGNATURE_HEADER: z.string().min(1).default('x-service-signature').transform((v) => v.toLowerCase()),
  // `spec` (the spec's addresses for PROVIDER_ENV), or addresses and CIDR ranges.
  WEBHOOK_ALLOWED_IPS: z
    .string()
    .superRefine((value, ctx) => {
      if (value.trim() === 'spec') return;
      const entries = splitList(value);
      const error = entries.length === 0 ? 'empty list' : addressListError(entries);
      if (error) ctx.addIssue({ code: 'custom', message: `${error} (expected 'spec' or addresses and CIDR ranges)` });
    })
    .optional(),
  WEBHOOK_KEYS_REFRESH_SECONDS: seconds.default(3600),
  WEBHOOK_KEYS_MIN_REFETCH_SECONDS: seconds.default(30),
  // A secret the provider stopped returning verifies this much longer (deliveries signed just
  // before a rotation); short, so a rotation after a leak takes effect within minutes.
  WEBHOOK_KEYS_OVERLAP_SECONDS: seconds.default(600),
  WEBHOOK_MAX_BODY_BYTES: positiveInt.default(1024 * 1024),
  // A delivery not committed this long after its request began is answered 503 (the provider gives
  // up after 5 s and retries), and readiness turns false while commits wait longer than this.
  WEBHOOK_ACK_DEADLINE_MS: numberSetting(positiveNumber.max(4500)).default(3000),
  TRUSTED_PROXIES: addressList.default([]),
  PORT: port.default(8080),
  // How long a client may take to send a request's headers, and the whole request, on PORT and
  // METRICS_PORT: a slow client is cut off then (408) instead of holding a connection.
  SERVER_HEADERS_TIMEOUT_MS: milliseconds.default(5000),
  SERVER_REQUEST_TIMEOUT_MS: milliseconds.default(10000),
  METRICS_PORT: port.default(9464),
  HOST: z.string().default('0.0.0.0'),
  POLL_SCHEDULE: cronExpression.default('*/5 * * * *'),
  RECONCILE_SCHEDULE: cronExpression.default('*/5 * * * *'),
  RATE_LIMIT_RPS: numberSetting(z.number().positive().max(500, { error: (issue) => `${String(issue.input)} is above the provider's rate limit of 500 requests per second per address (sandbox and production alike): a higher rate only earns 429s and their waits` })).default(450),
  POLL_PAGE_SIZE: positiveInt.default(100),
  POLL_PAGE_PARAM: z.string().min(1).default('page'),
  POLL_PAGE_SIZE_PARAM: z.string().min(1).default('per_page'),
  POLL_CONCURRENCY: positiveInt.default(8),
  HTTP_CONNECT_TIMEOUT_MS: milliseconds.default(5000),
  HTTP_BODY_TIMEOUT_MS: milliseconds.default(30000),
  HTTP_MAX_RETRIES: numberSetting(z.number().int().min(0)).default(6),
  // No timer: a wait the reconciliation's SQL computes. A year is far past any webhook retry window.
  WEBHOOK_GRACE_SECONDS: numberSetting(positiveNumber.max(31_536_000, { error: (issue) => `${String(issue.input)} s is more than a year` })).default(DEFAULT_WEBHOOK_GRACE_SECONDS),
  PAYOUT_SETTLEMENT_DAYS: days.default(DEFAULT_PAYOUT_SETTLEMENT_DAYS),
  PAYOUT_SOURCE_IBANS: csvList.default([]),
  // The merchant's own accounts that receive payouts: payout_not_on_statement judges a payout only
  // on these accounts' statements (unset: the accounts payout credits were booked to).
  PAYOUT_ACCOUNT_IBANS: csvList.default([]),
  // How long a factored (or created) invoice may wait for a completed payout that lists it before it
  // is invoice_not_paid_out. The provider documents no payout cadence, only that a processed payout
  // usually reaches the bank within one business day (provider-merchant-docs.md, "Payouts are net
  // amounts"); the ledger sees about one payout a day, so an invoice is normally listed within a day or two. Seven days
  // covers a weekend with a public holiday on each side and a payout run missed, without leaving
  // an unpaid invoice unnoticed for longer than a week.
  INVOICE_PAYOUT_DAYS: days.default(DEFAULT_INVOICE_PAYOUT_DAYS),
  // The time zone the page shows dates and times in (an IANA zone such as Europe/Berlin); reports
  // and downloads stay in UTC. Canonicalised (utc -> UTC) so the page gets a name Intl accepts.
  DISPLAY_TIME_ZONE: ianaTimeZone.default('UTC'),
  OPERATOR_TOKEN: strongSecret.optional(),
  // Named operator tokens (name:token,…): the acknowledgement history records the name.
  OPERATOR_TOKENS: operatorTokensSchema.default([]),
  // A statement or payout report uploaded through the operator API (the page's Upload) larger than
  // this is refused (413) before it is imported; a statement also by STATEMENT_MAX_FILE_BYTES,
  // whichever is smaller. The file is written to a temporary file as it arrives, never held whole.
  // 32 MiB holds a CAMT.053 of some 20,000 entries (about 1.5 KB each); larger files go to the inbox.
  OPERATOR_UPLOAD_MAX_BYTES: positiveInt.default(32 * 1024 * 1024),
  MIGRATE_ON_START: booleanString.default(true),
  SHUTDOWN_TIMEOUT_MS: milliseconds.default(10000),
  DB_POOL_MAX: positiveInt.default(10),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // Poller: a ceiling on pages per run so a server that never ends a list cannot loop us
  // forever (100,000 pages of 100 = 10 million orders), and how often the poll-lock holder checks
  // that its lock (its database session) is still there.
  POLL_MAX_PAGES: positiveInt.default(100_000),
  POLL_LOCK_HEARTBEAT_MS: milliseconds.default(5000),
  // Payout reconciliation: a bank credit whose SEPA reference matches this Postgres regular
  // expression is a payout credit even when it comes from an IBAN not in PAYOUT_SOURCE_IBANS
  // (e.g. '^PO[0-9]{16}$' for the simulator). Unset: only the IBANs decide. Postgres checks it when
  // a command opens the ledger (daemon/context.ts): JavaScript's RegExp is no judge of a Postgres
  // regular expression, accepting `(?<ref>PO)` and `\p{Lu}` that Postgres refuses and refusing
  // Postgres's `(?i)^po`.
  PAYOUT_REFERENCE_PATTERN: z.string().min(1).optional(),
  // Statement imports: a larger file is refused (and moved to inbox/failed/), and so is a file with
  // a line over the amount ceiling (10 billion in cents by default: far above any payout, far
  // below what a misread decimal produces).
  STATEMENT_MAX_FILE_BYTES: positiveInt.default(128 * 1024 * 1024),
  STATEMENT_MAX_AMOUNT_CENTS: numberSetting(positiveNumber.max(Number.MAX_SAFE_INTEGER)).default(1_000_000_000_000),
  // The inbox imports each file in a child process with this heap limit and time limit: a file
  // that exhausts either is moved to inbox/failed/, and the daemon goes on answering.
  STATEMENT_IMPORT_MAX_MEMORY_MB: numberSetting(positiveNumber.min(64)).default(1024),
  // CSV statements (src/statements/csv.ts): a profile file of the user's for a bank the built-in
  // profiles do not know (docs/how-it-decides.md, "CSV profiles"), and the currency of accounts whose CSV exports
  // name none ('IBAN=CHF,IBAN=CZK'); a CSV naming no currency for an account not listed is refused.
  STATEMENT_CSV_PROFILE: z.string().min(1).optional(),
  STATEMENT_ACCOUNT_CURRENCIES: csvList
    .transform((entries, ctx) => {
      const out: Record<string, string> = {};
      for (const entry of entries) {
        const m = /^([A-Za-z0-9 '*/-]+?)\s*=\s*([A-Za-z]{3})$/.exec(entry);
        if (!m) {
          ctx.addIssue({ code: 'custom', message: `'${entry}' is not ACCOUNT=CURRENCY (an ISO 4217 code)` });
          return z.NEVER;
        }
        out[m[1]!.replace(/\s+/g, '').toUpperCase()] = m[2]!.toUpperCase();
      }
      return out;
    })
    .default({}),
  STATEMENT_IMPORT_TIMEOUT_SECONDS: seconds.default(1800),
  // The inbox's --accept-unbalanced: a statement whose balances disagree with its bookings is
  // stored with a statement_unbalanced finding instead of being moved to inbox/failed/.
  STATEMENT_ACCEPT_UNBALANCED: booleanString.default(false),
  // The delivery ledger's monthly partitions (src/ledger/partitions.ts): how many months after the
  // current one exist ahead, and how many full months before the current one are kept (unset: all,
  // forever); older months are exported to DELIVERY_ARCHIVE_DIR (unset: RECON_DATA_DIR/archive)
  // and dropped.
  DELIVERY_PARTITIONS_AHEAD: numberSetting(positiveNumber.max(120)).default(3),
  DELIVERY_RETENTION_MONTHS: positiveInt.optional(),
  DELIVERY_ARCHIVE_DIR: z.string().min(1).optional(),
  // Payout reports: the contract their deductions are judged against (unset: reported, not judged),
  // and a map for a file whose headers are not the documented names.
  CONTRACT_TERMS: contractTerms.optional(),
  PAYOUT_REPORT_COLUMNS: payoutReportColumns.default({}),
  // A payout report file larger than this is refused before it is read (the inbox moves it to payout-inbox/failed/).
  PAYOUT_REPORT_MAX_FILE_BYTES: positiveInt.default(DEFAULT_PAYOUT_REPORT_MAX_FILE_BYTES),
  // A payout report import (upload, inbox) whose statement runs or waits longer than this (a lock
  // held on a table it writes) is stopped, rolled back whole. At most what Postgres's
  // statement_timeout holds (2^31-1 ms), which enforces it.
  PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS: numberSetting(positiveNumber.max(2_147_483)).default(DEFAULT_PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS),
  // `start` in production refuses to run on an embedded, per-process ledger unless this says so: a
  // pod's embedded database is lost with the pod.
  EMBEDDED_DATABASE_IN_PRODUCTION: booleanString.default(false),
};

export const configSchema = z.object(configShape).superRefine((config, ctx) => {
  // The API key travels in the Api-Token header: in production only over TLS, or to loopback (a
  // local TLS-terminating proxy). Sandbox over plain http only warns (see provider/client.ts).
  if (config.PROVIDER_ENV === 'production' && config.PROVIDER_BASE_URL) {
    const url = new URL(config.PROVIDER_BASE_URL);
    if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
      ctx.addIssue({ code: 'custom', path: ['PROVIDER_BASE_URL'], message: 'plain http would send PROVIDER_API_KEY in clear in production: use https (or a loopback proxy)' });
    }
  }
  // node:http refuses a headers timeout longer than the request timeout.
  if (config.SERVER_HEADERS_TIMEOUT_MS > config.SERVER_REQUEST_TIMEOUT_MS) {
    ctx.addIssue({ code: 'custom', path: ['SERVER_HEADERS_TIMEOUT_MS'], message: `is longer than SERVER_REQUEST_TIMEOUT_MS (${config.SERVER_REQUEST_TIMEOUT_MS})` });
  }
  // The shared token identifies its holder as 'api': a person's named token equal to it would make
  // them 'api' (and let them name themselves on acknowledgements), so every token is different.
  const shared = config.OPERATOR_TOKEN;
  const twin = shared === undefined ? undefined : config.OPERATOR_TOKENS.find((entry) => entry.token === shared);
  if (twin !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['OPERATOR_TOKEN'], message: `is also the token of '${twin.name}' in OPERATOR_TOKENS: each person needs their own` });
  }
  // 0 asks the OS for a free port (the tests' way), so two zeros are two different ports.
  if (config.PORT !== 0 && config.PORT === config.METRICS_PORT) {
    ctx.addIssue({ code: 'custom', path: ['METRICS_PORT'], message: `is the same port as PORT (${config.PORT}); /metrics needs its own` });
  }
});

/** Loopback hosts, where plain http carries the API key no further than this machine. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export type Config = z.infer<typeof configSchema>;
