import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { call, startOperatorServer } from '../http/operator-harness.js';
import type { HttpServer } from '../../src/http/server.js';
import { importCsv, invoiceEvent, payoutEvent } from '../statements/fixtures.js';
import { INVOICE_COLUMNS } from '../../src/reports/invoices.js';
import { convertToFods, readFods } from '../web/libreoffice.js';

// docs/reports.md: "XLSX is for people: ... amounts are real numbers in the row's currency format
// ..., dates real dates, every text a text cell". The invoices report's `bank_credit_date` (the day
// the bank credited the payout, from which `days_to_cash` is counted) is written as a text cell,
// so an accountant cannot sort, filter or compute with it as a date, unlike invoice_date and
// payout_date beside it.

let db: TestDatabase;
let server: HttpServer;
beforeAll(async () => {
  db = await createTestDatabase('xlsx_bank_credit_date', { poolMax: 4 });
  server = await startOperatorServer(db);
  await invoiceEvent(db, 'INV-000001', '2026-03-01T09:00:00Z');
  await payoutEvent(db, { sepa: 'PO2026030200000001', cents: 10_000n, invoices: ['INV-000001'], eventTime: '2026-03-02T06:00:00.000000000Z' });
  await importCsv(db, [{ ref: 'B1', date: '2026-03-03', cents: 10_000n, sepa: 'PO2026030200000001' }]);
});
afterAll(async () => { await server.close(); });

describe('invoices XLSX', () => {
  it('writes bank_credit_date as a real date, like invoice_date and payout_date', async () => {
    const json = JSON.parse((await call(`${server.url}/api/invoices`)).text) as Record<string, string>[];
    expect(json[0]).toMatchObject({ reference: 'INV-000001', bank_credit_date: '2026-03-03', days_to_cash: '2' });
    const answer = await call(`${server.url}/api/invoices?format=xlsx`);
    expect(answer.status).toBe(200);
    const dir = await mkdtemp(path.join(tmpdir(), 'xlsx-'));
    const file = path.join(dir, 'invoices.xlsx');
    await writeFile(file, answer.bytes);
    const sheet = await readFods(await convertToFods(file, dir));
    const col = (name: (typeof INVOICE_COLUMNS)[number]) => INVOICE_COLUMNS.indexOf(name);
    expect(sheet[1]![col('invoice_date')]!.type).toBe('date');
    expect(sheet[1]![col('payout_date')]!.type).toBe('date');
    expect(sheet[1]![col('bank_credit_date')]!.type).toBe('date');
  });
});
