import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { call, startOperatorServer } from '../http/operator-harness.js';
import type { HttpServer } from '../../src/http/server.js';
import { PAYOUT_COLUMNS } from '../../src/reports/payouts.js';
import { readFods } from '../web/libreoffice.js';
import { BIG_AMOUNT, BIG_CENTS, buildLedger, toFods } from './awkward-ledger.js';

// docs/reports.md: "the amount always exactly the cents / 100 however many digits they have
// (`9223372036854775807` cents is `92233720368547758.07`)"; "XLSX is for people: ... amounts are real
// numbers". src/reports/xlsx.ts keeps cents beyond 2^53 as exact text ("An integer beyond 2^53 would
// change as a spreadsheet number: it stays text, exact"), but lets every decimal amount through
// Number(): `92233720368547758.07` becomes the double 92233720368547760, which LibreOffice shows as
// 92,233,720,368,547,800.00 EUR beside the exact cents 9223372036854775807. The page's XLSX download
// of the payouts then says an amount the ledger does not hold.

let db: TestDatabase;
let server: HttpServer;
beforeAll(async () => {
  db = await createTestDatabase('libreoffice_xlsx_digits', { poolMax: 4 });
  await buildLedger(db);
  server = await startOperatorServer(db);
}, 60_000);
afterAll(async () => { await server.close(); });

describe.skipIf(!existsSync('/usr/bin/soffice'))('XLSX payouts download opened in LibreOffice: a payout of 19-digit cents', () => {
  it('shows the amount as the ledger holds it, not rounded by a double', async () => {
    const json = JSON.parse((await call(`${server.url}/api/payouts`)).text) as Record<string, string>[];
    const big = json.find((r) => r.amount_cents === BIG_CENTS)!;
    expect(big.amount).toBe(BIG_AMOUNT);

    const answer = await call(`${server.url}/api/payouts?format=xlsx`);
    expect(answer.status).toBe(200);
    const dir = await mkdtemp(path.join(tmpdir(), 'rs-xlsx-'));
    const file = path.join(dir, 'payouts.xlsx');
    await writeFile(file, answer.bytes);
    const out = path.join(dir, 'out');
    await mkdir(out);
    const [fods] = await toFods([file], out);
    const sheet = await readFods(fods!);
    const row = sheet.find((r) => r[PAYOUT_COLUMNS.indexOf('amount_cents')]?.text.replace(/,/g, '') === BIG_CENTS);
    expect(row, 'the big payout\'s row, its cents exact').toBeDefined();
    const amount = row![PAYOUT_COLUMNS.indexOf('amount')]!;
    // What the accountant sees, separators and currency taken off, must be the ledger's amount.
    const shown = amount.text.replace(/[,\s]|EUR/g, '');
    expect(shown, `amount cell ${JSON.stringify(amount)} beside cents ${BIG_CENTS}`).toBe(BIG_AMOUNT);
  }, 60_000);
});
