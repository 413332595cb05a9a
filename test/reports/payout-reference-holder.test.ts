import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { loadConfig } from '../../src/config/load.js';
import { operatorRoutes } from '../../src/http/operator-api.js';
import { startHttpServer, type HttpServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/log/logger.js';
import { invoicesSource } from '../../src/reports/invoices.js';
import { payoutsSource } from '../../src/reports/payouts.js';
import { fetchAll } from '../../src/reports/source.js';
import { useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { findings, importCsv, invoiceEvent, pass, payoutEvent } from '../payout-reports/fixtures.js';

/**
 * The reports and the page must say of a bank credit what the payout rules say of it
 * (docs/how-it-decides.md):
 *  - a payout cancelled by a payout/cancelled that names no reference still concerns the transfer
 *    its payout/complete referenced: the rules report payout_cancelled_but_credited with that
 *    credit, so `report payouts` must list the credit on its row and name the reference;
 *  - of a cancelled payout and a completed one carrying the same reference, the credit is the
 *    completed one's (payout_cancelled_but_credited stays quiet for the cancelled one), even when
 *    the cancelled one was announced first: the report showed the credit on the cancelled payout
 *    and none on the one it paid.
 */
let db: TestDatabase;
useTestDatabase('payout_reference_holder', (d) => (db = d));
let server: HttpServer;
let cancelledBlank: string;
let cancelledFirst: string;
let completedLater: string;
const R1 = 'PO2026030200000101';
const R2 = 'PO2026030200000102';
const TOKEN = 'alice-5b1f0c3e9d7a4e2f8c6b0a1d3e5f7a9c';

beforeAll(async () => {
  await invoiceEvent(db, { ref: 'INV-C', eventTime: '2026-03-01T06:00:00.000000000Z' });
  await invoiceEvent(db, { ref: 'INV-D', eventTime: '2026-03-01T07:00:00.000000000Z' });
  cancelledBlank = await payoutEvent(db, { sepa: R1, cents: 100_000n, eventTime: '2026-03-02T06:00:00.000000000Z' });
  await payoutEvent(db, { uuid: cancelledBlank, status: 'cancelled', sepa: '', cents: 100_000n, eventTime: '2026-03-04T06:00:00.000000000Z' });
  cancelledFirst = await payoutEvent(db, { status: 'cancelled', sepa: R2, cents: 20_000n, eventTime: '2026-03-03T06:00:00.000000000Z', invoices: ['INV-C'] });
  completedLater = await payoutEvent(db, { sepa: R2, cents: 20_000n, eventTime: '2026-03-03T07:00:00.000000000Z', invoices: ['INV-D'] });
  await importCsv(db, [
    { ref: 'B1', date: '2026-03-03', cents: 100_000n, sepa: R1 },
    { ref: 'B2', date: '2026-03-04', cents: 20_000n, sepa: R2 },
  ]);
  await pass(db, new Date('2026-03-12T12:00:00Z'));
  server = await startHttpServer({
    host: '127.0.0.1', port: 0, log: silentLogger(), name: 'test',
    routes: operatorRoutes({ config: loadConfig({ OPERATOR_TOKENS: `alice:${TOKEN}`, PROVIDER_ENV: 'sandbox' }), database: db, log: silentLogger() }),
  });
});

afterAll(async () => {
  await server?.close();
});

describe('the credit of a payout cancelled with a blank reference', () => {
  it('the rules report it', async () => {
    const mine = (await findings(db, 'payout_cancelled_but_credited')).filter((f) => f.entity_id === cancelledBlank);
    expect(mine).toEqual([expect.objectContaining({ sepa_reference: R1, observed: '100000' })]);
  });

  it('report payouts names the reference and lists the credit', async () => {
    const rows = await fetchAll(payoutsSource(db, { environment: 'sandbox' }), undefined, 100);
    const row = rows!.find((r) => r.payout_uuid === cancelledBlank);
    expect(row, 'a row for the payout').toBeDefined();
    expect(row).toMatchObject({ status: 'cancelled', sepa_reference: R1, matched_bank_line: 'B1 2026-03-03', credited_cents: '100000' });
  });
});

describe('a cancelled payout announced first and a completed one with the same reference', () => {
  it('the rules give the credit to the completed one (no payout_cancelled_but_credited)', async () => {
    const mine = (await findings(db, 'payout_cancelled_but_credited')).filter((f) => f.entity_id === cancelledFirst);
    expect(mine).toEqual([]);
    const amounts = (await findings(db, 'payout_amount_mismatch')).filter((f) => f.entity_id === completedLater);
    expect(amounts, 'the completed payout was credited in full').toEqual([]);
  });

  it('report payouts shows the credit on the completed payout, not on the cancelled one', async () => {
    const rows = await fetchAll(payoutsSource(db, { environment: 'sandbox' }), undefined, 100);
    const byUuid = Object.fromEntries(rows!.map((r) => [r.payout_uuid, r]));
    expect(byUuid[completedLater]).toMatchObject({ matched_bank_line: 'B2 2026-03-04', credited_cents: '20000', difference: '0.00' });
    expect(byUuid[cancelledFirst]).toMatchObject({ matched_bank_line: null, credited_cents: null });
  });

  it('report invoices: the completed payout\'s invoice reached the bank', async () => {
    const rows = await fetchAll(invoicesSource(db, { environment: 'sandbox' }), undefined, 100);
    const byRef = Object.fromEntries(rows!.map((r) => [r.reference, r]));
    expect(byRef['INV-D']).toMatchObject({ payout_uuid: completedLater, bank_credit_date: '2026-03-04' });
  });

  it('the overview counts the completed payout as matched', async () => {
    const response = await request(`${server.url}/api/overview`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.statusCode).toBe(200);
    const overview = (await response.body.json()) as { payouts_by_week: { week: string; matched: number; unmatched: number }[] };
    const total = overview.payouts_by_week.reduce((n, w) => ({ matched: n.matched + w.matched, unmatched: n.unmatched + w.unmatched }), { matched: 0, unmatched: 0 });
    expect(total, "the completed payout (the only one the overview counts) was credited in full").toEqual({ matched: 1, unmatched: 0 });
  });
});
