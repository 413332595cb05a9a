import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageFile } from '../package/package-root.js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import type { Database } from '../db/database.js';
import type { Logger } from '../log/logger.js';
import { lockKey } from '../jobs/lock-keys.js';
import { tryAcquireSessionLock } from '../jobs/session-lock.js';
import { readJournal, recordSchemaRelease, schemaStatus, type JournalEntry, type SchemaStatus } from './schema-compat.js';
import { setTimeout as sleep } from 'node:timers/promises';

export const MIGRATIONS_FOLDER = fileURLToPath(packageFile('migrations'));

let journal: JournalEntry[] | undefined;
/** This release's migrations, in order (read once). */
export function releaseJournal(): JournalEntry[] {
  journal ??= readJournal(MIGRATIONS_FOLDER);
  return journal;
}

async function appliedWhens(database: Database): Promise<Set<number>> {
  const [exists] = await database.sql<{ t: boolean }[]>`select to_regclass('drizzle.__drizzle_migrations') is not null as t`;
  if (!exists?.t) return new Set();
  const rows = await database.sql<{ when: string }[]>`select created_at::text as when from drizzle.__drizzle_migrations`;
  return new Set(rows.map((r) => Number(r.when)));
}

const MIGRATIONS_LOCK_RETRY_MS = 250;

// drizzle's migrator takes no lock: two replicas booting together could both apply a migration.
// The migrations' session lock (jobs/lock-keys.ts), waited for, serialises them.
/**
 * Applies what is pending and returns the tags it applied, in order (empty when none was). While
 * another process holds the migrations lock it tries again every MIGRATIONS_LOCK_RETRY_MS, until
 * `signal` aborts: a replica told to stop while another migrates stops (a blocking
 * pg_advisory_lock would hold it until the other finished).
 */
export async function applyMigrations(database: Database, log: Logger, signal?: AbortSignal): Promise<string[]> {
  let lock = await tryAcquireSessionLock(database, lockKey('migrations'), { name: 'migrations', log, heartbeatMs: 0 });
  if (!lock) log.info('waiting for the migrations lock: another process is applying migrations');
  while (!lock) {
    await sleep(MIGRATIONS_LOCK_RETRY_MS, undefined, signal ? { signal } : {});
    lock = await tryAcquireSessionLock(database, lockKey('migrations'), { name: 'migrations', log, heartbeatMs: 0 });
  }
  try {
    const before = await appliedWhens(database);
    try {
      await migrate(database.db, { migrationsFolder: MIGRATIONS_FOLDER });
    } catch (error) {
      const failure = new MigrationFailedError(error, releaseJournal().filter((e) => !before.has(e.when)));
      log.error({ migration: failure.tag, err: failure.reason }, failure.message);
      throw failure;
    }
    const after = await appliedWhens(database);
    const applied = releaseJournal().filter((e) => after.has(e.when) && !before.has(e.when)).map((e) => e.tag);
    await recordSchemaRelease(database, releaseJournal());
    const status = await schemaStatus(database, releaseJournal());
    if (applied.length > 0) log.info({ applied }, `migrations applied: ${applied.join(', ')}`);
    else log.info({ schema: releaseJournal().at(-1)?.tag }, 'no migrations to apply');
    if (status.state === 'incompatible') log.error({ schema: status.reason }, status.reason);
    else if (status.state === 'newer_compatible') log.warn({ schema: status.reason }, status.reason);
    return applied;
  } finally {
    await lock.release();
  }
}

/**
 * A migration that failed, named with Postgres's reason. drizzle's error says only "Failed query:"
 * and the statement's text, its cause (the reason: "relation … already exists") unsaid, and not which
 * migration the statement belongs to. drizzle applies every pending migration in one transaction, so
 * none of them is applied: the ledger is where it was.
 */
export class MigrationFailedError extends Error {
  override readonly name = 'MigrationFailedError';
  readonly tag: string | undefined;
  readonly reason: string;
  constructor(error: unknown, pending: JournalEntry[]) {
    const query = (error as { query?: unknown }).query;
    const cause = (error as { cause?: unknown }).cause ?? error;
    const code = (cause as { code?: unknown }).code;
    const reason = `${(cause as Error).message ?? String(cause)}${typeof code === 'string' ? ` (SQLSTATE ${code})` : ''}`;
    const tag = typeof query === 'string' ? pending.find((e) => migrationText(e.tag).includes(query.trim()))?.tag : undefined;
    super(`migration ${tag ?? `(one of ${pending.map((e) => e.tag).join(', ') || 'none pending'})`} failed: ${reason}; `
      + 'the pending migrations were rolled back together and none is applied: fix the cause and run migrate again');
    this.tag = tag;
    this.reason = reason;
  }
}

function migrationText(tag: string): string {
  try {
    return readFileSync(path.join(MIGRATIONS_FOLDER, `${tag}.sql`), 'utf8');
  } catch {
    return '';
  }
}

/** Where the ledger's schema stands for this release (ledger/schema-compat.ts). */
export function ledgerSchemaStatus(database: Database): Promise<SchemaStatus> {
  return schemaStatus(database, releaseJournal());
}

/** True when this release can work on the ledger's schema: every migration it has is applied, and any it does not know require nothing it lacks. */
export async function migrationsAreCurrent(database: Database): Promise<boolean> {
  const status = await ledgerSchemaStatus(database);
  return status.state === 'current' || status.state === 'newer_compatible';
}
