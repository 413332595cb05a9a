import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { packageFile } from '../package/package-root.js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import type { Database } from '../db/database.js';
import type { Logger } from '../log/logger.js';
import { lockKey } from '../jobs/lock-keys.js';
import { tryAcquireSessionLock } from '../jobs/session-lock.js';

export const MIGRATIONS_FOLDER = fileURLToPath(packageFile('migrations'));

// drizzle's migrator takes no lock: two replicas booting together could both apply a migration.
// The migrations' session lock (jobs/lock-keys.ts), waited for, serialises them.
export async function applyMigrations(database: Database, log: Logger): Promise<void> {
  const lock = await tryAcquireSessionLock(database, lockKey('migrations'), { name: 'migrations', log, heartbeatMs: 0, wait: true });
  if (!lock) throw new Error('could not take the migrations lock');
  try {
    await migrate(database.db, { migrationsFolder: MIGRATIONS_FOLDER });
    log.info('migrations applied');
  } finally {
    await lock.release();
  }
}

interface Journal {
  entries: { tag: string }[];
}

/** True when every migration in the folder is recorded as applied: readiness needs it. */
export async function migrationsAreCurrent(database: Database): Promise<boolean> {
  const journal = JSON.parse(await readFile(`${MIGRATIONS_FOLDER}/meta/_journal.json`, 'utf8')) as Journal;
  const rows = await database.sql<{ applied: string }[]>`
    select count(*)::text as applied
    from information_schema.tables t
    where t.table_schema = 'drizzle' and t.table_name = '__drizzle_migrations'`;
  if (rows[0]?.applied !== '1') return journal.entries.length === 0;
  const applied = await database.sql<{ n: string }[]>`select count(*)::text as n from drizzle.__drizzle_migrations`;
  return Number(applied[0]?.n ?? 0) >= journal.entries.length;
}
