import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importStatement } from '../../src/statements/import.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { hasChromium, openPage, type PageUnderTest } from './browser.js';
import { importReport, invoiceEvent, invoiceRow, OTHER_IBAN, pass, payoutEvent, PROVIDER_IBAN, transferOf } from '../payout-reports/fixtures.js';
import { csvStatement, type Line } from '../statements/fixtures.js';

/**
 * A merchant paid in EUR and in GBP (contract terms in EUR). Two findings' money is in GBP although
 * nothing on the page says EUR for it:
 *  - a buyer paid a GBP invoice straight into the merchant's GBP account (buyer_paid_merchant_directly):
 *    the bank line is GBP, the finding's observed amount is that line's;
 *  - a GBP payout (its payout report's rows say GBP) that the bank booked converted, as EUR 1,170.00:
 *    how-it-decides / payout-amount-mismatch.ts: "EUR 1,170.00 booked for a GBP 1,000.00 payout says
 *    nothing about the amount". The payouts view must not show the report's GBP as € nor subtract
 *    the GBP amount from the EUR credit.
 */
const TOKEN = 'ada-0f1e2d3c4b5a69788796a5b4c3d2e1f0';
const EUR_TERMS = JSON.stringify({ currency: 'EUR', mdr: [{ percent: '2.5' }], fixed_fee_cents: 30, vat_percent: '19' });
const PAYOUT_SEPA = 'PO2026030500000091';

const statementIn = (currency: string, lines: Line[], name: string) =>
  (db: TestDatabase) => importStatement(db, 'sandbox', Buffer.from(csvStatement(lines).replaceAll(',EUR,', `,${currency},`)), name);

let db: TestDatabase;
let ui: PageUnderTest;
let page: Page;
/** The GBP payout's amount in cents (its report's Transfer Amount): 998.26. */
let net = 0n;

beforeAll(async () => {
  db = await createTestDatabase('page_mixed_currencies');
  // The buyer of INV-GB-7 pays GBP 50.00 to the merchant directly.
  await invoiceEvent(db, { ref: 'INV-GB-7', eventTime: '2026-03-01T06:00:00.000000000Z' });
  await statementIn('GBP', [{ ref: 'DIRECT-GB-1', date: '2026-03-03', cents: 5_000n, sepa: 'INV-GB-7', iban: OTHER_IBAN }], 'gbp.csv')(db);
  // A GBP payout of 998.26 (report rows in GBP) booked by the merchant's EUR account as EUR 1,170.00.
  await invoiceEvent(db, { ref: 'INV-GB-8', eventTime: '2026-03-01T06:00:00.000000000Z' });
  const rows = [{ ...invoiceRow({ doc: 'INV-GB-8', cents: 102_924n }), currency: 'GBP' as const }];
  net = transferOf(rows);
  await payoutEvent(db, { sepa: PAYOUT_SEPA, cents: transferOf(rows), eventTime: '2026-03-05T06:00:00.000000000Z', invoices: ['INV-GB-8'] });
  await importReport(db, rows.map((r) => ({ ...r, payoutReference: PAYOUT_SEPA })));
  await statementIn('EUR', [{ ref: 'FX-1', date: '2026-03-06', cents: 117_000n, sepa: PAYOUT_SEPA, iban: PROVIDER_IBAN }], 'eur.csv')(db);
  await pass(db, new Date('2026-03-10T12:00:00Z'));
  ui = await openPage(db, { token: TOKEN, settings: { DATABASE_URL: db.url, CONTRACT_TERMS: EUR_TERMS, PAYOUT_SOURCE_IBANS: PROVIDER_IBAN } });
  page = ui.page;
  await page.goto(ui.server.url);
  await ui.signIn();
}, 120_000);

afterAll(async () => {
  await ui?.close();
});

/** Cents in £ as the browser's locale (en-US here) writes them. */
const pounds = (cents: bigint) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'GBP' }).format(Number(cents) / 100);

/** The dd after the dt named `name` in the finding's facts. */
async function fact(name: string): Promise<string> {
  const lines = (await page.locator('#evidence-body dl.facts').innerText()).split('\n');
  return lines[lines.indexOf(name) + 1] ?? '';
}

describe.skipIf(!hasChromium)('EUR and GBP money on one page', () => {
  it('buyer_paid_merchant_directly on a GBP bank credit: observed and the sentence in £ like its bank line, not €', async () => {
    const [finding] = await db.sql<{ id: string; observed: string }[]>`
      select id::text, observed from discrepancies where kind = 'buyer_paid_merchant_directly'`;
    expect(finding?.observed).toBe('5000');
    await page.goto(`${ui.server.url}/#discrepancies`);
    await page.waitForSelector('#disc tbody tr');
    await page.getByRole('button', { name: `Open evidence of discrepancy ${finding!.id}` }).click();
    await page.waitForSelector('dialog#evidence[open]');
    const bankLine = await page.locator('#evidence-body table', { hasText: 'DIRECT-GB-1' }).innerText();
    expect(bankLine).toContain('£50.00');
    expect({ observed: await fact('Observed'), details: await fact('Details') }).toEqual({
      observed: '£50.00',
      details: expect.stringContaining('£50.00'),
    });
  }, 60_000);

  it('payouts view: a GBP payout booked as EUR shows its report in £ and states no €-minus-£ difference', async () => {
    // A fresh load: the evidence dialog of the test before may still be open.
    await page.goto('about:blank');
    await page.goto(`${ui.server.url}/#payouts`);
    await page.waitForSelector('#payouts tbody tr');
    const row = page.locator('#payouts tbody tr', { hasText: PAYOUT_SEPA }).first();
    const rowText = await row.innerText();
    await row.getByRole('button', { name: /^Show composition/ }).click();
    await page.waitForSelector('#payouts tr.detail .composition table');
    const netRow = await page.locator('#payouts tr.detail tbody tr', { hasText: 'Net transfer' }).first().locator('td').allInnerTexts();
    const notes = await page.locator('#payouts tr.detail .composition p').allInnerTexts();
    expect({
      // Part, Payout report, Payout event, Bank credit
      reportNet: netRow[1],
      payoutEvent: netRow[2],
      bankCredit: netRow[3],
      notes,
      row: rowText,
    }).toEqual({
      reportNet: pounds(net),
      payoutEvent: pounds(net),
      // Booked in another currency: not compared, and said so (its line names EUR).
      bankCredit: '',
      notes: [expect.stringMatching(/^The bank booked it in another currency than GBP .*FX-1 2026-03-06 EUR/)],
      row: expect.not.stringMatching(/differs/),
    });
  }, 60_000);

  it('the payouts CSV download: the GBP payout is not in EUR, and no EUR-minus-GBP difference', async () => {
    await page.goto('about:blank');
    await page.goto(`${ui.server.url}/#payouts`);
    await page.waitForSelector('#payouts tbody tr');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#dl-payouts-csv')]);
    const file = await download.path();
    const lines = (await readFile(file, 'utf8')).replace(/^\uFEFF/, '').split(/\r?\n/);
    const header = lines[0]!.split(',');
    const cells = lines.find((l) => l.includes(PAYOUT_SEPA))!.split(',');
    const at = (name: string) => cells[header.indexOf(name)];
    expect({ amount: at('amount'), currency: at('currency'), difference: at('difference') })
      .toEqual({ amount: '998.26', currency: 'GBP', difference: '' });
  }, 60_000);
});
