import { readdirSync, readFileSync } from 'node:fs';
import { MIGRATIONS_FOLDER } from '../../src/ledger/migrate.js';
import type { Database } from '../../src/db/database.js';

/**
 * Applies the committed migration files whose names `pick` accepts, in order, statement by
 * statement as drizzle's migrator splits them: a test builds a ledger as an older release left it
 * (the files before a migration), writes rows as that release did, then applies the rest.
 */
export async function applyMigrationFiles(db: Pick<Database, 'sql'>, pick: (file: string) => boolean): Promise<void> {
  const files = readdirSync(MIGRATIONS_FOLDER).filter((f) => /^\d{4}_.*\.sql$/.test(f)).sort().filter(pick);
  for (const file of files) {
    for (const statement of readFileSync(`${MIGRATIONS_FOLDER}/${file}`, 'utf8').split('--> statement-breakpoint')) {
      if (statement.trim() !== '') await db.sql.unsafe(statement);
    }
  }
}
