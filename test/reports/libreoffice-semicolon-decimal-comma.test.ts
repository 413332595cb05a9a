import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { call, startOperatorServer } from '../http/operator-harness.js';
import type { HttpServer } from '../../src/http/server.js';
import { cleanEnv, runCli } from '../e2e/cli.js';
import { PAYOUT_COLUMNS } from '../../src/reports/payouts.js';
import { INVOICE_COLUMNS } from '../../src/reports/invoices.js';
import { readFods, type CalcCell } from '../web/libreoffice.js';
import { PAYOUT_UUID, buildLedger, toFods } from './awkward-ledger.js';

// docs/commands.md: "every `report`: `--bom` ...; `--delimiter ,|;|tab` (`,`; `;` for locales with
// decimal commas)"; the CLI's help: "--delimiter D  ',' (default), ';' (for locales with decimal
// commas) or tab"; docs/http-api.md: CSV takes `delimiter=,|;|tab`. So `;` is the CSV for an
// accountant whose spreadsheet reads German (or French, Dutch, ...) numbers. But the amounts in it
// are still written with a decimal point (`12.05`, `-0.05`), which such a spreadsheet does not read as a
// number: LibreOffice Calc, importing with German as the language (the import dialog's
// "Language", what a German installation uses), makes every decimal amount a text cell ("12.05"),
// so SUM() over the amount column is 0; only the integer cents stay numbers. (Excel under German
// settings reads `12.05` as the date 12 May.) Written as `12,05`, the same import reads 12.05.

const GERMAN_SEMICOLON = 'CSV:59,34,76,1,,1031';

let db: TestDatabase;
let server: HttpServer;
beforeAll(async () => {
  db = await createTestDatabase('libreoffice_semicolon', { poolMax: 4 });
  await buildLedger(db);
  server = await startOperatorServer(db);
}, 60_000);
afterAll(async () => { await server.close(); });

async function openGerman(name: string, bytes: Buffer | string): Promise<CalcCell[][]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'rs-semi-'));
  const file = path.join(dir, name);
  await writeFile(file, bytes);
  const out = path.join(dir, 'out');
  await mkdir(out);
  const [fods] = await toFods([file], out, GERMAN_SEMICOLON);
  return readFods(fods!);
}

const cellOf = (cell: CalcCell | undefined) => ({ type: cell?.type, value: cell?.value });

describe.skipIf(!existsSync('/usr/bin/soffice'))('CSV with --delimiter ";" opened where decimal commas are the norm', () => {
  it('report payouts --bom --delimiter ";" (CLI): the payout of 12.05 EUR reads as the number 12.05', async () => {
    const env = cleanEnv({ DATABASE_URL: db.url, LOG_LEVEL: 'warn', PROVIDER_ENV: 'sandbox' });
    const result = await runCli(['report', 'payouts', '--bom', '--delimiter', ';'], env);
    expect(result.code, result.stderr).toBe(0);
    const sheet = await openGerman('payouts.csv', result.stdout);
    const row = sheet.find((r) => r[0]?.text === PAYOUT_UUID)!;
    expect(row, 'the payout row').toBeDefined();
    expect(cellOf(row[PAYOUT_COLUMNS.indexOf('amount_cents')]), 'cents').toEqual({ type: 'float', value: '1205' });
    expect({
      amount: cellOf(row[PAYOUT_COLUMNS.indexOf('amount')]),
      credited_amount: cellOf(row[PAYOUT_COLUMNS.indexOf('credited_amount')]),
      report_net: cellOf(row[PAYOUT_COLUMNS.indexOf('report_net')]),
    }, `the row as read: ${JSON.stringify(row.map((c) => c.text))}`).toEqual({
      amount: { type: 'float', value: '12.05' },
      credited_amount: { type: 'float', value: '12.05' },
      report_net: { type: 'float', value: '11.34' },
    });
  }, 60_000);

  it('GET /api/invoices?format=csv&bom=1&delimiter=; : the invoice amount and net read as numbers', async () => {
    const answer = await call(`${server.url}/api/invoices?format=csv&bom=1&delimiter=%3B`);
    expect(answer.status).toBe(200);
    const sheet = await openGerman('invoices.csv', answer.bytes);
    const row = sheet.find((r) => r[INVOICE_COLUMNS.indexOf('reference')]?.text === 'INV-2026-0001')!;
    expect(row, 'the invoice row').toBeDefined();
    expect({
      amount: cellOf(row[INVOICE_COLUMNS.indexOf('amount')]),
      deductions: cellOf(row[INVOICE_COLUMNS.indexOf('deductions')]),
      net: cellOf(row[INVOICE_COLUMNS.indexOf('net')]),
    }, `the row as read: ${JSON.stringify(row.map((c) => c.text))}`).toEqual({
      amount: { type: 'float', value: '12.05' },
      deductions: { type: 'float', value: '0.71' },
      net: { type: 'float', value: '11.34' },
    });
  }, 60_000);
});
