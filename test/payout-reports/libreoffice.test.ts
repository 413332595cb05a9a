import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readSheet } from 'read-excel-file/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPayoutReport } from '../../src/payout-reports/read.js';
import { convertWithCalc } from '../web/libreoffice.js';

/**
 * An XLSX saved by LibreOffice Calc (not by write-excel-file, which the project also writes with):
 * the CSV written here is opened by Calc with its CSV import and saved as XLSX, so the amounts are
 * Calc's number cells (doubles) and the references its text cells. Read back, the rows must be
 * the CSV's own, cent for cent.
 */
const soffice = spawnSync('soffice', ['--version'], { encoding: 'utf8' });
const hasCalc = soffice.status === 0;
if (!hasCalc) console.warn('SKIPPED: soffice (LibreOffice Calc) is not installed: apt-get install libreoffice-calc');

const CSV = [
  'Payout Reference,Order No,Doc No,Doc Type,Transaction Amount,Discount %,MDR %,Transaction Fee,Gross Purchase Price,Discount,VAT on Discount,Transfer Amount,Total Deductions',
  'PO0000000000000042,ORD-1,INV-2026-0001,invoice,1234.56,2.5,2.5,0.30,1234.56,30.86,5.92,1197.48,37.08',
  'PO0000000000000042,ORD-1,INV-2026-0002,invoice,0.10,2.5,2.5,0.00,0.10,0.00,0.00,0.10,0.00',
  'PO0000000000000042,ORD-2,INV-2026-0003,invoice,99999.99,2.9,2.9,0.30,99999.99,2900.00,551.06,96548.93,3451.06',
  'PO0000000000000042,ORD-1,CN-2026-0001,credit note,-100.00,,,0.00,-100.00,0.00,0.00,-100.00,0.00',
  'PO0000000000000042,ORD-3,INV-2026-0009,buyer payment,-0.29,,,0.00,-0.29,0.00,0.00,-0.29,0.00',
].join('\n');

describe.skipIf(!hasCalc)('an XLSX saved by LibreOffice Calc', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'payout-report-calc-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  // Calc's first start in a fresh profile takes 30-60 s on a loaded machine (the conversion's own limit is 120 s).
  it('reads to the same rows as the CSV it was saved from', async () => {
    const csvFile = path.join(dir, 'payout-PO0000000000000042.csv');
    await writeFile(csvFile, CSV);
    // Comma-separated, '"' quotes, UTF-8, from line 1: Calc's default import, stated so a locale cannot change it.
    const xlsxFile = await convertWithCalc(csvFile, dir, 'xlsx', 'CSV:44,34,76,1');
    // Calc holds the amounts as numbers, so the reader's number path is what this reads.
    const sheet = await readSheet(xlsxFile);
    expect(sheet[1]!.slice(4, 6).map((c) => typeof c)).toEqual(['number', 'number']);
    const xlsx = await readPayoutReport(await readFile(xlsxFile));
    const csv = await readPayoutReport(await readFile(csvFile));
    expect(xlsx.format).toBe('xlsx');
    expect(csv.rows).toHaveLength(5);
    expect(xlsx.rows).toEqual(csv.rows);
    expect(xlsx.rows.map((r) => [r.docNo, r.transactionAmountCents, r.transferAmountCents, r.vatOnDiscountCents])).toEqual([
      ['INV-2026-0001', 123456n, 119748n, 592n],
      ['INV-2026-0002', 10n, 10n, 0n],
      ['INV-2026-0003', 9999999n, 9654893n, 55106n],
      ['CN-2026-0001', -10000n, -10000n, 0n],
      ['INV-2026-0009', -29n, -29n, 0n],
    ]);
  }, 180_000);

  // Calc reads "2.5%" as the number 0.025 shown as a percentage, and saves it so: a rate cell
  // holds the fraction with a number format of "0.00%".
  it('reads the rates of a CSV with "2.5%" in them, opened in Calc and saved as XLSX, as 2.5 %', async () => {
    const csvFile = path.join(dir, 'payout-percent.csv');
    await writeFile(csvFile, CSV.replace(/,2\.5,2\.5,/g, ',2.5%,2.5%,').replace(/,2\.9,2\.9,/g, ',2.9%,2.9%,'));
    const xlsxFile = await convertWithCalc(csvFile, dir, 'xlsx', 'CSV:44,34,76,1');
    // What Calc stored: the fraction, as a number.
    const sheet = await readSheet(xlsxFile);
    expect(sheet[1]!.slice(5, 7)).toEqual([0.025, 0.025]);
    const xlsx = await readPayoutReport(await readFile(xlsxFile));
    expect(xlsx.rows.map((r) => [r.docNo, r.discountRateMicros, r.mdrRateMicros])).toEqual([
      ['INV-2026-0001', 25000, 25000],
      ['INV-2026-0002', 25000, 25000],
      ['INV-2026-0003', 29000, 29000],
      ['CN-2026-0001', null, null],
      ['INV-2026-0009', null, null],
    ]);
    // The rest of the rows as from the CSV without the signs.
    const plain = path.join(dir, 'payout-plain.csv');
    await writeFile(plain, CSV);
    expect(xlsx.rows).toEqual((await readPayoutReport(await readFile(plain))).rows);
  }, 180_000);
});
