import path from 'node:path';
import type { Registry } from 'prom-client';
import { describeDatabaseUrl } from '../db/database-url.js';
import type { Config } from '../config/schema.js';
import { ConfigError } from '../config/load.js';
import { openDatabase, type Database, type LedgerAccess } from '../db/database.js';
import { applyMigrations, ledgerSchemaStatus } from '../ledger/migrate.js';
import type { Logger } from '../log/logger.js';
import { createRegistry } from '../metrics/registry.js';
import { createMetrics, type Metrics } from './metrics.js';
import { Shutdown } from '../lifecycle/shutdown.js';

/**
 * What every command and component receives: built once by the composition root and passed down
 * explicitly. Nothing in src/ opens a connection at import time.
 */
export interface AppContext {
  config: Config;
  log: Logger;
  database: Database;
  /** The private registry /metrics serves. */
  registry: Registry;
  /** Every metric, built once on `registry`. */
  metrics: Metrics;
  shutdown: Shutdown;
}

export interface OpenContextOptions {
  migrate?: boolean;
  defaultMetrics?: boolean;
  /** How a command may use the embedded ledger when DATABASE_URL is unset (db/database.ts). */
  access?: LedgerAccess;
  /** The command's shutdown (commands/command.ts); a context of its own when absent (tests). */
  shutdown?: Shutdown;
}

export async function openContext(config: Config, log: Logger, options: OpenContextOptions = {}): Promise<AppContext> {
  const shutdown = options.shutdown ?? new Shutdown(log, config.SHUTDOWN_TIMEOUT_MS);
  const database = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.RECON_DATA_DIR,
    poolMax: config.DB_POOL_MAX,
    ...(options.access ? { access: options.access } : {}),
    log,
  }).catch((error: unknown) => {
    throw config.DATABASE_URL === undefined ? (dataDirRefused(error, config.RECON_DATA_DIR) ?? error) : error;
  });
  // Registered first so it closes last.
  shutdown.register('database', () => database.close());
  if (config.DATABASE_URL !== undefined) await probeDatabase(database, config.DATABASE_URL, shutdown);
  if (config.PAYOUT_REFERENCE_PATTERN !== undefined) await checkReferencePattern(database, config.PAYOUT_REFERENCE_PATTERN, shutdown);
  const migrating = options.access !== 'reader' && (options.migrate ?? true);
  if (migrating) await applyMigrations(database, log, shutdown.signal);
  // `migrate` itself (creator, migrate: false) applies them next.
  else if (options.access !== 'creator') {
    // Read commands never change the schema (a read-only database role must work), nor does a
    // command told not to (MIGRATE_ON_START=false): they refuse when it is behind rather than work
    // on tables that may not be what this version expects ("relation ... does not exist", or a
    // poll reported as held by another process).
    const schema = await ledgerSchemaStatus(database);
    if (schema.state === 'behind') {
      await shutdown.run('schema behind');
      throw new Error(options.access === 'reader'
        ? "the ledger's schema is behind this version of bnpl-recon: run 'bnpl-recon migrate' (or start the daemon) first; read commands never apply migrations"
        : "the ledger's schema is behind this version of bnpl-recon and MIGRATE_ON_START=false: run 'bnpl-recon migrate' first");
    }
    if (schema.state === 'incompatible') {
      await shutdown.run('schema unknown');
      throw new Error(schema.reason);
    }
  }
  shutdown.throwIfStopping();
  const registry = createRegistry({ defaultMetrics: options.defaultMetrics ?? false });
  const metrics = createMetrics(registry, database, config.PROVIDER_ENV);
  return { config, log, database, registry, metrics, shutdown };
}

/**
 * One round trip before anything else, so an unreachable or refused database fails the command with
 * a message that names DATABASE_URL and where it points (never its password), not with a bare
 * ECONNREFUSED from deep inside the migrator.
 */
async function probeDatabase(database: Database, url: string, shutdown: Shutdown): Promise<void> {
  try {
    await database.sql`select 1`;
  } catch (error) {
    await shutdown.run('database unreachable');
    const reason = (error as Error).message ?? String(error);
    throw new Error(`cannot use the database named by DATABASE_URL (${describeDatabaseUrl(url)}): ${reason}`, { cause: error });
  }
}

/** SQLSTATE invalid_regular_expression. */
const INVALID_REGULAR_EXPRESSION = '2201B';

/**
 * PAYOUT_REFERENCE_PATTERN is matched by Postgres (ledger/payout-credits.ts), whose regular
 * expressions are not JavaScript's: `(?<ref>PO)` and `\p{Lu}` compile in JavaScript and are refused
 * by Postgres ("quantifier operand invalid", "invalid escape \ sequence"), while Postgres's
 * `(?i)^po` is refused by JavaScript. So only Postgres can tell, and it is asked once here, before
 * anything runs: otherwise `reconcile` exits 1 with an error naming no setting and every pass of
 * `start` fails, where docs/settings.md promises exit 2 naming the setting.
 */
async function checkReferencePattern(database: Database, pattern: string, shutdown: Shutdown): Promise<void> {
  try {
    await database.sql`select '' ~ ${pattern}::text`;
  } catch (error) {
    if ((error as { code?: unknown }).code !== INVALID_REGULAR_EXPRESSION) throw error;
    await shutdown.run('invalid setting');
    throw new ConfigError(`invalid setting PAYOUT_REFERENCE_PATTERN: not a Postgres regular expression: ${(error as Error).message}`, 'PAYOUT_REFERENCE_PATTERN');
  }
}

// A refusal, or a path that cannot be a directory (a file where it or a parent should be).
const REFUSED = new Set(['EACCES', 'EPERM', 'EROFS', 'EEXIST', 'ENOTDIR']);

/**
 * The embedded ledger lives under RECON_DATA_DIR (db/embedded.ts creates it): when this user may not
 * create or write it, that is the setting to change (exit 2 naming it), not a failure at run time
 * (exit 1 with "could not start the embedded Postgres ... EACCES, mkdir ..."). Undefined for any
 * other error, or a refusal on a path outside RECON_DATA_DIR.
 */
function dataDirRefused(error: unknown, dataDir: string): ConfigError | undefined {
  const dir = path.resolve(dataDir);
  for (let e = error as (NodeJS.ErrnoException & { cause?: unknown }) | undefined; e instanceof Error; e = e.cause as typeof e) {
    if (e.code === undefined || !REFUSED.has(e.code) || typeof e.path !== 'string') continue;
    const refused = path.resolve(e.path);
    const inside = (a: string, b: string) => a === b || a.startsWith(`${b}${path.sep}`);
    if (!inside(refused, dir) && !inside(dir, refused)) continue;
    return new ConfigError(
      e.code === 'EEXIST' || e.code === 'ENOTDIR'
        ? `invalid setting RECON_DATA_DIR: ${dir} cannot be a directory (${e.code}, ${e.syscall ?? 'mkdir'} ${refused}: a file is in the way): point RECON_DATA_DIR at a directory, or set DATABASE_URL`
        : `invalid setting RECON_DATA_DIR: this user (uid ${process.getuid?.() ?? '?'}) cannot create or write ${dir} (${e.code}, ${e.syscall ?? 'access'} ${refused}): point RECON_DATA_DIR at a directory it may write, or set DATABASE_URL`,
      'RECON_DATA_DIR',
    );
  }
  return undefined;
}
