import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { loadConfig } from '../../src/config/load.js';
import { operatorRoutes } from '../../src/http/operator-api.js';
import { startHttpServer, type HttpServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/log/logger.js';
import { payoutsSource } from '../../src/reports/payouts.js';
import { fetchAll } from '../../src/reports/source.js';
import { importStatement } from '../../src/statements/import.js';
import { createTestDatabase, useTestDatabase, type TestDatabase } from '../helpers/database.js';
import { importReport, invoiceEvent, invoiceRow, payoutEvent as reportPayoutEvent, transferOf } from '../payout-reports/fixtures.js';
import { MERCHANT_IBAN, PROVIDER_IBAN, payoutEvent } from '../statements/fixtures.js';

/**
 * A payout of 100.00 whose SEPA reference the bank shows on two credits, EUR 60.00 and GBP 40.00.
 * Amounts of different currencies are never added (docs/how-it-decides.md): before, the payouts
 * report showed "credited 100.00 EUR, difference 0.00" and the page counted the payout matched.
 */
let db: TestDatabase;
useTestDatabase('payout_credit_currencies', (d) => (db = d));
const SEPA = 'PO2026030300000777';
const TOKEN = 'operator-token-for-the-currency-test-0123456789';
let payout: string;
let server: HttpServer;

const head = 'entry_reference,booking_date,value_date,amount,currency,credit_debit,counterparty_name,counterparty_iban,end_to_end_reference,remittance_information,account_iban';
const line = (ref: string, amount: string, currency: string, sepa = SEPA) =>
  [ref, '2026-03-04', '2026-03-04', amount, currency, 'CRDT', 'Party', PROVIDER_IBAN, sepa, `Auszahlung ${sepa}`, MERCHANT_IBAN].join(',');

beforeAll(async () => {
  payout = await payoutEvent(db, { sepa: SEPA, cents: 10_000n, eventTime: '2026-03-03T06:00:00.000000000Z' });
  await importStatement(db, 'sandbox', Buffer.from(`${[head, line('K1', '60.00', 'EUR'), line('K2', '40.00', 'GBP')].join('\r\n')}\r\n`), 'mixed.csv');
  const config = loadConfig({ OPERATOR_TOKEN: TOKEN, PROVIDER_ENV: 'sandbox' });
  server = await startHttpServer({ host: '127.0.0.1', port: 0, log: silentLogger(), name: 'test', routes: operatorRoutes({ config, database: db, log: silentLogger() }) });
});
afterAll(async () => {
  await server?.close();
});

describe('a payout credited in two currencies', () => {
  it('report payouts lists both lines with their currencies and sums neither', async () => {
    const rows = await fetchAll(payoutsSource(db, { environment: 'sandbox' }), undefined, 100);
    const row = rows!.find((r) => r.payout_uuid === payout)!;
    expect(row.matched_bank_line).toBe('K1 2026-03-04 EUR;K2 2026-03-04 GBP');
    expect({ credited_cents: row.credited_cents, credited_amount: row.credited_amount, difference: row.difference })
      .toEqual({ credited_cents: null, credited_amount: null, difference: null });
  });

  it('the page counts it unmatched, not matched', async () => {
    const answer = await request(`${server.url}/api/overview`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const overview = (await answer.body.json()) as { payouts_by_week: { matched: number; unmatched: number }[] };
    expect(answer.statusCode).toBe(200);
    expect(overview.payouts_by_week.reduce((n, w) => n + w.matched, 0)).toBe(0);
    expect(overview.payouts_by_week.reduce((n, w) => n + w.unmatched, 0)).toBe(1);
  });

  it('a payout credited in one currency still sums its lines', async () => {
    const other = await payoutEvent(db, { sepa: 'PO2026030300000778', cents: 5_000n, eventTime: '2026-03-03T07:00:00.000000000Z' });
    await importStatement(db, 'sandbox', Buffer.from(`${[head, line('K3', '20.00', 'EUR', 'PO2026030300000778'), line('K4', '30.00', 'EUR', 'PO2026030300000778')].join('\r\n')}\r\n`), 'one.csv');
    const rows = await fetchAll(payoutsSource(db, { environment: 'sandbox' }), undefined, 100);
    const row = rows!.find((r) => r.payout_uuid === other)!;
    expect({ lines: row.matched_bank_line, credited: row.credited_cents, difference: row.difference, currency: row.currency })
      .toEqual({ lines: 'K3 2026-03-04;K4 2026-03-04', credited: '5000', difference: '0.00', currency: 'EUR' });
  });
});

describe('a GBP payout (its report says GBP) booked converted into a EUR account, for the same number of cents', () => {
  it('is not compared: report payouts leaves credited and difference empty, and the page counts it unmatched', async () => {
    const d = await createTestDatabase('payout_credit_other_currency');
    const sepa = 'PO2026030300000901';
    await invoiceEvent(d, { ref: 'INV-FX', order: randomUUID(), eventTime: '2026-03-01T06:00:00.000000000Z' });
    const rows = [{ ...invoiceRow({ doc: 'INV-FX', order: 'ORD-FX', cents: 10_000n, ref: sepa }), currency: 'GBP' as const }];
    const cents = transferOf(rows);
    const uuid = await reportPayoutEvent(d, { sepa, cents, eventTime: '2026-03-02T06:00:00.000000000Z', invoices: ['INV-FX'] });
    await importReport(d, rows);
    const amount = `${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`;
    await importStatement(d, 'sandbox', Buffer.from(`${[head, line('FX1', amount, 'EUR', sepa)].join('\r\n')}\r\n`), 'fx.csv');

    const report = (await fetchAll(payoutsSource(d, { environment: 'sandbox' }), undefined, 100))!.find((r) => r.payout_uuid === uuid)!;
    expect({ currency: report.currency, lines: report.matched_bank_line, credited: report.credited_cents, difference: report.difference })
      .toEqual({ currency: 'GBP', lines: 'FX1 2026-03-04 EUR', credited: null, difference: null });

    const config = loadConfig({ OPERATOR_TOKEN: TOKEN, PROVIDER_ENV: 'sandbox' });
    const own = await startHttpServer({ host: '127.0.0.1', port: 0, log: silentLogger(), name: 'test', routes: operatorRoutes({ config, database: d, log: silentLogger() }) });
    try {
      const answer = await request(`${own.url}/api/overview`, { headers: { authorization: `Bearer ${TOKEN}` } });
      const overview = (await answer.body.json()) as { payouts_by_week: { matched: number; unmatched: number }[] };
      expect(overview.payouts_by_week.reduce((n, w) => n + w.matched, 0)).toBe(0);
      expect(overview.payouts_by_week.reduce((n, w) => n + w.unmatched, 0)).toBe(1);
    } finally {
      await own.close();
    }
  });
});
