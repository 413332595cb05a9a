import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { cleanEnv, runCli } from '../e2e/cli.js';

/**
 * CONTRACT.md, "Commands": every command exits 2 on bad configuration "with a message naming the
 * setting at fault". docs/settings.md: STATEMENT_CSV_PROFILE "while it cannot be read or is not a
 * profile, ... `statement import` exits 2".
 */
let db: TestDatabase;
let dir: string;
let statement: string;

beforeAll(async () => {
  db = await createTestDatabase('statement_profile_setting');
  dir = await mkdtemp(path.join(tmpdir(), 'statement-profile-setting-'));
  statement = path.join(dir, 'statement.csv');
  await writeFile(statement, 'entry_reference,booking_date,value_date,amount,currency,credit_debit\r\nB1,2026-03-03,2026-03-03,1.00,EUR,CRDT\r\n');
});

describe('statement import with a bad STATEMENT_CSV_PROFILE setting', () => {
  it('an unreadable STATEMENT_CSV_PROFILE exits 2 with a message naming STATEMENT_CSV_PROFILE', async () => {
    const env = cleanEnv({ DATABASE_URL: db.url, LOG_LEVEL: 'warn', STATEMENT_CSV_PROFILE: path.join(dir, 'no-such-profile.json') });
    const run = await runCli(['statement', 'import', statement], env);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/STATEMENT_CSV_PROFILE/);
  }, 60_000);

  it('a STATEMENT_CSV_PROFILE that is not a profile exits 2 with a message naming STATEMENT_CSV_PROFILE', async () => {
    const profile = path.join(dir, 'not-a-profile.json');
    await writeFile(profile, '{}');
    const env = cleanEnv({ DATABASE_URL: db.url, LOG_LEVEL: 'warn', STATEMENT_CSV_PROFILE: profile });
    const run = await runCli(['statement', 'import', statement], env);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/STATEMENT_CSV_PROFILE/);
  }, 60_000);
});
