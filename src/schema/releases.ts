import { bigint, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * What each `migrate` left the schema needing (ledger/schema-compat.ts): one row per migrating
 * release. A release that finds migrations it does not know reads the newest row to decide whether
 * it can still work on the schema (an expand-only change) or must not be ready (a contract one).
 */
export const schemaReleases = pgTable('schema_releases', {
  /** The `when` (journal) of the newest migration the migrating release applied: drizzle's created_at. */
  migrationWhen: bigint('migration_when', { mode: 'number' }).primaryKey(),
  migrationTag: text('migration_tag').notNull(),
  /** The newest contract migration: a release must know it to work on this schema. */
  requiresWhen: bigint('requires_when', { mode: 'number' }).notNull(),
  requiresTag: text('requires_tag').notNull(),
  /** The migrating release: version and commit. */
  release: text('release').notNull(),
  recordedAt: timestamp('recorded_at', { withTimezone: true, precision: 6 }).notNull().defaultNow(),
});
