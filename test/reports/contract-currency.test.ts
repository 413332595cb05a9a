import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { loadConfig } from '../../src/config/load.js';
import { operatorRoutes } from '../../src/http/operator-api.js';
import { startHttpServer, type HttpServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/log/logger.js';
import type { DeductionTerms } from '../../src/reconcile/types.js';
import { discrepancySource } from '../../src/reports/discrepancies.js';
import { payoutsSource } from '../../src/reports/payouts.js';
import { unstatedCurrency } from '../../src/payout-reports/contract-terms.js';
import { fetchAll } from '../../src/reports/source.js';
import { importStatement } from '../../src/statements/import.js';
import { createTestDatabase } from '../helpers/database.js';
import { testMetrics } from '../helpers/metrics.js';
import { factoringEvent, importReport, invoiceEvent, invoiceRow, pass, payoutEvent, PROVIDER_IBAN, TERMS, transferOf } from '../payout-reports/fixtures.js';

/**
 * A merchant whose contract and bank account are in pounds (provider-merchant-docs.md: "Amounts are
 * in the payout's currency (EUR or GBP)"; docs/contract-terms.md: `currency` EUR or GBP).
 */
const GB_IBAN = 'GB82WEST12345698765432';
const GBP_TERMS: DeductionTerms = { ...TERMS, currency: 'GBP' };
const TOKEN = 'operator-token-for-the-gbp-merchant-test-0123456789';

const day = (d: number) => `2026-03-${String(d).padStart(2, '0')}T06:00:00.000000000Z`;
const at = (d: number) => new Date(`2026-03-${String(d).padStart(2, '0')}T12:00:00Z`);

const head = 'entry_reference,booking_date,value_date,amount,currency,credit_debit,counterparty_name,counterparty_iban,end_to_end_reference,remittance_information,account_iban';
const line = (ref: string, date: string, amount: string, sepa: string, iban = PROVIDER_IBAN) =>
  [ref, date, date, amount, 'GBP', 'CRDT', 'Party', iban, sepa, `Payout ${sepa}`, GB_IBAN].join(',');
const gbpStatement = (lines: string[]) => Buffer.from(`${[head, ...lines].join('\r\n')}\r\n`);

const servers: HttpServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

describe('a GBP merchant: the currency of a finding about a GBP payout', () => {
  it('payout_not_on_statement of a payout whose report and account are GBP is reported in GBP, not EUR', async () => {
    const d = await createTestDatabase('currency_not_on_stmt');
    // P1: credited in GBP (so the GBP account is known as the payout account).
    await payoutEvent(d, { sepa: 'PO2026030200000101', cents: 5_000n, eventTime: day(2) });
    // P2: a GBP payout (its payout report says GBP) that never reaches the GBP account.
    await invoiceEvent(d, { ref: 'INV-G2', order: randomUUID(), eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-G2', receivedAt: day(1) });
    const rows = [{ ...invoiceRow({ doc: 'INV-G2', order: 'ORD-G2', cents: 10_000n, ref: 'PO2026030200000102' }), currency: 'GBP' as const }];
    const p2 = await payoutEvent(d, { sepa: 'PO2026030200000102', cents: transferOf(rows), eventTime: day(2), invoices: ['INV-G2'] });
    await importReport(d, rows);
    // The GBP account's statement covers 03-01 .. 03-07: the whole settlement window of P2.
    await importStatement(d, 'sandbox', gbpStatement([
      line('K1', '2026-03-01', '1.00', 'RF000000000001', 'GB33BUKB20201555555555'),
      line('K2', '2026-03-03', '50.00', 'PO2026030200000101'),
      line('K3', '2026-03-07', '2.00', 'RF000000000002', 'GB33BUKB20201555555555'),
    ]), 'gbp.csv');
    await pass(d, at(9), { terms: GBP_TERMS });

    const payouts = await fetchAll(payoutsSource(d, { environment: 'sandbox' }), undefined, 100);
    const payoutRow = payouts!.find((r) => r.payout_uuid === p2)!;
    expect(payoutRow.currency).toBe('GBP'); // the payouts report knows P2 is in pounds

    const found = (await fetchAll(discrepancySource(d, { environment: 'sandbox', status: 'all', kinds: ['payout_not_on_statement'] }), undefined, 100))!;
    expect(found.map((r) => r.entity_id)).toEqual([p2]);
    // The same payout, the same amount, the same currency in the discrepancy report.
    expect.soft({ amount: found[0]!.amount, currency: found[0]!.currency }, 'discrepancy report of a GBP payout').toEqual({ amount: payoutRow.amount, currency: 'GBP' });

    // The overview's money at stake (the page's "Money at stake") files it under GBP too.
    const config = loadConfig({ OPERATOR_TOKEN: TOKEN, PROVIDER_ENV: 'sandbox' });
    const server = await startHttpServer({ host: '127.0.0.1', port: 0, log: silentLogger(), name: 'test', routes: operatorRoutes({ config, database: d, log: silentLogger() }) });
    servers.push(server);
    const answer = await request(`${server.url}/api/overview`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const overview = (await answer.body.json()) as Record<string, unknown>;
    const stake = JSON.stringify(overview);
    const entry = /\{"kind":"payout_not_on_statement","currency":"([A-Z]+)"/.exec(stake);
    expect(entry, stake).not.toBeNull();
    expect.soft(entry![1], 'overview money at stake of a GBP payout').toBe('GBP');
  });
});

describe('a GBP merchant: payout report rows that name no currency', () => {
  it('the payouts report and the deductions metric take them in the contract currency GBP, as the deduction rule does', async () => {
    const d = await createTestDatabase('currency_unstated_rows');
    await invoiceEvent(d, { ref: 'INV-U', order: randomUUID(), eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-U', receivedAt: day(1) });
    const sepa = 'PO2026030200000201';
    const good = invoiceRow({ doc: 'INV-U', order: 'ORD-U', cents: 10_000n, ref: sepa });
    // A report without a Currency column and with plain amounts (no £ sign): currency null.
    // Its discount is 1.00 above the contract's 2.5 % (a payout_deduction_mismatch).
    const row = { ...good, currency: null, discountCents: 350n, totalDeductionsCents: good.totalDeductionsCents + 100n, transferAmountCents: good.transferAmountCents - 100n };
    const payout = await payoutEvent(d, { sepa, cents: transferOf([row]), eventTime: day(2), invoices: ['INV-U'] });
    await importReport(d, [row]);
    await pass(d, at(3), { terms: GBP_TERMS });

    const [deduction] = await d.sql<{ evidence: { currency?: string } }[]>`
      select evidence from discrepancies where kind = 'payout_deduction_mismatch'`;
    expect(deduction?.evidence.currency).toBe('GBP'); // the rule: "a row naming none is the contract's"

    // As the operator API and `report payouts` read it: with the contract's currency (unstatedCurrency).
    const payouts = await fetchAll(payoutsSource(d, { environment: 'sandbox', currency: unstatedCurrency(GBP_TERMS) }), undefined, 100);
    const payoutRow = payouts!.find((r) => r.payout_uuid === payout)!;
    expect.soft(payoutRow.currency, 'payouts report currency of the same payout').toBe('GBP');

    const text = await testMetrics(d).registry.metrics();
    const discount = [...text.matchAll(/^bnpl_recon_payout_deductions_cents\{part="discount",currency="(\w+)"\} (\d+)$/gm)].map((m) => `${m[1]} ${m[2]}`);
    expect.soft(discount, 'deductions metric of a GBP contract').toEqual(['GBP 350']);
  });
});

describe('a GBP merchant: invoices waiting for a payout', () => {
  it('the invoices report and its ageing name the contract currency GBP, not EUR', async () => {
    const d = await createTestDatabase('currency_invoice_waiting');
    await invoiceEvent(d, { ref: 'INV-W', order: randomUUID(), eventTime: day(1) });
    await factoringEvent(d, { ref: 'INV-W', cents: 12_000n, receivedAt: day(1) });
    await pass(d, at(3), { terms: GBP_TERMS });

    // The pass itself records the empty deductions in the contract's currency (reconcile/invoice-totals.ts).
    const text = await testMetrics(d).registry.metrics();
    expect(text).toContain('bnpl_recon_payout_deductions_cents{part="discount",currency="GBP"} 0\n');

    // Through the operator API, as the page and its downloads read it (the daemon's config holds CONTRACT_TERMS).
    const config = loadConfig({
      OPERATOR_TOKEN: TOKEN, PROVIDER_ENV: 'sandbox',
      CONTRACT_TERMS: JSON.stringify({ currency: 'GBP', fixed_fee_cents: 30, vat_percent: '19', mdr: [{ percent: '2.5' }] }),
    });
    const server = await startHttpServer({ host: '127.0.0.1', port: 0, log: silentLogger(), name: 'test', routes: operatorRoutes({ config, database: d, log: silentLogger() }) });
    servers.push(server);
    const listed = await request(`${server.url}/api/invoices`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const invoices = (await listed.body.json()) as { amount: string; currency: string }[];
    expect(listed.statusCode).toBe(200);
    expect(invoices.map((r) => r.amount)).toEqual(['120.00']);
    expect.soft(invoices[0]!.currency, 'invoices report currency of a GBP merchant\'s invoice').toBe('GBP');

    const answer = await request(`${server.url}/api/invoices?ageing=1`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const ageing = (await answer.body.json()) as { bucket: string; amount: string; currency: string }[];
    expect(answer.statusCode).toBe(200);
    const bucket = ageing.find((b) => b.amount === '120.00');
    expect(bucket).toBeDefined();
    expect.soft(bucket!.currency, 'ageing currency with CONTRACT_TERMS currency GBP').toBe('GBP');
  });
});
