import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { call, startOperatorServer } from '../http/operator-harness.js';
import type { HttpServer } from '../../src/http/server.js';
import { findings, pass, payoutEvent } from '../statements/fixtures.js';
import { DISCREPANCY_COLUMNS, DISCREPANCY_SHAPE } from '../../src/reports/discrepancies.js';
import { renderBatch } from '../../src/reports/format.js';
import { convertToFods, readFods } from '../web/libreoffice.js';

// docs/reports.md: in XLSX "every text a text cell"; "numbers the report computes (cents, amounts,
// ids) are not touched". A payout_unknown_invoice finding's `observed` is the invoice reference the
// payout listed (a merchant's invoice number such as `000123`), yet `observed` is declared numeric
// (DISCREPANCY_SHAPE) so the XLSX writes it as the number 123: the reference the accountant must
// look up loses its leading zeros. expected and observed are numbers only for the kinds whose rule
// writes cents or counts there.

const day = (d: number, time = '06:00:00') => `2026-03-${String(d).padStart(2, '0')}T${time}.000000000Z`;
const at = (d: number, time = '12:00:00') => new Date(`2026-03-${String(d).padStart(2, '0')}T${time}Z`);

let db: TestDatabase;
let server: HttpServer;
beforeAll(async () => {
  db = await createTestDatabase('xlsx_reference_text', { poolMax: 4 });
  server = await startOperatorServer(db);
  await payoutEvent(db, { sepa: 'PO2026030200000030', cents: 1n, eventTime: day(2), invoices: ['000123'] });
  await pass(db, at(2, '08:00:00'));
});
afterAll(async () => { await server.close(); });

describe('discrepancies XLSX', () => {
  it('keeps an invoice reference in observed as text, leading zeros included', async () => {
    expect((await findings(db, 'payout_unknown_invoice')).map((f) => f.observed)).toEqual(['000123']);
    const answer = await call(`${server.url}/api/discrepancies?format=xlsx`);
    expect(answer.status).toBe(200);
    const dir = await mkdtemp(path.join(tmpdir(), 'xlsx-'));
    const file = path.join(dir, 'discrepancies.xlsx');
    await writeFile(file, answer.bytes);
    const sheet = await readFods(await convertToFods(file, dir));
    const observed = sheet[1]![DISCREPANCY_COLUMNS.indexOf('observed')]!;
    expect({ type: observed.type, text: observed.text }).toEqual({ type: 'string', text: '000123' });
  });

  it('in CSV, neutralises a reference as text while cents of a money kind pass as a number', () => {
    const row = (kind: string) => ({ ...Object.fromEntries(DISCREPANCY_COLUMNS.map((c) => [c, null])), id: 1, kind, observed: '-5' });
    const observed = DISCREPANCY_COLUMNS.indexOf('observed');
    const fields = (kind: string) => renderBatch('csv', DISCREPANCY_SHAPE, [row(kind)], true).trimEnd().split(',');
    expect(fields('payout_unknown_invoice')[observed]).toBe("'-5");
    expect(fields('payout_amount_mismatch')[observed]).toBe('-5');
  });
});
