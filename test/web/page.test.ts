import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAULT_RATES } from '../../sim/index.js';
import { sign } from '../../sim/signing.js';
import { importStatement, importStatementFile } from '../../src/statements/import.js';
import { mt940Statement } from '../statements/fixtures.js';
import { importPayoutReportFile } from '../../src/payout-import/file.js';
import { DISCREPANCY_COLUMNS } from '../../src/reports/discrepancies.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { sleep, startStack, waitFor, type Stack } from '../e2e/harness.js';
import { convertToFods, readFods } from './libreoffice.js';

/**
 * The accountants' page in headless Chromium (Debian's, driven by playwright-core) against a daemon
 * fed by the simulator with faults on, plus two order webhooks the provider never knew of: one whose
 * reference is a spreadsheet formula, one with an umlaut. Then the downloads opened in LibreOffice.
 * Screenshots and downloads are kept under test-results/page/. The browser runs under a German
 * locale and the daemon shows times in Europe/Berlin (DISPLAY_TIME_ZONE): amounts read '1.234,56 €'.

 */
const TOKEN = 'ada-8d387627e5dbbb12a65f461eada467bf';
const HOSTILE = '=HYPERLINK("http://evil.invalid/steal","Open invoice")';
const UMLAUT = 'Müller-Bürobedarf-4711';
const ARTEFACTS = path.resolve('test-results/page');
const DAY_MS = 86_400_000;
// Small, so the page's answer to a file over it is seen.
const UPLOAD_LIMIT = 64 * 1024;
const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let db: TestDatabase;
let stack: Stack;
let context: BrowserContext;
let page: Page;
let profile: string;
let reportsImported = 0;
const requested: string[] = [];
const consoleErrors: string[] = [];
const downloads: Record<'csv' | 'xlsx', string> = { csv: '', xlsx: '' };

async function orphanWebhook(reference: string): Promise<void> {
  const body = Buffer.from(JSON.stringify({
    topic: 'order/confirmed', order_uuid: randomUUID(), order_state: 'confirmed', external_reference_id: reference,
    event_time: new Date().toISOString(),
    buyer: { uuid: randomUUID(), name: 'Müller GmbH' },
  }));
  const response = await request(`${stack.daemon.url}/webhooks`, {
    method: 'POST', body, headers: { 'content-type': 'application/json', [stack.sim.signatureHeader]: sign(body, stack.sim.secrets.sandbox) },
  });
  expect(response.statusCode, await response.body.text()).toBe(200);
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: path.join(ARTEFACTS, `${name}.png`), fullPage: true });
}

/** axe-core in the page (evaluated over CDP, so the page's CSP stays on); serious and critical violations. */
async function axe(scope: string): Promise<{ id: string; impact: string; help: string; targets: string[] }[]> {
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(axeSource);
  const found = (await page.evaluate(`axe.run(${JSON.stringify(scope)}, { resultTypes: ['violations'] })
    .then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) })))`)) as {
    id: string; impact: string; help: string; targets: string[];
  }[];
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

beforeAll(async () => {
  await mkdir(ARTEFACTS, { recursive: true });
  db = await createTestDatabase('web_page', { poolMax: 3 });
  stack = await startStack({
    db, seed: 14, faults: DEFAULT_FAULT_RATES, ordersPerDay: 60, graceSeconds: 2,
    env: { OPERATOR_TOKENS: `ada:${TOKEN}`, PAYOUT_REFERENCE_PATTERN: '^PO[0-9]{16}$', DISPLAY_TIME_ZONE: 'Europe/Berlin', OPERATOR_UPLOAD_MAX_BYTES: String(UPLOAD_LIMIT) },
  });
  const { sim, daemon } = stack;
  await orphanWebhook(HOSTILE);
  await orphanWebhook(UMLAUT);
  await sim.advance(2 * DAY_MS);
  await sim.drain();
  const dir = await mkdtemp(path.join(tmpdir(), 'page-statements-'));
  const camt = (await sim.writeStatements(dir)).find((f) => path.basename(f).startsWith('sandbox') && f.endsWith('.xml'));
  if (camt) await importStatementFile(daemon.ctx.database, 'sandbox', camt);
  // The provider's payout reports, so the Payouts view has compositions; one the simulator made to
  // disagree with its payout may be refused (no payout fits it), which is the import's business.
  for (const file of (await sim.writePayoutReports(dir, { format: 'csv' })).filter((f) => path.basename(f).startsWith('sandbox'))) {
    try {
      reportsImported += (await importPayoutReportFile(daemon.ctx.database, 'sandbox', file)) ? 1 : 0;
    } catch {
      // refused: counted by what is missing from payout_report_rows below
    }
  }
  await rm(dir, { recursive: true, force: true });
  // A bank credit from the provider's account that no payout explains, its entry reference hostile.
  const statement = [
    'entry_reference,booking_date,value_date,amount,currency,credit_debit,counterparty_name,counterparty_iban,end_to_end_reference,remittance_information,account_iban',
    `"+1-555-CALL",2026-03-04,2026-03-04,1234.56,EUR,CRDT,Müller Zahlungsdienste,${sim.bank.sandbox.providerIban},PO9999999999999999,Auszahlung,${sim.bank.sandbox.merchantIban}`,
  ].join('\r\n');
  await importStatement(daemon.ctx.database, 'sandbox', Buffer.from(`${statement}\r\n`), 'hostile.csv');
  await sleep(2600);
  await daemon.pollNow();
  await sleep(2600);
  await daemon.pollNow();
  await daemon.reconcileNow();
  await waitFor('the hostile orphan finding', async () => {
    const [row] = await db.sql`select id from discrepancies where external_reference_id = ${HOSTILE} and kind = 'orphan_webhook'`;
    return row;
  }, 20_000);

  profile = await mkdtemp(path.join(tmpdir(), 'chromium-profile-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, args: ARGS, headless: true, acceptDownloads: true, viewport: { width: 1280, height: 900 }, locale: 'de-DE',
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('request', (r) => requested.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
}, 240_000);

afterAll(async () => {
  await context?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
  await stack?.stop();
});

describe.skipIf(!existsSync(CHROMIUM))('the page in Chromium', () => {
  it('signs in with the keyboard, keeps the token for the session only, and shows the environment unmistakably', async () => {
    await page.goto(stack.daemon.url);
    const fcp = await page.evaluate(`new Promise((done) => setTimeout(() => done(performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null), 200))`);
    await writeFile(path.join(ARTEFACTS, 'first-contentful-paint-ms.txt'), `${String(fcp)}\n`);
    await shot('1-sign-in');
    expect(await axe('body')).toEqual([]);
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.className')).toBe('skip');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.id')).toBe('token');
    await page.keyboard.type('wrong-token-0123456789');
    await page.keyboard.press('Enter');
    await expectText('#sign-in-error', 'not known');
    await page.fill('#token', TOKEN);
    await page.keyboard.press('Enter');
    await expectText('#who', 'Signed in as ada');
    await expectText('#env-banner', 'SANDBOX');
    expect(await page.title()).toBe('[SANDBOX] bnpl-recon');
    expect(page.url()).not.toContain(TOKEN);
    expect(await page.evaluate('JSON.stringify(localStorage)')).toBe('{}');
    expect(await page.evaluate(`sessionStorage.getItem('bnpl-recon-token')`)).toBe(TOKEN);
  });

  it('shows the overview: open by kind and age, money at stake, open over time, payouts per week, freshness', async () => {
    await page.waitForSelector('#h-open');
    const [open] = await db.sql<{ n: number }[]>`select count(*)::int as n from discrepancies where status = 'open'`;
    await expectText('#h-open', `Open discrepancies: ${open!.n}`);
    expect(open!.n).toBeGreaterThan(2);
    await expectText('#view-overview', 'orphan webhook');
    await expectText('#view-overview', 'Last complete poll');
    expect(await page.locator('svg.chart').count()).toBeGreaterThanOrEqual(1);
    await shot('2-overview');
    expect(await axe('main')).toEqual([]);
  });

  it('filters and sorts the discrepancies, opens the evidence and acknowledges with a note', async () => {
    await page.click('a[data-view="discrepancies"]');
    await page.waitForSelector('#disc tbody tr');
    await page.selectOption('#f-kind', 'orphan_webhook');
    await page.click('#filters button[type="submit"]');
    await waitFor('the orphan filter', async () => ((await page.locator('#disc tbody tr').allInnerTexts()).every((t) => t.includes('orphan webhook')) ? true : undefined), 10_000);
    await expectText('#disc', HOSTILE);
    await page.fill('#f-q', 'müller-bür');
    await page.click('#filters button[type="submit"]');
    await waitFor('one row for the search', async () => ((await page.locator('#disc tbody tr').count()) === 1 ? true : undefined), 10_000);
    await expectText('#disc', UMLAUT);
    await page.fill('#f-q', '');
    await page.selectOption('#f-kind', '');
    await page.click('#filters button[type="submit"]');
    await page.waitForSelector('#disc tbody tr:nth-child(3)');
    // The rows come in id order; sorting by id again reverses them.
    expect(await page.getAttribute('#disc th:nth-child(1)', 'aria-sort')).toBe('ascending');
    await page.click('#disc th:nth-child(1) button');
    expect(await page.getAttribute('#disc th:nth-child(1)', 'aria-sort')).toBe('descending');
    const shown = (await page.locator('#disc tbody tr td:first-child').allInnerTexts()).map(Number);
    expect(shown).toEqual([...shown].sort((a, b) => b - a));
    await shot('3-discrepancies');
    expect(await axe('main')).toEqual([]);

    const [finding] = await db.sql<{ id: string }[]>`select id::text from discrepancies where external_reference_id = ${UMLAUT}`;
    const openButton = page.getByRole('button', { name: `Open evidence of discrepancy ${finding!.id}` });
    await openButton.focus();
    await page.keyboard.press('Enter');
    await page.waitForSelector('dialog#evidence[open]');
    await expectText('#evidence-body', 'Webhook deliveries (1)');
    await page.click('#evidence-body details summary');
    await expectText('#evidence-body pre', `"external_reference_id":"${UMLAUT}"`);
    await page.getByLabel('Note (why this is acknowledged)').fill('Test order from the provider onboarding, not ours.');
    await page.getByRole('button', { name: 'Acknowledge', exact: true }).click();
    await expectText('#ack-result', 'Acknowledged by ada');
    await expectText('#evidence-body', 'operator:ada');
    // The acknowledgement is shown (who, when, note), not the form again.
    await expectText('#ack-shown', 'By ada on');
    expect(await page.innerText('#ack-shown')).toMatch(/By ada on \d{2}\.\d{2}\.\d{4}, \d{2}:\d{2} (MEZ|MESZ):/);
    await expectText('#ack-shown-note', 'Test order from the provider onboarding, not ours.');
    expect(await page.isVisible('#ack-note')).toBe(false);
    await shot('4-evidence');
    expect(await axe('#evidence')).toEqual([]);
    // A second note is a deliberate step; both notes stay in the history.
    await page.click('#evidence-body .ack-done summary');
    await page.getByLabel('Another note (the one above stays in the history)').fill('Provider confirmed by mail.');
    await page.getByRole('button', { name: 'Add note', exact: true }).click();
    await expectText('#ack-shown-note', 'Provider confirmed by mail.');
    await expectText('#evidence-body table', 'Test order from the provider onboarding, not ours.');
    await expectText('#evidence-body table', 'Provider confirmed by mail.');
    expect(await axe('#evidence')).toEqual([]);
    const history = await db.sql`select actor, reason from discrepancy_history where discrepancy_id = ${finding!.id} and to_status = 'acknowledged' order by id`;
    expect(history).toEqual([
      { actor: 'operator:ada', reason: 'Test order from the provider onboarding, not ours.' },
      { actor: 'operator:ada', reason: 'Provider confirmed by mail.' },
    ]);
    await page.keyboard.press('Escape');
    expect(await page.locator('dialog#evidence[open]').count()).toBe(0);
  });

  it('downloads the current filter as CSV (with BOM) and XLSX', async () => {
    await page.selectOption('#f-status', 'all');
    await page.click('#filters button[type="submit"]');
    await page.waitForSelector('#disc tbody tr');
    for (const format of ['csv', 'xlsx'] as const) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.click(`#dl-${format}`)]);
      expect(download.suggestedFilename()).toMatch(new RegExp(`^discrepancies-sandbox-\\d{4}-\\d{2}-\\d{2}\\.${format}$`));
      downloads[format] = path.join(ARTEFACTS, `discrepancies.${format}`);
      await download.saveAs(downloads[format]);
    }
    const csv = await readFile(downloads.csv);
    expect([...csv.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(csv.toString('utf8')).toContain(`"'${HOSTILE.replaceAll('"', '""')}"`);
    expect((await readFile(downloads.xlsx)).subarray(0, 2).toString('latin1')).toBe('PK');
    await expectText('#dl-status', 'Downloaded discrepancies-sandbox-');
  });

  it('shows the payouts with their bank lines, invoices and differences', async () => {
    await page.click('a[data-view="payouts"]');
    await page.waitForSelector('#payouts tbody tr');
    const [n] = await db.sql<{ n: number }[]>`select count(distinct payout_uuid)::int as n from payout_events where environment = 'sandbox'`;
    expect(n!.n).toBeGreaterThan(0);
    expect(await page.locator('#payouts tbody tr').count()).toBe(n!.n);
    // German locale: the payout's amount as '1.234,56 €', written out here by hand.
    const [one] = await db.sql<{ sepa: string; cents: string }[]>`
      select distinct on (payout_uuid) sepa_instruction_id as sepa, amount_cents::text as cents from payout_events
      where environment = 'sandbox' and amount_cents is not null order by payout_uuid, received_at desc limit 1`;
    const row = page.locator('#payouts tbody tr', { hasText: one!.sepa }).first();
    expect(await row.locator('td').nth(1).innerText()).toBe(germanEuro(one!.cents));
    expect(await page.innerText('#payouts')).not.toContain('EUR');
    await shot('5-payouts');
    expect(await axe('main')).toEqual([]);
  });

  it('shows a payout\'s composition: report, payout event and bank credit side by side', async () => {
    expect(reportsImported).toBeGreaterThan(0);
    const [p] = await db.sql<Record<string, string>[]>`
      select w.payout_uuid::text as payout_uuid, e.sepa_instruction_id as sepa, e.amount_cents::text as amount_cents,
             sum(w.gross_purchase_price_cents) filter (where w.doc_type = 'invoice')::text as gross,
             sum(w.discount_cents + w.transaction_fee_cents) filter (where w.doc_type = 'invoice')::text as fee,
             sum(w.vat_on_discount_cents)::text as vat, sum(w.transfer_amount_cents)::text as net
      from payout_report_rows w
      join lateral (select sepa_instruction_id, amount_cents from payout_events pe where pe.environment = 'sandbox' and pe.payout_uuid = w.payout_uuid
                    order by received_at desc limit 1) e on true
      where w.environment = 'sandbox'
      group by w.payout_uuid, e.sepa_instruction_id, e.amount_cents
      order by w.payout_uuid limit 1`;
    const toggle = page.getByRole('button', { name: `Composition of payout ${p!.sepa}` });
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    await toggle.focus();
    await page.keyboard.press('Enter');
    await page.waitForSelector('#payouts tr.detail .composition table');
    expect(await page.getByRole('button', { name: `Composition of payout ${p!.sepa}` }).getAttribute('aria-expanded')).toBe('true');
    const cells = async (part: string) => (await page.locator('#payouts tr.detail tbody tr', { hasText: part }).first().locator('td').allInnerTexts());
    const heads = await page.locator('#payouts tr.detail thead th').allInnerTexts();
    expect(heads).toEqual(['Part', 'Payout report', 'Payout event', 'Bank credit']);
    expect((await cells('Gross'))[1]).toBe(germanEuro(p!.gross!));
    expect((await cells('Fee'))[1]).toBe(germanEuro(p!.fee!));
    expect((await cells('VAT'))[1]).toBe(germanEuro(p!.vat!));
    const net = await cells('Net transfer');
    expect(net[1]).toBe(germanEuro(p!.net!));
    expect(net[2]).toBe(germanEuro(p!.amount_cents!));
    await shot('5b-payout-composition');
    expect(await axe('main')).toEqual([]);
    await page.getByRole('button', { name: `Composition of payout ${p!.sepa}` }).click();
    expect(await page.locator('#payouts tr.detail').count()).toBe(0);
  });

  it('shows the invoices on their way to cash, the ageing of those not paid out, and downloads them', async () => {
    await page.click('a[data-view="invoices"]');
    await page.waitForSelector('#invoices tbody tr');
    await page.waitForSelector('#ageing tbody tr');
    const api = async (q: string) => (await (await fetch(`${stack.daemon.url}/api/invoices${q}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as Record<string, string | null>[];
    const invoices = await api('');
    expect(invoices.length).toBeGreaterThan(0);
    expect(invoices.length).toBeLessThanOrEqual(500);
    expect(await page.locator('#invoices tbody tr').count()).toBe(invoices.length);
    // One invoice paid out: its row in German, with its payout, dates in Europe/Berlin and the bank credit day.
    const paid = invoices.find((r) => r.payout_uuid && r.amount_cents && r.net_cents) ?? invoices.find((r) => r.payout_uuid && r.amount_cents);
    expect(paid, 'an invoice a payout listed').toBeDefined();
    const cellsOf = async (ref: string) => page.locator('#invoices tbody tr', { hasText: ref }).first().locator('td').allInnerTexts();
    const cells = await cellsOf(paid!.reference!);
    expect(cells[0]).toBe(paid!.reference);
    expect(cells[3]).toBe(germanEuro(paid!.amount_cents!));
    expect(cells[2]).toBe(berlin(paid!.invoice_date!));
    expect(cells[2]).toMatch(/^\d{2}\.\d{2}\.\d{4}, \d{2}:\d{2} (MEZ|MESZ)$/);
    expect(cells[5]).toContain(paid!.payout_sepa_reference!);
    expect(cells[6]).toBe(berlin(paid!.payout_date!));
    if (paid!.net_cents) expect(cells[8]).toBe(germanEuro(paid!.net_cents));
    if (paid!.deductions_cents) expect(cells[7]).toBe(germanEuro(paid!.deductions_cents));
    if (paid!.bank_credit_date) {
      const [y, m, d] = paid!.bank_credit_date.split('-');
      expect(cells[9]).toBe(`${d}.${m}.${y}`);
      expect(cells[10]).toBe(paid!.days_to_cash);
    }
    // The ageing: four buckets and a total, counts and sums as the API has them, in German.
    const ageing = await api('?ageing=1');
    expect(ageing.map((r) => r.bucket)).toEqual(['0-7', '8-30', '31-60', 'over 60']);
    const shown = await page.locator('#ageing tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(shown).toEqual([
      ...ageing.map((r) => [r.bucket, r.invoices, germanEuro(r.amount_cents!)]),
      ['Total', String(ageing.reduce((n, r) => n + Number(r.invoices), 0)), germanEuro(String(ageing.reduce((n, r) => n + BigInt(r.amount_cents!), 0n)))],
    ]);
    // Not yet paid out, by the filter: not canceled and listed by no completed payout.
    await page.selectOption('#inv-state', 'waiting');
    await page.fill('#inv-q', '');
    await page.click('#inv-filters button[type="submit"]');
    const waiting = invoices.filter((r) => r.canceled !== 'true' && r.factoring_state !== 'declined' && !r.payout_uuid);
    expect(await page.locator('#invoices tbody tr').count()).toBe(Math.max(1, waiting.length));
    await page.fill('#inv-q', paid!.reference!);
    await page.selectOption('#inv-state', '');
    await page.click('#inv-filters button[type="submit"]');
    expect(await page.locator('#invoices tbody tr').allInnerTexts()).toHaveLength(1);
    await shot('7-invoices');
    expect(await axe('main')).toEqual([]);
    for (const format of ['csv', 'xlsx'] as const) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.click(`#dl-invoices-${format}`)]);
      expect(download.suggestedFilename()).toMatch(new RegExp(`^invoices-sandbox-\\d{4}-\\d{2}-\\d{2}\\.${format}$`));
      const saved = path.join(ARTEFACTS, `invoices.${format}`);
      await download.saveAs(saved);
      const bytes = await readFile(saved);
      if (format === 'csv') expect(bytes.toString('utf8').replace(/^\uFEFF/, '').split('\r\n')[0]).toMatch(/^invoice_uuid,reference,order_uuid,/);
      else expect(bytes.subarray(0, 2).toString('latin1')).toBe('PK');
    }
    const [ageingFile] = await Promise.all([page.waitForEvent('download'), page.click('#dl-ageing-csv')]);
    expect(ageingFile.suggestedFilename()).toMatch(/^invoice-ageing-sandbox-/);
  });

  it('never shows a person cents: a finding\'s sentence and amounts in the German way', async () => {
    const [credit] = await db.sql<{ id: string; details: string }[]>`
      select id::text, details from discrepancies where environment = 'sandbox' and kind = 'statement_credit_without_payout' and observed = '123456'`;
    expect(credit!.details).toContain('123456 cents');
    await page.click('a[data-view="discrepancies"]');
    await page.selectOption('#f-status', 'all');
    await page.selectOption('#f-kind', 'statement_credit_without_payout');
    await page.click('#filters button[type="submit"]');
    await page.waitForSelector(`button[aria-label="Open evidence of discrepancy ${credit!.id}"]`);
    const row = page.locator('#disc tbody tr', { has: page.locator(`button[aria-label="Open evidence of discrepancy ${credit!.id}"]`) });
    expect(await row.locator('td').nth(5).innerText()).toBe('1.234,56\u00a0€');
    expect(await row.locator('td').nth(6).innerText()).toMatch(/^\d{2}\.\d{2}\.\d{4}, \d{2}:\d{2} (MEZ|MESZ)$/);
    await page.click(`button[aria-label="Open evidence of discrepancy ${credit!.id}"]`);
    await page.waitForSelector('dialog#evidence[open]');
    const facts = await page.innerText('#evidence-body dl.facts');
    expect(facts).toContain('1.234,56\u00a0€');
    expect(facts).not.toMatch(/\d+ cents/);
    expect(facts).not.toContain('123456');
    await shot('8-finding-german');
    await page.click('#evidence-close');
    await page.selectOption('#f-kind', '');
  });

  it('uploads a bank statement (its result shown in German) and refuses an unbalanced one and a file that is no payout report, with the reason', async () => {
    await page.click('a[data-view="overview"]');
    await expectText('#view-overview', 'balances not checked in 1 of 1 statement');
    await page.click('a[data-view="upload"]');
    await page.waitForSelector('#view-upload:not([hidden])');
    expect(await page.getAttribute('#up-statement-result', 'aria-live')).toBe('polite');
    const count = async () => (await db.sql<{ n: number }[]>`select count(*)::int as n from bank_statements`)[0]!.n;
    const before = await count();
    const statement = mt940Statement('31', [{ dc: 'C', cents: 5_562_931n, ref: 'RE-2026-0042' }, { dc: 'D', cents: 1_234n, ref: 'GEB-03' }], 100_000n + 5_562_931n - 1_234n);
    await page.getByLabel('Statement file').setInputFiles({ name: 'Kontoauszug März.sta', mimeType: 'application/octet-stream', buffer: statement });
    await page.getByRole('button', { name: 'Upload statement' }).click();
    await expectText('#up-statement-result', 'Imported Kontoauszug März.sta as statement');
    const shown = await page.innerText('#up-statement-result');
    expect(shown).toContain('Credits (EUR)\n55.629,31\u00a0€');
    expect(shown).toContain('Debits (EUR)\n12,34\u00a0€');
    expect(shown).toContain('checked and agreeing in 1 of 1');
    const [stored] = await db.sql<{ credits: string; debits: string }[]>`
      select sum(l.amount_cents) filter (where l.direction = 'credit')::text as credits, sum(l.amount_cents) filter (where l.direction = 'debit')::text as debits
      from bank_statements b join statement_lines l on l.statement_id = b.id where b.file_name = 'Kontoauszug März.sta'`;
    expect(stored).toEqual({ credits: '5562931', debits: '1234' });
    expect(await count()).toBe(before + 1);
    // The views reloaded behind the upload: the overview's last import is now this one, whose balances were checked.
    await waitFor('the overview reloaded', async () => ((await page.textContent('#overview-body'))?.includes('balances not checked') ? undefined : true), 10_000);
    await shot('9-upload-statement');
    expect(await axe('main')).toEqual([]);

    const unbalanced = mt940Statement('32', [{ dc: 'C', cents: 1_000n, ref: 'X1' }], 100_000n + 850n);
    await page.getByLabel('Statement file').setInputFiles({ name: 'unbalanced.sta', mimeType: 'application/octet-stream', buffer: unbalanced });
    await page.getByRole('button', { name: 'Upload statement' }).click();
    await expectText('#up-statement-result', 'unbalanced.sta was refused: nothing was stored.');
    expect(await page.innerText('#up-statement-result .upload-reason')).toMatch(/^MT940 message 1 \(:28C: 32\) does not balance: opening 1000\.00 .*\(difference -1\.50\)$/);
    expect(await count()).toBe(before + 1);

    await page.getByLabel('Payout report file').setInputFiles({ name: 'notes.csv', mimeType: 'text/csv', buffer: Buffer.from('Order No;Doc No\r\nORD-1;INV-1\r\n') });
    await page.getByRole('button', { name: 'Upload payout report' }).click();
    await expectText('#up-report-result', 'notes.csv was refused: nothing was stored.');
    expect(await page.innerText('#up-report-result .upload-reason')).toMatch(/^missing required columns 'Doc Type', .* \(header on line 1\)$/);

    // Far over the limit, so most of it is still on its way when the 413 goes out: the answer is read, not a reset.
    const big = Buffer.concat([statement, Buffer.alloc(32 * UPLOAD_LIMIT, 0x20)]);
    await page.getByLabel('Statement file').setInputFiles({ name: 'big.sta', mimeType: 'application/octet-stream', buffer: big });
    await page.getByRole('button', { name: 'Upload statement' }).click();
    await expectText('#up-statement-result', 'big.sta was not imported: nothing was stored.');
    expect(await page.innerText('#up-statement-result .upload-reason')).toMatch(new RegExp(`^big\\.sta: larger than OPERATOR_UPLOAD_MAX_BYTES \\(${UPLOAD_LIMIT} bytes\\)`));
    expect(await count()).toBe(before + 1);
    await shot('9b-upload-refused');
    expect(await axe('main')).toEqual([]);
  });

  it('stays readable at 200 % zoom (640 CSS px wide), loads nothing from elsewhere and breaks no CSP rule', async () => {
    await page.setViewportSize({ width: 640, height: 450 });
    for (const view of ['overview', 'discrepancies', 'invoices', 'payouts', 'upload']) {
      await page.click(`a[data-view="${view}"]`);
      await page.waitForTimeout(300);
      // The page itself never scrolls sideways; wide tables scroll inside their own box.
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth + 1'), view).toBe(true);
      await shot(`6-zoom-200-${view}`);
    }
    const origin = new URL(stack.daemon.url).origin;
    expect(requested.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:'))).toEqual([]);
    expect(consoleErrors.filter((e) => /Content Security Policy|Refused/i.test(e))).toEqual([]);
    // The page names its icon: no request for /favicon.ico, which would be a 404 in the console.
    expect(consoleErrors.filter((e) => /favicon|404/i.test(e))).toEqual([]);
  });
});

describe.skipIf(!existsSync('/usr/bin/soffice'))('the downloads in LibreOffice Calc', () => {
  it('opens the CSV as UTF-8 (the BOM\'s charset): every row, amounts as numbers, Müller intact, the formula as text', async () => {
    // LibreOffice 7.4's headless import without options reads CSV as Windows-1252 whatever the BOM
    // (ï»¿ and MÃ¼ller, seen with this Debian build); its import dialog and Excel take the charset
    // from the BOM. So the CSV is opened with the options that dialog shows for it: comma, double
    // quote, UTF-8 (76), from line 1, and otherwise Calc's defaults (number detection on).
    const rows = await readFods(await convertToFods(downloads.csv, ARTEFACTS, 'CSV:44,34,76,1'));
    await checkSheet(rows, 'id');
  }, 180_000);

  it('opens the XLSX with the default import the same way', async () => {
    const out = path.join(ARTEFACTS, 'xlsx');
    await mkdir(out, { recursive: true });
    const rows = await readFods(await convertToFods(downloads.xlsx, out));
    await checkSheet(rows, 'ID');
  }, 180_000);
});

async function checkSheet(rows: Awaited<ReturnType<typeof readFods>>, idHeader: string): Promise<void> {
  const [count] = await db.sql<{ n: number }[]>`select count(*)::int as n from discrepancies where environment = 'sandbox'`;
  expect(rows.map((r) => r[0]?.text)[0]).toBe(idHeader);
  expect(rows.length).toBe(count!.n + 1);
  const col = (name: string) => DISCREPANCY_COLUMNS.indexOf(name as (typeof DISCREPANCY_COLUMNS)[number]);
  const data = rows.slice(1);
  expect(data.every((r) => r[col('id')]?.type === 'float')).toBe(true);
  const ids = data.map((r) => Number(r[col('id')]?.value));
  expect(ids).toEqual([...ids].sort((a, b) => a - b));
  const refs = data.map((r) => r[col('external_reference_id')]!);
  expect(refs.find((c) => c.text === UMLAUT), 'Müller intact').toBeDefined();
  const hostile = refs.find((c) => c.text.includes('HYPERLINK'))!;
  expect(hostile).toMatchObject({ type: 'string', formula: undefined, text: `'${HOSTILE}` });
  expect(data.flat().some((c) => c.formula !== undefined)).toBe(false);
  const amounts = data.map((r) => r[col('amount')]!).filter((c) => c && c.text !== '');
  expect(amounts.length).toBeGreaterThan(0);
  for (const a of amounts) expect(a.type, a.text).toBe('float');
  const [stake] = await db.sql<{ cents: string }[]>`
    select coalesce(sum(case kind when 'payout_amount_mismatch' then abs(expected::bigint - observed::bigint)
      when 'payout_not_on_statement' then expected::bigint else observed::bigint end), 0)::text as cents
    from discrepancies where environment = 'sandbox' and kind in ('payout_amount_mismatch', 'payout_not_on_statement', 'payout_cancelled_but_credited', 'statement_credit_without_payout')`;
  const sum = amounts.reduce((n, a) => n + Math.round(Number(a.value) * 100), 0);
  expect(sum).toBe(Number(stake!.cents));
}

/** Cents as a German reader writes euros, by hand: 5562931 -> '55.629,31 €' (no-break space before the sign). */
function germanEuro(cents: string): string {
  const negative = cents.startsWith('-');
  const digits = cents.replace('-', '').padStart(3, '0');
  const whole = digits.slice(0, -2).replace(/^0+(?=\d)/, '').replace(/\B(?=(\d{3})+$)/g, '.');
  return `${negative ? '-' : ''}${whole},${digits.slice(-2)}\u00a0€`;
}

/** An ISO instant as the page shows it under de-DE in Europe/Berlin ('04.03.2026, 11:15 MEZ'). */
function berlin(iso: string): string {
  return new Intl.DateTimeFormat('de-DE', {
    timeZone: 'Europe/Berlin', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', timeZoneName: 'short',
  }).format(new Date(iso));
}

async function expectText(selector: string, text: string): Promise<void> {
  await waitFor(`'${text}' in ${selector}`, async () => ((await page.locator(selector).first().innerText()).includes(text) ? true : undefined), 10_000);
}
