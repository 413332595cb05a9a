import type { Registry } from 'prom-client';
import { describeDatabaseUrl } from '../db/database-url.js';
import type { Config } from '../config/schema.js';
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
  });
  // Registered first so it closes last.
  shutdown.register('database', () => database.close());
  if (config.DATABASE_URL !== undefined) await probeDatabase(database, config.DATABASE_URL, shutdown);
  if (options.access === 'reader') {
    // Read commands never change the schema (a read-only database role must work): they refuse
    // when it is behind rather than read tables that may not be what this version expects.
    const schema = await ledgerSchemaStatus(database);
    if (schema.state === 'behind') {
      await shutdown.run('schema behind');
      throw new Error("the ledger's schema is behind this version of bnpl-recon: run 'bnpl-recon migrate' (or start the daemon) first; read commands never apply migrations");
    }
    if (schema.state === 'incompatible') {
      await shutdown.run('schema unknown');
      throw new Error(schema.reason);
    }
  } else if (options.migrate ?? true) await applyMigrations(database, log, shutdown.signal);
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
