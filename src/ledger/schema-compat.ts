import { readFileSync } from 'node:fs';
import type { Database } from '../db/database.js';
import { buildInfo } from '../package/version.js';

/**
 * Which schema a release needs, and whether it can work on the schema it finds.
 *
 * A release ships its migrations (migrations/meta/_journal.json); drizzle records each applied one
 * with the journal's `when` as created_at. Migrations are written expand-then-contract
 * (docs/upgrading.md): an expand migration only adds (tables, nullable or defaulted columns,
 * indexes), so the release before it keeps working on the new schema during a rolling update; a
 * contract migration removes or changes what an earlier release uses, and is listed in
 * CONTRACT_MIGRATIONS. After migrating, a release records in schema_releases the newest contract
 * migration (the oldest migration a release must know to work on this schema). A release that finds
 * migrations it does not know reads that record: it works on the schema if it knows the required
 * migration, and otherwise is not ready and says why.
 */

/** Migrations after which a release that does not know them cannot work on the schema. */
export const CONTRACT_MIGRATIONS: ReadonlySet<string> = new Set([
  '0000_ledger',
  // Moved the applied-once arbiter into webhook_applied_events (the release before wrote to webhook_events).
  '0012_partition_deliveries',
  // Replaced webhook_applied_events' key: the release before's ON CONFLICT (environment, event_key) fails.
  '0014_arbiter_event_day',
]);

export interface JournalEntry {
  tag: string;
  when: number;
}

export function readJournal(folder: string): JournalEntry[] {
  return (JSON.parse(readFileSync(`${folder}/meta/_journal.json`, 'utf8')) as { entries: JournalEntry[] }).entries;
}

/** The newest contract migration of a journal: what the schema requires of a release once it is applied. */
export function requiredMigration(journal: readonly JournalEntry[]): JournalEntry | undefined {
  return [...journal].reverse().find((e) => CONTRACT_MIGRATIONS.has(e.tag)) ?? journal[0];
}

export type SchemaStatus =
  | { state: 'current'; migration: string }
  | { state: 'behind'; reason: string }
  /** Migrations this release does not know, all of them expand-only for it: it works. */
  | { state: 'newer_compatible'; reason: string }
  | { state: 'incompatible'; reason: string };

/** Pure decision: the release's journal against what the database has applied and recorded. */
export function decideSchemaStatus(
  journal: readonly JournalEntry[],
  appliedWhens: readonly number[],
  record: { migrationTag: string; requiresWhen: number; requiresTag: string; release: string } | undefined,
): SchemaStatus {
  const latest = journal.at(-1);
  const known = new Set(journal.map((e) => e.when));
  const unknown = appliedWhens.filter((w) => !known.has(w));
  if (unknown.length === 0) {
    const missing = journal.filter((e) => !appliedWhens.includes(e.when));
    if (missing.length > 0) return { state: 'behind', reason: `migrations pending: ${missing.map((e) => e.tag).join(', ')}` };
    return { state: 'current', migration: latest?.tag ?? 'none' };
  }
  const mine = latest?.tag ?? 'none';
  if (!record) {
    return {
      state: 'incompatible',
      reason: `the ledger's schema has ${unknown.length} migration(s) this release does not know (its newest is ${mine}) and no record of what they require: upgrade this release, or restore the ledger from before that migrate`,
    };
  }
  if (known.has(record.requiresWhen)) {
    return {
      state: 'newer_compatible',
      reason: `the ledger's schema is at ${record.migrationTag} (migrated by ${record.release}); this release (newest ${mine}) knows ${record.requiresTag}, which it requires, so it works on it`,
    };
  }
  return {
    state: 'incompatible',
    reason: `the ledger's schema is at ${record.migrationTag} (migrated by ${record.release}) and requires a release that knows migration ${record.requiresTag}; this release's newest migration is ${mine}: run a newer release, or restore the ledger from before that migrate to roll back`,
  };
}

/** What the database says about its schema, decided against the release's journal. */
export async function schemaStatus(database: Database, journal: readonly JournalEntry[]): Promise<SchemaStatus> {
  const [tables] = await database.sql<{ migrations: boolean; releases: boolean }[]>`
    select to_regclass('drizzle.__drizzle_migrations') is not null as migrations,
           to_regclass('public.schema_releases') is not null as releases`;
  if (!tables?.migrations) return decideSchemaStatus(journal, [], undefined);
  const applied = await database.sql<{ when: string }[]>`select created_at::text as when from drizzle.__drizzle_migrations`;
  const whens = applied.map((r) => Number(r.when));
  let record: { migrationTag: string; requiresWhen: number; requiresTag: string; release: string } | undefined;
  if (tables.releases) {
    const [row] = await database.sql<{ migration_tag: string; requires_when: string; requires_tag: string; release: string }[]>`
      select migration_tag, requires_when::text, requires_tag, release from schema_releases order by migration_when desc limit 1`;
    if (row) record = { migrationTag: row.migration_tag, requiresWhen: Number(row.requires_when), requiresTag: row.requires_tag, release: row.release };
    // A record older than the newest applied migration speaks for an older schema, not this one.
    const newest = Math.max(...whens);
    const [match] = await database.sql<{ n: number }[]>`select count(*)::int as n from schema_releases where migration_when = ${newest}`;
    if ((match?.n ?? 0) === 0) record = undefined;
  }
  return decideSchemaStatus(journal, whens, record);
}

/**
 * After a migrate that left the schema at this release's newest migration: records what it requires.
 * Idempotent; a release older than the schema records nothing (the newer one's record stands).
 */
export async function recordSchemaRelease(database: Database, journal: readonly JournalEntry[]): Promise<void> {
  const latest = journal.at(-1);
  const required = requiredMigration(journal);
  if (!latest || !required) return;
  const info = buildInfo();
  await database.sql`
    insert into schema_releases (migration_when, migration_tag, requires_when, requires_tag, release)
    select ${latest.when}, ${latest.tag}, ${required.when}, ${required.tag}, ${`${info.version} (${info.commit})`}
    where (select max(created_at) from drizzle.__drizzle_migrations) = ${latest.when}
    on conflict (migration_when) do nothing`;
}
