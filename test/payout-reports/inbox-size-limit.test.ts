import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { Shutdown } from '../../src/lifecycle/shutdown.js';
import { silentLogger } from '../../src/log/logger.js';
import { importPayoutReportFile } from '../../src/payout-import/file.js';
import { startPayoutReportInbox } from '../../src/payout-import/inbox.js';
import { PayoutReportFormatError } from '../../src/payout-reports/read.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/**
 * The payout report inbox parses each file whole in the daemon's own process. A 25 MB CSV (300,000
 * rows) dropped in RECON_DATA_DIR/payout-inbox once killed a process with a 256 MB heap, and as the
 * file stayed in the inbox the restarted daemon died again at its first scan: a file over
 * PAYOUT_REPORT_MAX_FILE_BYTES is now refused before it is read. inbox-big-child.ts runs the inbox
 * as the daemon does, in a process of its own with a heap limit.
 */
let db: TestDatabase;
let root: string;
beforeAll(async () => {
  db = await createTestDatabase('payout_report_inbox_size');
  root = await mkdtemp(path.join(tmpdir(), 'bnpl-payout-inbox-size-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('payout report inbox: PAYOUT_REPORT_MAX_FILE_BYTES', () => {
  it('refuses a 25 MB report (failed/ with a .error) in a process with a 256 MB heap instead of running out of heap', async () => {
    const dataDir = path.join(root, 'data');
    await mkdir(path.join(dataDir, 'payout-inbox'), { recursive: true });
    const head = 'Order No,Doc No,Doc Type,Transaction Amount,Discount %,MDR %,Transaction Fee,Gross Purchase Price,Discount,VAT on Discount,Transfer Amount,Total Deductions\n';
    const rows: string[] = [head];
    for (let i = 0; i < 300_000; i++) rows.push(`ORD-${i},INV-${i},Invoice,1234.56,2.5,2.5,0.30,1234.56,30.86,5.92,1197.48,37.08\n`);
    await writeFile(path.join(dataDir, 'payout-inbox', 'big.csv'), rows.join(''));
    const child = fileURLToPath(new URL('./inbox-big-child.ts', import.meta.url));
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--max-old-space-size=256', child, dataDir, db.url], { encoding: 'utf8', timeout: 120_000 });
    const fatal = run.stderr.split('\n').find((l) => l.includes('FATAL')) ?? '';
    expect({ status: run.status, signal: run.signal, fatal }).toEqual({ status: 0, signal: null, fatal: '' });
    expect(await readdir(path.join(dataDir, 'payout-inbox', 'failed'))).toEqual(['big.csv', 'big.csv.error']);
    expect(await readFile(path.join(dataDir, 'payout-inbox', 'failed', 'big.csv.error'), 'utf8')).toBe(
      'big.csv: larger than PAYOUT_REPORT_MAX_FILE_BYTES (8388608 bytes); split the report or raise the setting\n',
    );
  }, 150_000);

  it('refuses a file over the setting before reading it, and reads one of exactly that size', async () => {
    const dataDir = path.join(root, 'setting');
    const config = loadConfig({ RECON_DATA_DIR: dataDir, PROVIDER_ENV: 'sandbox', DATABASE_URL: db.url, PAYOUT_REPORT_MAX_FILE_BYTES: '10' });
    const inbox = startPayoutReportInbox({ config, log: silentLogger(), database: db, shutdown: new Shutdown(silentLogger(), 5000) }, { intervalMs: 3_600_000, settleMs: 0 });
    try {
      await inbox.runNow();
      await writeFile(path.join(inbox.dir, 'eleven.csv'), 'x'.repeat(11));
      await writeFile(path.join(inbox.dir, 'ten.csv'), 'x'.repeat(10));
      const result = await inbox.runNow();
      expect(result.failed).toEqual([
        { file: 'eleven.csv', error: 'eleven.csv: larger than PAYOUT_REPORT_MAX_FILE_BYTES (10 bytes); split the report or raise the setting' },
        // Read, and refused by the reader for what it holds.
        { file: 'ten.csv', error: expect.not.stringContaining('PAYOUT_REPORT_MAX_FILE_BYTES') as unknown as string },
      ]);
    } finally {
      await inbox.stop();
    }
  });

  it('applies the limit to payout-report import too (importPayoutReportFile)', async () => {
    const file = path.join(root, 'command.csv');
    await writeFile(file, 'x'.repeat(11));
    await expect(importPayoutReportFile(db, 'sandbox', file, { maxFileBytes: 10 })).rejects.toThrow(
      new PayoutReportFormatError('command.csv: larger than PAYOUT_REPORT_MAX_FILE_BYTES (10 bytes); split the report or raise the setting'),
    );
  });
});
