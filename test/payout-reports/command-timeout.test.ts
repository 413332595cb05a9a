import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Sql } from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqlClient } from '../../src/db/database.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { cleanEnv, runCli } from '../e2e/cli.js';
import { payoutEvent } from '../statements/fixtures.js';

/**
 * docs/settings.md, PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS: `payout-report import` stops an import
 * whose statement waits longer than the setting (here behind a lock held on a table it writes),
 * stores nothing of the file and exits 1 naming the setting. Before, the command passed no limit
 * and waited the default 120 s whatever the setting said.
 */
const HEADER = 'Order No;Doc No;Doc Type;Transaction Amount;Discount %;MDR %;Transaction Fee;Gross Purchase Price;Discount;VAT on Discount;Transfer Amount;Total Deductions;Payout Reference';
const ROW = 'ORD-1;INV-1;Invoice;1.234,56 €;2,5 %;2,5;0,30 €;1.234,56 €;30,86 €;5,92 €;1.197,48 €;37,08 €;PO0000000000000042';

let db: TestDatabase;
let dir: string;
let file: string;
let locker: Sql;

beforeAll(async () => {
  db = await createTestDatabase('payout_report_command_timeout');
  dir = await mkdtemp(path.join(tmpdir(), 'payout-report-timeout-'));
  file = path.join(dir, 'report.csv');
  await writeFile(file, `${HEADER}\r\n${ROW}\r\n`);
  locker = createSqlClient(db.url, { poolMax: 1 });
  await payoutEvent(db, { sepa: 'PO0000000000000042', cents: 119748n, invoices: ['INV-1'], eventTime: '2026-03-02T10:00:00Z' });
});
afterAll(async () => {
  await locker?.end({ timeout: 2 });
  await rm(dir, { recursive: true, force: true });
});

describe('payout-report import while a table it writes is locked', () => {
  it('stops at PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS, exits 1 naming it, and stores nothing', { timeout: 90_000 }, async () => {
    const held = await locker.reserve();
    await held`begin`;
    await held`lock table payout_reports in access exclusive mode`;
    const env = cleanEnv({ DATABASE_URL: db.url, LOG_LEVEL: 'warn', PROVIDER_ENV: 'sandbox', PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS: '1' });
    let run: Awaited<ReturnType<typeof runCli>>;
    const started = performance.now();
    try {
      run = await runCli(['payout-report', 'import', file], env, 60_000);
    } finally {
      await held`rollback`;
      held.release();
    }
    // Well inside the 120 s default: the setting, not the default, stopped it.
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toContain('PAYOUT_REPORT_IMPORT_TIMEOUT_SECONDS (1 s)');
    const [stored] = await db.sql<{ reports: number }[]>`select count(*)::int as reports from payout_reports`;
    expect(stored!.reports).toBe(0);
    // Once the lock is gone the same file imports.
    const again = await runCli(['payout-report', 'import', file], env, 60_000);
    expect(again.code, again.stderr).toBe(0);
  });
});
