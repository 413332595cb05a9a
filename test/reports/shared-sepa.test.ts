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
import { importStatement } from '../../src/statements/import.js';
import { findings, importCsv, invoiceEvent, pass, payoutEvent, PROVIDER_IBAN } from '../payout-reports/fixtures.js';

/**
 * Two payouts carry one SEPA reference and the bank credited it once: the credit is the payout the
 * provider announced first (ledger/sepa-claims.ts), in every view, and the later one is a
 * duplicate_event finding; the same money is never shown as paying both.
 */
let db: TestDatabase;
useTestDatabase('shared_sepa', (d) => (db = d));
let server: HttpServer;
let first: string;
let later: string;
const SEPA = 'PO2026030300000042';
const TEXT_ONLY = 'PO2026030300000043';
const TOKEN = 'alice-5b1f0c3e9d7a4e2f8c6b0a1d3e5f7a9c';

beforeAll(async () => {
  await invoiceEvent(db, { ref: 'INV-1', eventTime: '2026-03-01T06:00:00.000000000Z' });
  await invoiceEvent(db, { ref: 'INV-2', eventTime: '2026-03-01T07:00:00.000000000Z' });
  // The later one arrives first: arrival is no evidence of which payout the reference is.
  later = await payoutEvent(db, { sepa: SEPA, cents: 10_000n, eventTime: '2026-03-03T07:00:00.000000000Z', receivedAt: '2026-03-03T07:00:01Z', invoices: ['INV-2'] });
  first = await payoutEvent(db, { sepa: SEPA, cents: 10_000n, eventTime: '2026-03-03T06:00:00.000000000Z', receivedAt: '2026-03-03T07:00:02Z', invoices: ['INV-1'] });
  await importCsv(db, [{ ref: 'K1', date: '2026-03-04', cents: 10_000n, sepa: SEPA }]);
  // A third payout, whose reference the bank wrote only in the text, after another id-like word.
  await payoutEvent(db, { sepa: TEXT_ONLY, cents: 5_000n, eventTime: '2026-03-03T08:00:00.000000000Z' });
  await importStatement(db, 'sandbox', Buffer.from([
    'entry_reference,booking_date,value_date,amount,currency,credit_debit,counterparty_name,counterparty_iban,end_to_end_reference,remittance_information,account_iban',
    `K2,2026-03-05,2026-03-05,50.00,EUR,CRDT,Party,${PROVIDER_IBAN},,Rechnung RE2026000001 Auszahlung ${TEXT_ONLY},DE44500105175407324931`,
  ].join('\r\n') + '\r\n'), 'text-only.csv');
  await pass(db, new Date('2026-03-12T12:00:00Z'));
  server = await startHttpServer({
    host: '127.0.0.1', port: 0, log: silentLogger(), name: 'test',
    routes: operatorRoutes({ config: loadConfig({ OPERATOR_TOKENS: `alice:${TOKEN}`, PROVIDER_ENV: 'sandbox' }), database: db, log: silentLogger() }),
  });
});

afterAll(async () => {
  await server?.close();
});

describe('two payouts with one SEPA reference and one bank credit', () => {
  it('report payouts: the credit is the first-announced payout\'s; the later one shows none', async () => {
    const rows = await fetchAll(payoutsSource(db, { environment: 'sandbox' }), undefined, 100);
    const byUuid = Object.fromEntries(rows!.map((r) => [r.payout_uuid, r]));
    expect(byUuid[first]).toMatchObject({ sepa_reference: SEPA, matched_bank_line: 'K1 2026-03-04', credited_cents: '10000', difference: '0.00' });
    expect(byUuid[later]).toMatchObject({ sepa_reference: SEPA, matched_bank_line: null, credited_cents: null, difference: null });
    expect(rows!.find((r) => r.sepa_reference === TEXT_ONLY)).toMatchObject({ matched_bank_line: 'K2 2026-03-05', credited_cents: '5000' });
  });

  it('report invoices: only the invoice of the holding payout reached the bank', async () => {
    const rows = await fetchAll(invoicesSource(db, { environment: 'sandbox' }), undefined, 100);
    const byRef = Object.fromEntries(rows!.map((r) => [r.reference, r]));
    expect(byRef['INV-1']).toMatchObject({ payout_uuid: first, bank_credit_date: '2026-03-04' });
    expect(byRef['INV-2']).toMatchObject({ payout_uuid: later, bank_credit_date: null, days_to_cash: null });
  });

  it('the overview counts the holder and the text-only credit as matched and the later claimant unmatched, and the pass names it', async () => {
    const response = await request(`${server.url}/api/overview`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.statusCode).toBe(200);
    const overview = (await response.body.json()) as { payouts_by_week: { week: string; matched: number; unmatched: number }[] };
    expect(overview.payouts_by_week).toEqual([{ week: '2026-W10', matched: 2, unmatched: 1 }]);
    const duplicates = await findings(db, 'duplicate_event');
    expect(duplicates).toEqual([expect.objectContaining({ entity_id: later, subject: SEPA, expected: first, observed: later, status: 'open' })]);
  });
});
