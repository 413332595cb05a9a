import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { hasChromium, openPage, type PageUnderTest } from './browser.js';
import { factoringEvent, invoiceEvent, pass, TERMS } from '../payout-reports/fixtures.js';

/**
 * A merchant whose contract is in GBP (CONTRACT_TERMS currency GBP): the provider's invoice and
 * factoring events name no currency, so the server reads their money as the contract's
 * (unstatedCurrency). An invoice_not_paid_out finding's expected amount and its sentence's "N cents"
 * are that invoice's amount: in £, not €.
 */
const TOKEN = 'ada-7a1b2c3d4e5f60718293a4b5c6d7e8f9';
const GBP_TERMS = JSON.stringify({ currency: 'GBP', mdr: [{ percent: '3.0' }], fixed_fee_cents: 30, vat_percent: '20' });

let db: TestDatabase;
let ui: PageUnderTest;
let page: Page;

beforeAll(async () => {
  db = await createTestDatabase('page_contract_currency');
  // Invoice INV-GB-1 of 123.45 (the factored amount), approved on 1 March; nothing pays it out.
  await invoiceEvent(db, { ref: 'INV-GB-1', eventTime: '2026-03-01T06:00:00.000000000Z' });
  await factoringEvent(db, { ref: 'INV-GB-1', cents: 12_345n, receivedAt: '2026-03-01T07:00:00Z' });
  await pass(db, new Date('2026-03-12T12:00:00Z'), { terms: { ...TERMS, currency: 'GBP' } });
  ui = await openPage(db, { token: TOKEN, settings: { DATABASE_URL: db.url, CONTRACT_TERMS: GBP_TERMS } });
  page = ui.page;
  await page.goto(ui.server.url);
  await ui.signIn();
}, 120_000);

afterAll(async () => {
  await ui?.close();
});

describe.skipIf(!hasChromium)('GBP contract: a finding whose money names no currency', () => {
  it('the invoices view shows INV-GB-1 in £ (the server reads unstated money as the contract\'s)', async () => {
    await page.goto(`${ui.server.url}/#invoices`);
    await page.waitForSelector('#invoices tbody tr');
    const row = await page.locator('#invoices tbody tr', { hasText: 'INV-GB-1' }).innerText();
    expect(row).toContain('£');
  }, 60_000);

  it('invoice_not_paid_out: expected and the sentence are shown in £ like the invoices view, not €', async () => {
    const [finding] = await db.sql<{ id: string; expected: string; details: string }[]>`
      select id::text, expected, details from discrepancies where kind = 'invoice_not_paid_out'`;
    expect(finding?.expected).toBe('12345');
    expect(finding?.details).toContain('12345 cents');
    await page.goto(`${ui.server.url}/#discrepancies`);
    await page.waitForSelector('#disc tbody tr');
    await page.getByRole('button', { name: `Open evidence of discrepancy ${finding!.id}` }).click();
    await page.waitForSelector('dialog#evidence[open]');
    const facts = await page.locator('#evidence-body dl.facts').innerText();
    const expected = facts.split('\n').find((l, i, all) => all[i - 1] === 'Expected') ?? facts;
    const details = facts.split('\n').find((l, i, all) => all[i - 1] === 'Details') ?? facts;
    expect({ expected, details }).toEqual({
      expected: expect.stringContaining('£'),
      details: expect.stringContaining('£'),
    });
    expect(facts).not.toContain('€');
  }, 60_000);
});
