import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { UsageError } from '../../src/config/usage-error.js';
import { command } from '../../src/commands/payout-report.js';
import { loadConfig } from '../../src/config/load.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import { silentLogger } from '../../src/log/logger.js';
import { startPayoutReportInbox } from '../../src/payout-import/inbox.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { invoiceRow, payoutEvent, reportCsv, transferOf } from './fixtures.js';

// Every report here is a CSV file in the provider's columns (fixtures.ts reportCsv), read by the real
// reader (src/payout-reports/read.ts), as the command and the inbox read a merchant's download.

/** The reader's refusals of the two junk files below (src/payout-reports/rows.ts findHeader). */
const MISSING_COLUMNS =
  "missing required columns 'Doc Type', 'Transaction Amount', 'Transaction Fee', 'Gross Purchase Price', 'Discount', 'VAT on Discount', 'Transfer Amount', 'Total Deductions' (header on line 1)";
const NO_HEADER =
  'no header row naming the documented columns (Doc No, Doc Type, Transaction Amount, Transaction Fee, Gross Purchase Price, Discount, VAT on Discount, Transfer Amount, Total Deductions) in the first 20 rows';

let db: TestDatabase;
let dir: string;
beforeAll(async () => {
  db = await createTestDatabase('payout_report_cmd_inbox');
  dir = await mkdtemp(path.join(tmpdir(), 'bnpl-payout-report-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('payout-report import', () => {
  it('prints a result line per file and a summary; a refused file does not stop the others and makes the exit status 1', async () => {
    const rows = [invoiceRow({ doc: 'INV-1', cents: 10_000n })];
    const payout = await payoutEvent(db, { sepa: 'PO2026030200000001', cents: transferOf(rows), eventTime: '2026-03-02T06:00:00.000000000Z', invoices: ['INV-1'] });
    const good = path.join(dir, 'good.csv');
    const orphan = path.join(dir, 'orphan.csv');
    const junk = path.join(dir, 'junk.csv');
    await writeFile(good, reportCsv(rows));
    await writeFile(orphan, reportCsv([invoiceRow({ doc: 'INV-7', cents: 1n })]));
    await writeFile(junk, 'Order No;Doc No\n');
    const out: string[] = [];
    const err: string[] = [];
    const o = vi.spyOn(process.stdout, 'write').mockImplementation((c) => (out.push(String(c)), true));
    const e = vi.spyOn(process.stderr, 'write').mockImplementation((c) => (err.push(String(c)), true));
    const saved = { DATABASE_URL: process.env.DATABASE_URL, LOG_LEVEL: process.env.LOG_LEVEL };
    process.env.DATABASE_URL = db.url;
    process.env.LOG_LEVEL = 'silent';
    try {
      expect(await command.run(['import', good])).toBe(0);
      expect(await command.run(['import', good, orphan, junk, path.join(dir, 'missing.csv')])).toBe(1);
      await expect(command.run(['import'])).rejects.toBeInstanceOf(UsageError);
      await expect(command.run(['export', good])).rejects.toBeInstanceOf(UsageError);
    } finally {
      o.mockRestore();
      e.mockRestore();
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
    }
    expect(out).toEqual([
      `${good}: format csv, rows 1, rows new 1, payouts ${payout}\n`,
      'files 1: imported 1, failed 0; rows new 1\n',
      `${good}: format csv, rows 1, rows new 0, payouts ${payout} (file already imported)\n`,
      `${orphan}: failed: 1 row(s) without a payout reference (invoices INV-7, transfer ${invoiceRow({ doc: 'INV-7', cents: 1n }).transferAmountCents} cents) fit no payout exactly; payouts listing some of those invoices: none\n`,
      `${junk}: failed: ${MISSING_COLUMNS}\n`,
      expect.stringMatching(/missing\.csv: failed: unreadable: ENOENT/),
      'files 4: imported 1, failed 3; rows new 0\n',
    ]);
    expect(err.join('')).toContain(`${junk}: ${MISSING_COLUMNS}`);
  });

  it('refuses a file over PAYOUT_REPORT_MAX_FILE_BYTES as set, naming the setting', async () => {
    const big = path.join(dir, 'big.csv');
    await writeFile(big, `Order No;Doc No\n${'x;y\n'.repeat(100)}`);
    const out: string[] = [];
    const o = vi.spyOn(process.stdout, 'write').mockImplementation((c) => (out.push(String(c)), true));
    const e = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const saved = { DATABASE_URL: process.env.DATABASE_URL, LOG_LEVEL: process.env.LOG_LEVEL, PAYOUT_REPORT_MAX_FILE_BYTES: process.env.PAYOUT_REPORT_MAX_FILE_BYTES };
    process.env.DATABASE_URL = db.url;
    process.env.LOG_LEVEL = 'silent';
    process.env.PAYOUT_REPORT_MAX_FILE_BYTES = '100';
    try {
      expect(await command.run(['import', big])).toBe(1);
    } finally {
      o.mockRestore();
      e.mockRestore();
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
    }
    expect(out[0]).toBe(`${big}: failed: big.csv: larger than PAYOUT_REPORT_MAX_FILE_BYTES (100 bytes); split the report or raise the setting\n`);
  });
});

describe('payout report inbox', () => {
  it('imports dropped files into payout-inbox/imported/, moves refused ones to failed/ with a .error, leaves files being written', async () => {
    const rows = [invoiceRow({ doc: 'INV-2', cents: 20_000n })];
    await payoutEvent(db, { sepa: 'PO2026030300000002', cents: transferOf(rows), eventTime: '2026-03-03T06:00:00.000000000Z', invoices: ['INV-2'] });
    const config = loadConfig({ RECON_DATA_DIR: path.join(dir, 'data'), PROVIDER_ENV: 'sandbox' });
    const shutdown = new Shutdown(silentLogger(), 5000);
    const inbox = startPayoutReportInbox({ config, log: silentLogger(), database: db, shutdown }, { intervalMs: 3_600_000, settleMs: 60_000 });
    try {
      await inbox.runNow();
      const old = new Date(Date.now() - 120_000);
      await writeFile(path.join(inbox.dir, 'a.csv'), reportCsv(rows));
      await writeFile(path.join(inbox.dir, 'b.csv'), 'nonsense');
      await writeFile(path.join(inbox.dir, 'c.csv'), reportCsv(rows, 'Payout report, fresh'));
      await utimes(path.join(inbox.dir, 'a.csv'), old, old);
      await utimes(path.join(inbox.dir, 'b.csv'), old, old);
      const result = await inbox.runNow();
      expect(result.imported.map((r) => r.rowsNew)).toEqual([1]);
      expect(result.failed).toEqual([{ file: 'b.csv', error: NO_HEADER }]);
      expect(result.deferred).toEqual(['c.csv']);
      expect(path.basename(inbox.dir)).toBe('payout-inbox');
      expect((await readdir(path.join(inbox.dir, 'imported'))).sort()).toEqual(['a.csv']);
      expect((await readdir(path.join(inbox.dir, 'failed'))).sort()).toEqual(['b.csv', 'b.csv.error']);
      expect(await readFile(path.join(inbox.dir, 'failed', 'b.csv.error'), 'utf8')).toBe(`${NO_HEADER}\n`);
      const [stored] = await db.sql<{ n: number }[]>`select count(*)::int as n from payout_report_rows where doc_no = 'INV-2'`;
      expect(stored!.n).toBe(1);
    } finally {
      await inbox.stop();
    }
  });
});
