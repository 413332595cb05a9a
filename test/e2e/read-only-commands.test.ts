import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqlClient } from '../../src/db/database.js';
import { createTestDatabase, serverUrl, type TestDatabase } from '../helpers/database.js';
import { cleanEnv, runCli } from './cli.js';

/**
 * `report` and `discrepancy ack` never change the schema: they work through a role that may only
 * read and write rows, and refuse (naming `migrate`) when the schema is behind instead of applying it.
 */
const role = `ro_${randomBytes(4).toString('hex')}`;
let migrated: TestDatabase;
let empty: TestDatabase;

function asRole(db: TestDatabase): string {
  const url = new URL(db.url);
  url.username = role;
  url.password = 'ro-password';
  return url.toString();
}

beforeAll(async () => {
  migrated = await createTestDatabase('read_only_commands');
  empty = await createTestDatabase('read_only_commands_empty', { migrate: false });
  const admin = createSqlClient(serverUrl(), { poolMax: 1 });
  try {
    await admin.unsafe(`create role ${role} login password 'ro-password' nocreatedb nocreaterole`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  for (const db of [migrated, empty]) {
    await db.sql.unsafe(`grant usage on schema public to ${role}; grant select, update, insert on all tables in schema public to ${role};
                         grant usage on all sequences in schema public to ${role}; revoke create on schema public from public`);
  }
  await migrated.sql.unsafe(`grant usage on schema drizzle to ${role}; grant select on all tables in schema drizzle to ${role}`);
  await migrated.sql`
    insert into discrepancies (environment, kind, status, entity_type, entity_id, subject, details)
    values ('sandbox', 'orphan_webhook', 'open', 'order', '6f1c2a9e-8d44-4b1e-9a0e-3b1f2c3d4e51', '', 'No such order.')`;
});

afterAll(async () => {
  // The role is the server's, not the file's database's: its grants go first (drop owned revokes
  // them in each database), so it can go whether the databases are dropped or kept.
  for (const db of [migrated, empty]) await db?.sql.unsafe(`drop owned by ${role}`);
  const admin = createSqlClient(serverUrl(), { poolMax: 1 });
  try {
    await admin.unsafe(`drop role if exists ${role}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
});

describe('read-only commands', () => {
  it('report and discrepancy ack work through a role that cannot change the schema', async () => {
    const env = cleanEnv({ DATABASE_URL: asRole(migrated), LOG_LEVEL: 'warn' });
    const report = await runCli(['report', 'discrepancies', '--format', 'json'], env);
    expect(report.code, report.stderr).toBe(0);
    const [row] = JSON.parse(report.stdout) as { id: number; kind: string }[];
    expect(row?.kind).toBe('orphan_webhook');
    const ack = await runCli(['discrepancy', 'ack', String(row!.id), '--note', 'checked'], env);
    expect(ack.code, ack.stderr).toBe(0);
  });

  it('refuses when the schema is behind, naming migrate, and applies nothing', async () => {
    const env = cleanEnv({ DATABASE_URL: empty.url, LOG_LEVEL: 'warn' });
    const report = await runCli(['report', 'discrepancies'], env);
    expect(report.code).toBe(1);
    expect(report.stderr).toMatch(/schema is behind .* run 'bnpl-recon migrate'/);
    const tables = await empty.sql<{ n: number }[]>`select count(*)::int as n from information_schema.tables where table_schema in ('public', 'drizzle')`;
    expect(tables[0]?.n).toBe(0);
  });
});
