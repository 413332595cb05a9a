import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpServer } from '../../src/http/server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { invoiceEvent, payoutEvent } from '../statements/fixtures.js';
import { call, startOperatorServer } from './operator-harness.js';

/**
 * POST /api/payout-reports with files whose text Postgres cannot hold as read (a NUL byte, a Doc No
 * longer than a btree index entry): http-api.md promises 422 with the import's reason, nothing
 * stored; the daemon answers 500 "internal error".
 */
let db: TestDatabase;
let server: HttpServer;
const HEADER = 'Order No;Doc No;Doc Type;Transaction Amount;Discount %;MDR %;Transaction Fee;Gross Purchase Price;Discount;VAT on Discount;Transfer Amount;Total Deductions;Payout Reference';
const row = (doc: string, order = 'ORD-1', sepa = 'PO0000000000000042', cur = '€') =>
  `${order};${doc};Invoice;1.234,56 ${cur};2,5 %;2,5;0,30 ${cur};1.234,56 ${cur};30,86 ${cur};5,92 ${cur};1.197,48 ${cur};37,08 ${cur};${sepa}`;
const file = (...rows: string[]) => Buffer.from(`${HEADER}\r\n${rows.join('\r\n')}\r\n`);
const upload = (name: string, body: Buffer) =>
  call(`${server.url}/api/payout-reports?name=${name}`, { method: 'POST', body, contentType: 'application/octet-stream' });

beforeAll(async () => {
  db = await createTestDatabase('op_payout_upload');
  server = await startOperatorServer(db, { DATABASE_URL: db.url });
  await payoutEvent(db, { sepa: 'PO0000000000000042', cents: 119748n, invoices: ['INV-1'], eventTime: '2026-03-02T10:00:00Z' });
  await invoiceEvent(db, 'INV-7', '2026-03-01T10:00:00Z');
  await payoutEvent(db, { sepa: 'PO0000000000000077', cents: 119748n, invoices: ['INV-7'], eventTime: '2026-03-02T11:00:00Z' });
});
afterAll(async () => {
  await server?.close();
});

describe('payout report upload: text the ledger cannot hold is a 422, not a 500', () => {
  it('refuses a NUL in Doc No with 422 naming the problem', async () => {
    const answer = await upload('nul-doc.csv', file(row('INV\u0000-1')));
    expect(answer.status, answer.text).toBe(422);
  });

  it('refuses a NUL in Order No with 422 naming the problem', async () => {
    const answer = await upload('nul-order.csv', file(row('INV-1', 'ORD\u00001')));
    expect(answer.status, answer.text).toBe(422);
  });

  it('refuses a Doc No of 8,000 characters with 422 (it is an index key)', async () => {
    const answer = await upload('long-doc.csv', file(row(randomBytes(6000).toString('base64'))));
    expect(answer.status, answer.text).toBe(422);
  });
});

describe('payouts report currency', () => {
  it('names the payout report\'s currency (GBP) for a GBP payout, as the invoices report does', async () => {
    const answer = await upload('gbp.csv', file(row('INV-7', 'ORD-7', 'PO0000000000000077', '£')));
    expect(answer.status, answer.text).toBe(201);
    const payouts = JSON.parse((await call(`${server.url}/api/payouts`)).text) as Record<string, unknown>[];
    const gbp = payouts.find((p) => p.sepa_reference === 'PO0000000000000077')!;
    expect(gbp.report_net).toBe('1197.48');
    // The invoices report labels the same payout's money GBP (its currency is the payout report row's)...
    const invoices = JSON.parse((await call(`${server.url}/api/invoices`)).text) as Record<string, unknown>[];
    expect(invoices.find((i) => i.reference === 'INV-7')).toMatchObject({ payout_sepa_reference: 'PO0000000000000077', net: '1197.48', currency: 'GBP' });
    // ...and the payouts report must not call the same payout's amounts EUR.
    expect(gbp.currency).toBe('GBP');
  });
});
